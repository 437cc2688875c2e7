package transport

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func listen(t *testing.T, cfg Config) *UDP {
	t.Helper()
	u, err := Listen(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = u.Close() })
	return u
}

func recv(t *testing.T, u *UDP) Packet {
	t.Helper()
	select {
	case p, ok := <-u.Packets():
		require.True(t, ok, "channel closed")
		return p
	case <-time.After(5 * time.Second):
		t.Fatal("no packet within 5 s")
	}
	return Packet{}
}

func TestSendReceive(t *testing.T) {
	a, b := listen(t, Config{}), listen(t, Config{})
	assert.True(t, a.LocalAddr().Addr().IsLoopback())
	assert.NotZero(t, a.LocalAddr().Port())
	assert.Equal(t, DefaultMaxPacketSize, a.MaxPacketSize())

	require.NoError(t, a.Send(b.LocalAddr(), []byte("ping")))
	p := recv(t, b)
	assert.Equal(t, "ping", string(p.Data))
	assert.Equal(t, a.LocalAddr(), p.From)
	assert.False(t, p.At.IsZero())

	full := bytes.Repeat([]byte{1}, DefaultMaxPacketSize)
	require.NoError(t, b.Send(a.LocalAddr(), full))
	assert.Equal(t, full, recv(t, a).Data)

	s := a.Stats()
	assert.Equal(t, uint64(1), s.PacketsSent)
	assert.Equal(t, uint64(4), s.BytesSent)
	assert.Equal(t, uint64(1), s.PacketsReceived)
	assert.Equal(t, uint64(DefaultMaxPacketSize), s.BytesReceived)
}

func TestSendTooLarge(t *testing.T) {
	a := listen(t, Config{MaxPacketSize: 100})
	err := a.Send(a.LocalAddr(), make([]byte, 101))
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.Zero(t, a.Stats().PacketsSent)
}

func TestOversizeDropped(t *testing.T) {
	small := listen(t, Config{MaxPacketSize: 100})
	big := listen(t, Config{MaxPacketSize: 1000})
	require.NoError(t, big.Send(small.LocalAddr(), make([]byte, 101)))
	require.NoError(t, big.Send(small.LocalAddr(), make([]byte, 100)))
	assert.Len(t, recv(t, small).Data, 100)
	assert.Equal(t, uint64(1), small.Stats().DroppedOversize)
}

func TestQueueFullDropped(t *testing.T) {
	a := listen(t, Config{QueueLen: 1})
	b := listen(t, Config{})
	for i := 0; i < 5; i++ {
		require.NoError(t, b.Send(a.LocalAddr(), []byte{byte(i)}))
	}
	require.Eventually(t, func() bool {
		s := a.Stats()
		return s.PacketsReceived == 5 && s.DroppedQueueFull == 4
	}, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, []byte{0}, recv(t, a).Data)
}

func TestCloseClosesChannel(t *testing.T) {
	a, err := Listen(Config{})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	require.NoError(t, a.Close(), "second Close is a no-op")
	_, ok := <-a.Packets()
	assert.False(t, ok)
	assert.Error(t, a.Send(netip.MustParseAddrPort("127.0.0.1:9"), []byte("x")))
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{MaxPacketSize: 10},
		{MaxPacketSize: 70000},
		{QueueLen: -1},
		{Bind: "localhost"},
		{Bind: "127.0.0.1:99999"},
	} {
		_, err := Listen(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
	a := listen(t, Config{})
	_, err := Listen(Config{Bind: a.LocalAddr().String()})
	assert.ErrorContains(t, err, "address already in use")
}
