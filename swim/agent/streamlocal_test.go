package agent

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// A stream ping this agent cannot send (every dialling slot taken, or an
// address it cannot dial) is not reported to the state machine as failed:
// swim.Member.StreamFailed is evidence that nothing listens at the target
// (the detector gate then starts its retry at once rather than at the end
// of the period, and the retry suspects as soon as every intermediate has
// nacked), and a local shortage says nothing about the target. It is
// counted in Stats.StreamPingsSkipped; the probe waits for its period, as
// without the stream path. A ping refused by the target is reported.
// A ping the agent had no slot for must not be reported as StreamFailed.
func TestStreamPingNotSentIsNotFailure(t *testing.T) {
	var failed atomic.Int64
	a := start(t, Config{Plain: true, streamFailed: func(swim.ID, uint32) { failed.Add(1) }})
	// A port with nothing listening: a dial there is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	require.NoError(t, l.Close())
	ping := func(addr string, seq uint32) {
		require.NoError(t, a.do(context.Background(), func() {
			a.startStreamProbe(swim.StreamProbe{To: swim.Node{ID: "b", Addr: addr}, Seq: seq, Deadline: a.now() + 2*time.Second})
		}))
	}
	for range cap(a.stream.pings.slots) {
		a.stream.pings.slots <- struct{}{}
	}
	ping(closed, 1)
	ping("not an address", 2)
	for range cap(a.stream.pings.slots) {
		<-a.stream.pings.slots
	}
	assert.Zero(t, failed.Load(), "a ping never sent reported as failed")
	assert.Equal(t, uint64(2), a.Stats().StreamPingsSkipped)
	ping(closed, 3)
	require.Eventually(t, func() bool { return failed.Load() == 1 }, 5*time.Second, 5*time.Millisecond, "a refused ping is reported")
	assert.Equal(t, uint64(2), a.Stats().StreamPingsSkipped)
}

// A stream ping that connected but got no usable ack (the listener closed
// the stream, answered garbage, or answered under a key this agent does
// not hold) is not reported as failed either: something listens at the
// target's address, which is not the "nothing listens there" that
// StreamFailed tells the detector gate. The probe ends with its period.
func TestStreamPingAnsweredBadlyIsNotFailure(t *testing.T) {
	var failed atomic.Int64
	a := start(t, Config{Plain: true, streamFailed: func(swim.ID, uint32) { failed.Add(1) }})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for i := 0; ; i++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if i%2 == 0 {
				_, _ = c.Write([]byte{0, 0, 0, 4, 'j', 'u', 'n', 'k'}) // a frame that is no packet
			}
			_ = c.Close()
		}
	}()
	for seq := uint32(1); seq <= 2; seq++ {
		require.NoError(t, a.do(context.Background(), func() {
			a.startStreamProbe(swim.StreamProbe{To: swim.Node{ID: "b", Addr: l.Addr().String()}, Seq: seq, Deadline: a.now() + 2*time.Second})
		}))
	}
	// Once both have ended (their dialling slots are free), a ping to a
	// port where nothing listens: its result is queued after theirs, and
	// it alone is reported.
	require.Eventually(t, func() bool { return a.stream.pings.open() == 0 }, 5*time.Second, 5*time.Millisecond)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := closed.Addr().String()
	require.NoError(t, closed.Close())
	require.NoError(t, a.do(context.Background(), func() {
		a.startStreamProbe(swim.StreamProbe{To: swim.Node{ID: "b", Addr: addr}, Seq: 3, Deadline: a.now() + 2*time.Second})
	}))
	require.Eventually(t, func() bool { return failed.Load() >= 1 }, 5*time.Second, 5*time.Millisecond, "a refused ping is reported")
	assert.Equal(t, int64(1), failed.Load(), "a ping that connected reported as failed")
}

// A stream ping's ack is taken only from its target, for its sequence
// number (as a datagram ack only from the target or a relay asked): an
// ack on the stream from another member ID, for another ping, or a nack
// is no answer, and the probe gets no stream-only success from it.
func TestStreamAckOnlyFromTheTarget(t *testing.T) {
	a := start(t, Config{Plain: true})
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	b, c := swim.Node{ID: "b"}, swim.Node{ID: "c"}
	for name, tc := range map[string]struct {
		ack  swim.Packet
		want bool
	}{
		"the target":     {swim.Packet{Kind: swim.MsgAck, From: b, To: a.Self(), Ack: swim.Ack{Seq: 7}}, true},
		"another member": {swim.Packet{Kind: swim.MsgAck, From: c, To: a.Self(), Ack: swim.Ack{Seq: 7}}, false},
		"another ping":   {swim.Packet{Kind: swim.MsgAck, From: b, To: a.Self(), Ack: swim.Ack{Seq: 8}}, false},
		"a nack":         {swim.Packet{Kind: swim.MsgNack, From: b, To: a.Self(), Nack: swim.Nack{Seq: 7}}, false},
	} {
		ackFrame, _, err := codec.Encode(&tc.ack)
		require.NoError(t, err, name)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		go func() {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := transport.ReadFrame(conn, 1<<16); err == nil {
				if f, err := transport.AppendFrame(nil, ackFrame); err == nil {
					_, _ = conn.Write(f)
				}
			}
		}()
		sp := swim.StreamProbe{To: swim.Node{ID: "b", Addr: l.Addr().String()}, Seq: 7, Deadline: a.now() + 2*time.Second}
		ping, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgPing, From: a.Self(), To: sp.To, Ping: swim.Ping{Seq: 7}})
		require.NoError(t, err)
		ack, connected := a.streamPing(netip.MustParseAddrPort(sp.To.Addr), sp, ping, time.Now().Add(2*time.Second))
		assert.True(t, connected, name)
		assert.Equal(t, tc.want, ack != nil, name)
		_ = l.Close()
	}
}
