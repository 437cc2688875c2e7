package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
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

// A receiver that accepts reliable messages' streams and never
// acknowledges holds at most 4 of SendReliable's 16 slots: of 32 messages
// sent to it at once, 28 fail at once with ErrReliableBusy, and a message
// to another address goes through at once (issue 27, session 23).
// Before, the hung receiver held all 16, and every send to anyone waited
// for its context.
func TestReliableSendsPerAddress(t *testing.T) {
	cfg := Config{Plain: true, StreamTimeout: 20 * time.Second}
	x := start(t, cfg)
	b := start(t, cfg)
	msgs, stop := b.Receive(4)
	defer stop()
	hung := newSilentSeed(t)
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2*streamOutMax)
	for range 2 * streamOutMax {
		go func() { errs <- x.SendReliableToAddress(ctx, hung.addr.String(), make([]byte, 1000)) }()
	}
	defer func() {
		cancel()
		for range streamOutPerAddr {
			<-errs
		}
	}()
	for i := range 2*streamOutMax - streamOutPerAddr {
		select {
		case err := <-errs:
			require.ErrorIs(t, err, ErrReliableBusy, "message %d", i)
			assert.Contains(t, err.Error(), hung.addr.String())
		case <-time.After(5 * time.Second):
			t.Fatalf("%d messages refused at once, want %d", i, 2*streamOutMax-streamOutPerAddr)
		}
	}
	require.Eventually(t, func() bool { _, _, n, _, _, _ := hung.snapshot(); return n == streamOutPerAddr },
		5*time.Second, time.Millisecond, "4 streams to the hung receiver")
	bctx, bcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer bcancel()
	t0 := time.Now()
	err := x.SendReliableToAddress(bctx, b.Self().Addr, []byte("past the hung receiver"))
	t.Logf("message to b with 4 held by the hung receiver: %v (err %v)", time.Since(t0).Round(time.Microsecond), err)
	require.NoError(t, err)
	assert.Equal(t, []byte("past the hung receiver"), receiveOne(t, msgs).Data)
	select {
	case err := <-errs:
		t.Fatalf("a message to the hung receiver returned: %v", err)
	default:
	}
}
