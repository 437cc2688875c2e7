package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// Four ports of a hostile host each hold 4 of x's view streams: the view
// and view request of an exchange (what x sends a member whose pull
// carried another digest), accepted and never answered, each held until
// readAnswer's idle limit (1 s). Views have their own 16 slots, so a
// stream ping to b still goes (issue 27, session 23). Before, views and
// stream pings shared 16 slots: the ping was skipped
// (StreamPingsSkipped 1), and a member probed only over the stream
// would have been suspected.
func TestHeldViewStreamsLeaveStreamPings(t *testing.T) {
	cfg := Config{Plain: true, Protocol: fast(), LeaveTimeout: new(100 * time.Millisecond)}
	bc := cfg
	bc.Seed = 1
	b := start(t, bc)
	xc := cfg
	xc.Seed = 2
	x := start(t, xc)
	var seeds []*silentSeed
	for range 4 {
		seeds = append(seeds, newSilentSeed(t))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, x.do(ctx, func() {
		for i, s := range seeds {
			to := swim.Node{ID: swim.ID(fmt.Sprintf("h%d", i)), Addr: s.addr.String()}
			for range streamOutPerAddr + 1 { // the last one over the address's bound: datagrams
				view := []swim.Packet{{Kind: swim.MsgSync, From: x.self, To: to}, {Kind: swim.MsgSync, From: x.self, To: to},
					{Kind: swim.MsgJoin, From: x.self, To: to}}
				x.sendViewStream(s.addr, view, false)
			}
		}
	}))
	require.Eventually(t, func() bool {
		n := 0
		for _, s := range seeds {
			_, _, a, _, _, _ := s.snapshot()
			n += a
		}
		return n == 4*streamOutPerAddr
	}, 5*time.Second, time.Millisecond, "the view streams accepted")
	held := x.stream.views.open()
	require.NoError(t, x.do(ctx, func() {
		x.startStreamProbe(swim.StreamProbe{To: b.Self(), Seq: 1, Deadline: x.now() + 2*time.Second})
	}))
	require.Eventually(t, func() bool { return b.Stats().StreamsIn > 0 }, 5*time.Second, time.Millisecond, "the stream ping reached b")
	st := x.Stats()
	t.Logf("view streams held %d; x: StreamPingsSkipped %d, StreamsAddrBusy %d, StreamSyncFallbacks %d; b: StreamsIn %d",
		held, st.StreamPingsSkipped, st.StreamsAddrBusy, st.StreamSyncFallbacks, b.Stats().StreamsIn)
	assert.Equal(t, streamOutMax, held, "4 per address")
	assert.Zero(t, st.StreamPingsSkipped)
	assert.Equal(t, uint64(4), st.StreamsAddrBusy, "one view per address over its bound")
}

// hostilePuller is a hostile member: a UDP socket that acks every ping
// (its join challenge, the probes) and sends a pull with a digest unlike
// any view's every 30 ms, and on the same port a TCP listener that
// accepts the views and view requests this draws and never answers them
// (a silent slowSeed).
type hostilePuller struct {
	*attacker
	seed *slowSeed
}

func newHostilePuller(t *testing.T, codec *wire.Codec, id swim.ID) *hostilePuller {
	t.Helper()
	for try := 0; ; try++ {
		a := newAttacker(t, codec, id)
		ln, err := net.Listen("tcp", a.self.Addr)
		if err != nil && try < 10 {
			continue // the port is taken on TCP: another pair
		}
		require.NoError(t, err)
		return &hostilePuller{attacker: a, seed: newSlowSeedOn(t, ln, 0, false)}
	}
}

// run pulls from x until stop is closed.
func (h *hostilePuller) run(x swim.Node, stop <-chan struct{}) {
	self := swim.Update{Kind: swim.UpdateAlive, Node: h.self, From: h.self.ID}
	_, _ = h.write(x, swim.Packet{Kind: swim.MsgJoin, Updates: []swim.Update{self}})
	tick := time.NewTicker(30 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case p := <-h.Packets():
			if pk, err := h.codec.Decode(p.Data); err == nil && pk.Kind == swim.MsgPing {
				_, _ = h.write(pk.From, swim.Packet{Kind: swim.MsgAck, Ack: swim.Ack{Seq: pk.Ping.Seq}})
			}
		case <-tick.C:
			_, _ = h.write(x, swim.Packet{Kind: swim.MsgJoin, Updates: []swim.Update{self},
				Digest: swim.ViewDigest{Members: 1000, Hash: 1}})
		}
	}
}

