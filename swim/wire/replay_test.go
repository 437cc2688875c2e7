package wire

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// fakeClock is a settable clock for ReplayConfig.Now.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func replayCodec(t *testing.T, kr *Keyring, clk *fakeClock, mut func(*ReplayConfig)) *Codec {
	t.Helper()
	cfg := ReplayConfig{Now: clk.now}
	if mut != nil {
		mut(&cfg)
	}
	c, err := NewCodec(CodecConfig{Security: &Security{Keyring: kr}, Replay: cfg})
	require.NoError(t, err)
	return c
}

func pingFrom(id string, seq uint32) *swim.Packet {
	return &swim.Packet{Kind: swim.MsgPing, From: node(id), To: node("r"), Ping: swim.Ping{Seq: seq}}
}

func seal(t *testing.T, c *Codec, p *swim.Packet) []byte {
	t.Helper()
	b, _, err := c.Encode(p)
	require.NoError(t, err)
	return b
}

// A sealed packet is accepted once; its replay is refused with ErrReplay,
// and packets overtaken by up to Window are still accepted once.
func TestReplayRefusedOnce(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s, r := replayCodec(t, kr, clk, nil), replayCodec(t, kr, clk, nil)
	clk.t = clk.t.Add(time.Millisecond)
	p1 := seal(t, s, pingFrom("s", 1))
	p2 := seal(t, s, pingFrom("s", 2)) // same clock reading: stamped one ns later
	_, err := r.Decode(p2)
	require.NoError(t, err)
	_, err = r.Decode(p1)
	require.NoError(t, err, "reordered within the window")
	for _, p := range [][]byte{p1, p2} {
		_, err = r.Decode(p)
		assert.ErrorIs(t, err, ErrReplay)
	}
	// A packet more than Window below the sender's newest is refused.
	old := seal(t, s, pingFrom("s", 3))
	clk.t = clk.t.Add(3 * time.Second)
	_, err = r.Decode(seal(t, s, pingFrom("s", 4)))
	require.NoError(t, err)
	_, err = r.Decode(old)
	assert.ErrorIs(t, err, ErrReplay)
	// Windows are per sender: another sender's packets are not affected.
	s2 := replayCodec(t, kr, clk, nil)
	_, err = r.Decode(seal(t, s2, pingFrom("t", 1)))
	assert.NoError(t, err)
}

// Packets captured in an earlier run are refused after a restart of the
// receiver (they were sealed before it started) and after a restart of the
// sender (they are below its new packets), whatever they carry.
func TestReplayAcrossRestart(t *testing.T) {
	kr, _ := NewKeyring(key(2, 32))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s, r := replayCodec(t, kr, clk, nil), replayCodec(t, kr, clk, nil)
	var captured [][]byte
	for i := range 10 {
		clk.t = clk.t.Add(100 * time.Millisecond)
		b := seal(t, s, pingFrom("s", uint32(i)))
		_, err := r.Decode(b)
		require.NoError(t, err)
		captured = append(captured, b)
	}
	// The receiver restarts one second later: everything captured is
	// refused, fresh packets are accepted.
	clk.t = clk.t.Add(time.Second)
	r = replayCodec(t, kr, clk, nil)
	for _, b := range captured {
		_, err := r.Decode(b)
		assert.ErrorIs(t, err, ErrReplay)
	}
	clk.t = clk.t.Add(time.Millisecond)
	_, err := r.Decode(seal(t, s, pingFrom("s", 99)))
	require.NoError(t, err)
	// The sender restarts too (a new codec, its stamps from the clock): its
	// new packets are accepted, the old ones still refused.
	clk.t = clk.t.Add(5 * time.Second)
	s = replayCodec(t, kr, clk, nil)
	_, err = r.Decode(seal(t, s, pingFrom("s", 0)))
	require.NoError(t, err)
	for _, b := range captured {
		_, err := r.Decode(b)
		assert.ErrorIs(t, err, ErrReplay)
	}
}

// Timestamps further than MaxSkew from the receiver's clock are refused.
func TestReplayClockSkew(t *testing.T) {
	kr, _ := NewKeyring(key(3, 16))
	sclk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	rclk := &fakeClock{t: sclk.t.Add(-time.Minute)}
	s, r := replayCodec(t, kr, sclk, nil), replayCodec(t, kr, rclk, nil)
	_, err := r.Decode(seal(t, s, pingFrom("s", 1)))
	assert.ErrorIs(t, err, ErrReplay, "a minute in the future")
	rclk.t = sclk.t.Add(40 * time.Second)
	_, err = r.Decode(seal(t, s, pingFrom("s", 2)))
	assert.ErrorIs(t, err, ErrReplay, "40 s old")
	rclk.t = sclk.t.Add(10 * time.Second)
	_, err = r.Decode(seal(t, s, pingFrom("s", 3)))
	assert.NoError(t, err, "10 s old, within MaxSkew")
}

// Memory stays bounded: MaxSenders windows, each a fixed ring; a sender
// reordering more packets than the ring remembers never gets a duplicate
// through.
func TestReplayStateBounded(t *testing.T) {
	kr, _ := NewKeyring(key(4, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := replayCodec(t, kr, clk, func(c *ReplayConfig) { c.MaxSenders = 4 })
	s := replayCodec(t, kr, clk, nil)
	clk.t = clk.t.Add(time.Millisecond)
	for i := range 10 {
		_, err := r.Decode(seal(t, s, pingFrom(fmt.Sprint("s", i), 1)))
		require.NoError(t, err)
	}
	assert.Len(t, r.replay.senders, 4)

	var pk [][]byte
	for i := range 3 * replayRemembered {
		pk = append(pk, seal(t, s, pingFrom("x", uint32(i))))
	}
	// Newest first, then all of them again in order: each accepted at most
	// once.
	accepted := 0
	for i := len(pk) - 1; i >= 0; i-- {
		if _, err := r.Decode(pk[i]); err == nil {
			accepted++
		}
	}
	for _, b := range pk {
		_, err := r.Decode(b)
		assert.ErrorIs(t, err, ErrReplay)
	}
	// The newest, the ring's worth below it, and one more: accepting it
	// overwrote the ring's largest entry, which became the floor, so
	// everything older is refused from then on.
	assert.Equal(t, replayRemembered+2, accepted)
}
