package agent

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

func receiveOne(t *testing.T, ch <-chan swim.Message) swim.Message {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message")
	}
	return swim.Message{}
}

// A 300 KiB message (about 230 frames) arrives whole and in order over a
// stream, and SendReliable returns once the receiver acknowledged it.
func TestSendReliableLargeMessage(t *testing.T) {
	as := group(t, 2, Config{})
	msgs, cancel := as[1].Receive(4)
	defer cancel()
	data := make([]byte, 300<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	require.NoError(t, as[0].SendReliable(ctx, as[1].Self().ID, data))
	assert.Equal(t, uint64(1), as[0].Stats().ReliableSent)
	m := receiveOne(t, msgs)
	assert.Equal(t, as[0].Self().ID, m.From)
	assert.True(t, bytes.Equal(data, m.Data), "the message changed on the way")
	assert.False(t, m.Broadcast)
	assert.Equal(t, uint64(1), as[1].Stats().ReliableReceived)

	require.NoError(t, as[0].SendReliable(ctx, as[1].Self().ID, []byte{7}))
	assert.Equal(t, []byte{7}, receiveOne(t, msgs).Data)

	assert.ErrorIs(t, as[0].SendReliable(ctx, "nobody", data), swim.ErrUnknownMember)
	assert.ErrorIs(t, as[0].SendReliable(ctx, as[1].Self().ID, nil), swim.ErrMessageSize)
	assert.ErrorIs(t, as[0].SendReliable(ctx, as[1].Self().ID, make([]byte, DefaultMaxReliableSize+1)), swim.ErrMessageSize)
	noStream := start(t, Config{DisableStream: true})
	assert.ErrorIs(t, noStream.SendReliableToAddress(ctx, as[1].Self().Addr, data), ErrNoStream)
}

// Messages to an address whose agent is not a member of this one's group:
// both reach it, and neither side learns of the other (no view is asked
// or sent). Each is in a group of two, so that its protocol periods,
// counted by its probes, tell when a view request would have come.
func TestSendToNonMemberAddress(t *testing.T) {
	a := group(t, 2, Config{})[0]
	outsider := group(t, 2, Config{})[0]
	asked := a.Stats().Protocol.ViewRequests + outsider.Stats().Protocol.ViewRequests
	msgs, cancel := outsider.Receive(4)
	defer cancel()
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	require.NoError(t, a.SendReliableToAddress(ctx, outsider.Self().Addr, bytes.Repeat([]byte("r"), 5000)))
	assert.Len(t, receiveOne(t, msgs).Data, 5000)
	require.NoError(t, a.SendToAddress(ctx, outsider.Self().Addr, []byte("datagram")))
	m := receiveOne(t, msgs)
	assert.Equal(t, []byte("datagram"), m.Data)
	assert.Equal(t, a.Self().ID, m.From)
	periodsFrom(t, a, outsider)(3) // a view request would have come
	assert.Len(t, outsider.Members(), 2)
	assert.Len(t, a.Members(), 2)
	assert.Equal(t, asked, a.Stats().Protocol.ViewRequests+outsider.Stats().Protocol.ViewRequests)

	assert.ErrorIs(t, a.SendToAddress(ctx, outsider.Self().Addr, make([]byte, 1400)), swim.ErrMessageSize)
	assert.ErrorContains(t, a.SendToAddress(ctx, "outsider:1", []byte("x")), "want ip:port")
	// Nothing listens: the dial fails and says where.
	assert.ErrorContains(t, a.SendReliableToAddress(ctx, "127.0.0.1:1", []byte("x")), "reliable message to 127.0.0.1:1")
}

// Messages to an address no agent can be at fail at once and say why:
// 0.0.0.0 with the port of an agent on this host reached it (Linux sends
// to the wildcard address locally), and a multicast or broadcast address
// would reach every host there.
func TestSendToAddressNoAgentCanBeAt(t *testing.T) {
	a := start(t, Config{})
	other := start(t, Config{})
	msgs, cancel := other.Receive(4)
	defer cancel()
	port := netip.MustParseAddrPort(other.Self().Addr).Port()
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	for addr, want := range map[string]string{
		fmt.Sprintf("0.0.0.0:%d", port): "names no host or port",
		fmt.Sprintf("[::]:%d", port):    "names no host or port",
		"127.0.0.1:0":                   "names no host or port",
		"224.0.0.1:7946":                "a multicast address",
		"255.255.255.255:7946":          "the broadcast address",
	} {
		assert.ErrorContains(t, a.SendToAddress(ctx, addr, []byte("x")), want, addr)
		assert.ErrorContains(t, a.SendReliableToAddress(ctx, addr, []byte("x")), want, addr)
	}
	// The sends return once done: nothing left.
	assert.Zero(t, a.Stats().PacketsSent+a.Stats().StreamsOut, "something was sent")
	// A datagram sent after them reaches the agent first: none of them
	// did before it.
	require.NoError(t, a.SendToAddress(ctx, other.Self().Addr, []byte("after")))
	assert.Equal(t, []byte("after"), receiveOne(t, msgs).Data)
	assert.Empty(t, msgs, "a message reached the agent through the wildcard address")
}

// Hostile reliable messages are cut and never delivered: a total above
// MaxReliableSize, a gap, a frame from another sender, a message cut
// short; a sender whose message exceeds the receiver's bound gets no
// acknowledgement.
func TestReliableHostileStreams(t *testing.T) {
	small := start(t, Config{MaxReliableSize: 10000, StreamTimeout: time.Second})
	msgs, cancel := small.Receive(4)
	defer cancel()
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: mustKeyring(t)}})
	require.NoError(t, err)
	from := swim.Node{ID: "x", Addr: "127.0.0.1:9"}
	frame := func(id swim.ID, user string, off, total uint32) []byte {
		b, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgUser, From: swim.Node{ID: id, Addr: from.Addr}, User: []byte(user), Part: swim.Part{Offset: off, Total: total}})
		require.NoError(t, err)
		return b
	}
	send := func(frames ...[]byte) error {
		c, err := transport.DialStream(context.Background(), netip.MustParseAddrPort(small.Self().Addr), transport.StreamConfig{Timeout: 3 * time.Second})
		require.NoError(t, err)
		defer c.Close()
		for _, f := range frames {
			if err := c.WriteFrame(f); err != nil {
				return err
			}
		}
		_, err = c.ReadFrame()
		return err
	}
	st := small.Stats()
	assert.Error(t, send(frame("x", "a", 0, 100<<20)), "a 100 MiB claim was answered")
	assert.Error(t, send(frame("x", "ab", 0, 6), frame("x", "ef", 4, 6)), "a gap was answered")
	assert.Error(t, send(frame("x", "ab", 0, 4), frame("y", "cd", 2, 4)), "another sender's frame was answered")
	assert.Error(t, send(frame("x", "ab", 0, 4), frame("x", "cdef", 2, 4)), "an overlong frame was answered")
	assert.Error(t, send(frame("x", "ab", 0, 9999)), "a message cut short was answered")
	require.NoError(t, send(frame("x", "ab", 0, 4), frame("x", "cd", 2, 4)), "a good message")
	assert.Equal(t, []byte("abcd"), receiveOne(t, msgs).Data)
	require.Eventually(t, func() bool {
		s := small.Stats()
		return s.StreamOversize == st.StreamOversize+1 && s.StreamDecodeErrors == st.StreamDecodeErrors+3
	}, 3*time.Second, 10*time.Millisecond)
	select {
	case m := <-msgs:
		t.Fatalf("a hostile message was delivered: %q", m.Data)
	default:
	}

	big := start(t, Config{})
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	assert.ErrorContains(t, big.SendReliableToAddress(ctx, small.Self().Addr, make([]byte, 20000)), "reliable message to "+small.Self().Addr) // cut: no ack, or a broken pipe
	assert.Zero(t, big.Stats().ReliableSent)
}