// Four hostile members of x's group, four ports of one host, pull x's
// view every 30 ms with a digest unlike x's: x answers each (two per
// sender per ProbeInterval, swim.DefaultPullsPerSender) with its view,
// larger than a datagram, and a request for theirs, over a stream that
// their TCP listener accepts and never answers, so they hold x's view
// streams, each until readAnswer's idle limit (1 s). Meanwhile every
// datagram to b is dropped, so x reaches b only with its stream pings.
// Views have their own slots: no stream ping is skipped, b answers
// them, and it is never declared dead (issue 27, session 23). Before,
// views and stream pings shared 16 slots, which the pulls kept full: x
// skipped its stream pings to b, no probe reached b, and x held b
// suspect (main 537a244: 2 skipped in 3 s, b suspect at the end).
func TestHostilePullsLeaveStreamPings(t *testing.T) {
	long := strings.Repeat("x", 100) // views of 6 members need 2 datagrams of 700 bytes
	cfg := Config{Plain: true, Protocol: fast(), MaxPacketSize: 700, LeaveTimeout: new(100 * time.Millisecond)}
	xc := cfg
	xc.ID, xc.Seed = swim.ID("x-"+long), 1
	x := start(t, xc)
	bc := cfg
	bc.ID, bc.Seed = swim.ID("b-"+long), 2
	b, shim := startShimmed(t, bc)
	join(t, b, x)
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}, MaxPacketSize: 700})
	require.NoError(t, err)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	var hs []*hostilePuller
	for i := range 4 {
		h := newHostilePuller(t, codec, swim.ID(fmt.Sprintf("h%d-%s", i, long)))
		hs = append(hs, h)
		wg.Go(func() { h.run(x.Self(), stop) })
	}
	most := 0
	require.Eventually(t, func() bool {
		most = max(most, x.stream.views.open())
		return most >= 12
	}, 5*time.Second, time.Millisecond, "the pullers hold x's view streams")
	skipped := x.Stats().StreamPingsSkipped
	shim.blocked.Store(1)
	// At least 30 periods, and on a loaded machine (the local health
	// stretching the periods) until a probe of b has gone by stream.
	deadline, giveUp := time.Now().Add(30*fast().ProbeInterval), time.Now().Add(30*time.Second)
	for time.Now().Before(deadline) || x.Stats().Protocol.StreamOnly == 0 && time.Now().Before(giveUp) {
		most = max(most, x.stream.views.open())
		require.NotEqual(t, swim.StateDead, state(x, b.Self().ID), "x declared b dead")
		time.Sleep(5 * time.Millisecond)
	}
	st := x.Stats()
	accepted := 0
	for _, h := range hs {
		_, _, a, _ := h.seed.snapshot()
		accepted += a
	}
	t.Logf("4 hostile pullers: %d of x's view streams accepted, at most %d held at once; x: StreamPingsSkipped %d, StreamsAddrBusy %d, StreamAnswersIdle %d, PullsRefused %d, StreamOnly %d; b %v",
		accepted, most, st.StreamPingsSkipped, st.StreamsAddrBusy, st.StreamAnswersIdle, st.Protocol.PullsRefused, st.Protocol.StreamOnly, state(x, b.Self().ID))
	assert.Equal(t, skipped, st.StreamPingsSkipped, "stream pings skipped while the views were held")
	assert.Positive(t, st.Protocol.StreamOnly, "b answered only over the stream")
	assert.Positive(t, shim.dropped.Load())
}

// A receiver that accepts reliable messages' streams and never
// acknowledges holds at most 4 of SendReliable's 16 slots: of 32 messages
// sent to it at once, 4 are on streams to it and 28 wait for its turn
// (none returns, no fifth stream is opened), while a message to another
// address goes through at once. When their context ends, the 28 fail
// with ErrReliableBusy and the context's error, the 4 with the context's
// alone (issue 27, session 23). Before ade268b the hung receiver held all
// 16, and every send to anyone waited for its context; from ade268b to
// this test the 28 failed at once with ErrReliableBusy, an error
// memberlist never gives a porter sending several messages to one peer.
func TestReliableSendsPerAddress(t *testing.T) {
	cfg := Config{Plain: true, StreamTimeout: 20 * time.Second}
	x := start(t, cfg)
	b := start(t, cfg)
	msgs, stop := b.Receive(4)
	defer stop()
	hung := newSilentSeed(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 2 * streamOutMax
	errs := make(chan error, n)
	for range n {
		go func() { errs <- x.SendReliableToAddress(ctx, hung.addr.String(), make([]byte, 1000)) }()
	}
	require.Eventually(t, func() bool { _, _, acc, _, _, _ := hung.snapshot(); return acc == streamOutPerAddr },
		5*time.Second, time.Millisecond, "4 streams to the hung receiver")
	bctx, bcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer bcancel()
	t0 := time.Now()
	err := x.SendReliableToAddress(bctx, b.Self().Addr, []byte("past the hung receiver"))
	t.Logf("message to b with 4 held by the hung receiver and 28 waiting: %v (err %v)", time.Since(t0).Round(time.Microsecond), err)
	require.NoError(t, err)
	assert.Equal(t, []byte("past the hung receiver"), receiveOne(t, msgs).Data)
	time.Sleep(100 * time.Millisecond) // room for a fifth stream, were one dialled
	select {
	case err := <-errs:
		t.Fatalf("a message to the hung receiver returned before its context ended: %v", err)
	default:
	}
	_, most, accepted, _, _, _ := hung.snapshot()
	assert.Equal(t, streamOutPerAddr, accepted, "streams accepted by the hung receiver")
	assert.Equal(t, streamOutPerAddr, most, "streams open at once at the hung receiver")
	cancel()
	busy := 0
	for i := range n {
		select {
		case err := <-errs:
			require.ErrorIs(t, err, context.Canceled, "message %d", i)
			assert.Contains(t, err.Error(), hung.addr.String())
			if errors.Is(err, ErrReliableBusy) {
				busy++
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of %d messages returned within 5 s of their context's end", i, n)
		}
	}
	assert.Equal(t, n-streamOutPerAddr, busy, "messages that waited for the address's turn")
	_, _, accepted, _, _, _ = hung.snapshot()
	assert.Equal(t, streamOutPerAddr, accepted, "streams accepted by the hung receiver once all returned")
}

// A message waiting for its address's turn when the agent stops fails
// with ErrStopped and dials nothing: the streams of the 4 before it end
// with the agent (their errors wrap ErrStopped too), and their slots
// given back must not let the fifth dial the receiver after Shutdown.
// Before, it took the freed slot, dialled a fifth stream and failed with
// the closed connection's error.
func TestReliableWaitEndsWithAgent(t *testing.T) {
	x := start(t, Config{Plain: true, StreamTimeout: 20 * time.Second})
	hung := newSilentSeed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	const n = streamOutPerAddr + 1
	errs := make(chan error, n)
	for range n {
		go func() { errs <- x.SendReliableToAddress(ctx, hung.addr.String(), make([]byte, 1000)) }()
	}
	require.Eventually(t, func() bool { _, _, acc, _, _, _ := hung.snapshot(); return acc == streamOutPerAddr },
		5*time.Second, time.Millisecond, "4 streams to the hung receiver")
	require.NoError(t, x.Shutdown())
	for i := range n {
		select {
		case err := <-errs:
			assert.ErrorIs(t, err, ErrStopped, "message %d", i)
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of %d messages returned within 5 s of Shutdown", i, n)
		}
	}
	_, _, accepted, _, _, _ := hung.snapshot()
	assert.Equal(t, streamOutPerAddr, accepted, "streams accepted by the hung receiver")
}