// BenchmarkSendReliable sends 1 MiB messages between two encrypted agents
// on loopback, each acknowledged before the next (SetBytes: MB/s is the
// goodput).
func BenchmarkSendReliable(b *testing.B) {
	as := group(b, 2, Config{})
	msgs, cancel := as[1].Receive(4)
	defer cancel()
	data := make([]byte, 1<<20)
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := as[0].SendReliable(ctx, as[1].Self().ID, data); err != nil {
			b.Fatal(err)
		}
		<-msgs
	}
}

// A MaxReliableSize whose frames exceed MaxStreamBytes could never be
// sent nor received: Start refuses it, naming both fields.
func TestMaxReliableSizeOverStreamBudget(t *testing.T) {
	_, err := Start(context.Background(), Config{Plain: true, MaxReliableSize: 16 << 20})
	require.Error(t, err)
	assert.ErrorContains(t, err, "MaxReliableSize")
	assert.ErrorContains(t, err, "MaxStreamBytes")
	_, err = Start(context.Background(), Config{Plain: true, MaxReliableSize: 1 << 20, MaxStreamBytes: 1 << 20})
	require.Error(t, err)
	assert.ErrorContains(t, err, "MaxReliableSize")
}

// The messages waiting unread in a Receive channel hold at most
// MaxReceiveBytes: with 300 KiB, three unread reliable messages of 100 KiB
// fill it and the next seven are dropped and counted, though the channel
// has room for 256 messages; once read, the channel takes more. A single
// message larger than the bound reaches an empty channel.
func TestReceiveBoundedInBytes(t *testing.T) {
	as := group(t, 2, Config{MaxReceiveBytes: 300 << 10})
	msgs, cancel := as[1].Receive(0)
	defer cancel()
	ctx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	send := func(k, size int) {
		t.Helper()
		for range k {
			require.NoError(t, as[0].SendReliable(ctx, as[1].Self().ID, make([]byte, size)))
		}
	}
	send(10, 100<<10)
	require.Eventually(t, func() bool { return as[1].Stats().ReliableReceived == 10 }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return as[1].Stats().MessagesDropped == 7 }, 5*time.Second, 10*time.Millisecond)
	assert.Len(t, msgs, 3)
	for range 3 {
		assert.Len(t, receiveOne(t, msgs).Data, 100<<10)
	}
	send(2, 100<<10)
	assert.Len(t, receiveOne(t, msgs).Data, 100<<10)
	assert.Len(t, receiveOne(t, msgs).Data, 100<<10)
	send(1, 400<<10)
	assert.Len(t, receiveOne(t, msgs).Data, 400<<10)
	assert.Equal(t, uint64(7), as[1].Stats().MessagesDropped)

	_, err := Start(context.Background(), Config{Plain: true, MaxReceiveBytes: -1})
	assert.ErrorContains(t, err, "MaxReceiveBytes -1 is negative")
}

// With BlockingMessages a message over MaxReceiveBytes waits until the
// subscriber reads, and none is dropped.
func TestReceiveBytesBlocking(t *testing.T) {
	as := group(t, 2, Config{MaxReceiveBytes: 150 << 10, BlockingMessages: true})
	msgs, cancel := as[1].Receive(0)
	defer cancel()
	ctx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	errs := make(chan error, 2)
	go func() {
		for range 2 {
			errs <- as[0].SendReliable(ctx, as[1].Self().ID, make([]byte, 100<<10))
		}
	}()
	require.Eventually(t, func() bool { return len(msgs) == 1 }, 5*time.Second, 10*time.Millisecond)
	// The agent counts a message received whole just before it delivers
	// it: once it counted the second, it is delivering it.
	require.Eventually(t, func() bool { return as[1].Stats().ReliableReceived == 2 }, 10*time.Second, time.Millisecond)
	assert.Len(t, msgs, 1, "the second message waits")
	receiveOne(t, msgs)
	receiveOne(t, msgs)
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	assert.Zero(t, as[1].Stats().MessagesDropped)
}
