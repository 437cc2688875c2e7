package main

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/swim/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rigWall is the forge rig's wall clock at monitor clock 0 (Unix ns): three
// days after the incarnation the tests give their genuine sender.
const rigWall = 1764420000123456789 + 3*24*time.Hour

// forgeRig is a receiver with one 1 s fixed-timeout monitor on a manual
// clock, fed datagrams through handle as the read loop does; its wall clock
// starts at rigWall.
type forgeRig struct {
	t    *testing.T
	r    *receiver
	m    *monitor.Monitor
	clk  *monitor.ManualClock
	logs *syncBuffer
	from net.Addr
}

func newForgeRig(t *testing.T, cfg recvConfig) *forgeRig {
	clk := &monitor.ManualClock{}
	m, err := monitor.New(monitor.Config{Clock: clk, Factory: func() (detector.Detector, error) {
		return detector.NewFixed(detector.FixedConfig{Timeout: new(time.Second)})
	}})
	require.NoError(t, err)
	logs := &syncBuffer{}
	r := &receiver{cfg: cfg, log: slog.New(slog.NewTextHandler(logs, nil)), mons: []namedMon{{"timeout-1s", m}},
		streams: map[string]*streamID{}, stats: recvStats{Transitions: map[string]int{}}, wall: rigWall}
	return &forgeRig{t: t, r: r, m: m, clk: clk, logs: logs, from: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}}
}

// beat delivers a heartbeat of sender "s" 100 ms after the previous one,
// signed with key when key is not nil, sent at seq × 100 ms on the sender's
// clock.
func (g *forgeRig) beat(inc, seq uint64, key []byte) {
	g.t.Helper()
	g.deliver(packet{Name: "s", Incarnation: inc, Seq: seq, Sent: time.Duration(seq) * 100 * time.Millisecond, Signed: key != nil},
		key, g.from, 100*time.Millisecond)
}

// deliver hands p (signed with key when key is not nil) to the receiver
// gap after the previous datagram, from address from, and sweeps.
func (g *forgeRig) deliver(p packet, key []byte, from net.Addr, gap time.Duration) {
	g.t.Helper()
	g.send(p, key, from, gap)
	g.m.Sweep()
}

// send is deliver without the sweep.
func (g *forgeRig) send(p packet, key []byte, from net.Addr, gap time.Duration) {
	g.t.Helper()
	b, err := appendPacket(nil, p)
	require.NoError(g.t, err)
	if key != nil {
		b = signPacket(b, key)
	}
	now := g.clk.Now() + gap
	g.clk.Set(now)
	g.r.eval.Lock()
	g.r.handle(b, from, now)
	g.r.eval.Unlock()
}

func (g *forgeRig) state() monitor.PeerState {
	st, ok := g.m.State("s")
	require.True(g.t, ok)
	return st
}

// One forged datagram naming a live sender, with incarnation 2^64−1 or
// with the right incarnation and sequence number 10^12, does not blind recv:
// it is refused (the first outright, the second until a second heartbeat
// confirms it) and counted, and every later genuine heartbeat is taken.
// Without the sequence bound, the datagram made every later genuine
// heartbeat stale and the sender stayed suspected.
func TestForgedDatagramDoesNotBlindRecv(t *testing.T) {
	const inc = 1764420000123456789
	for _, c := range []struct {
		name                string
		inc, seq            uint64
		ahead, implausible  uint64
		unboundedIsBlinding bool
	}{
		{"incarnation 2^64-1", math.MaxUint64, 0, 1, 0, false},
		{"sequence 10^12", inc, 1e12, 0, 1, true},
	} {
		for _, bounded := range []bool{true, false} {
			cfg := recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead}
			if !bounded {
				cfg.MaxSeqJump, cfg.MaxIncarnationJump = math.MaxUint64, math.MaxUint64
			}
			g := newForgeRig(t, cfg)
			for seq := range uint64(10) {
				g.beat(inc, seq, nil)
			}
			g.beat(c.inc, c.seq, nil)
			for seq := uint64(10); seq < 40; seq++ {
				g.beat(inc, seq, nil)
			}
			st := g.state()
			if !bounded && c.unboundedIsBlinding {
				assert.Equal(t, monitor.Suspected, st.Status, "%s, no bound: blinded", c.name)
				continue
			}
			assert.Equal(t, c.ahead, g.r.stats.AheadOfClock, c.name)
			assert.Equal(t, c.implausible, g.r.stats.Implausible, c.name)
			assert.Zero(t, g.r.stats.Stale, c.name)
			assert.Equal(t, monitor.Trusted, st.Status, c.name)
			assert.Equal(t, uint64(inc), st.Incarnation, c.name)
			assert.Equal(t, uint64(40), st.Heartbeats, c.name)
			assert.Zero(t, st.Suspicions, c.name)
			assert.Equal(t, 1, strings.Count(g.logs.String(), "heartbeat re"), c.name)
		}
	}
}

// The two-packet forgery of issue 26: incarnation 2^64−1 with sequence
// number 0, then 1, from the sender's own address at the sender's interval.
// Both are refused outright (the incarnation bound): the genuine sender
// misses no heartbeat, for a known name and for a name the forger claims
// first. Were the second datagram to confirm the jump, every genuine
// heartbeat after it would be stale until --evict-after, and no uint64
// --incarnation would get past it.
func TestTwoPacketForgeryRefused(t *testing.T) {
	const inc = 1764420000123456789
	g := newForgeRig(t, recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead})
	for seq := range uint64(10) {
		g.beat(inc, seq, nil)
	}
	g.beat(math.MaxUint64, 0, nil)
	g.beat(math.MaxUint64, 1, nil)
	for seq := uint64(10); seq < 40; seq++ {
		g.beat(inc, seq, nil)
	}
	st := g.state()
	assert.Equal(t, monitor.Trusted, st.Status)
	assert.Equal(t, uint64(inc), st.Incarnation)
	assert.Equal(t, uint64(40), st.Heartbeats, "no genuine heartbeat lost")
	assert.Zero(t, st.Suspicions)
	assert.Equal(t, uint64(2), g.r.stats.AheadOfClock)
	assert.Zero(t, g.r.stats.Confirmed)
	assert.Zero(t, g.r.stats.Stale)
	assert.NotContains(t, g.logs.String(), "larger --incarnation")
	assert.Contains(t, g.logs.String(), "ahead of this receiver's clock")

	// A name the forger claims before its sender starts.
	n := func(inc, seq uint64) packet {
		return packet{Name: "n", Incarnation: inc, Seq: seq, Sent: time.Duration(seq) * 100 * time.Millisecond}
	}
	g.deliver(n(math.MaxUint64, 0), nil, g.from, time.Millisecond)
	g.deliver(n(math.MaxUint64, 1), nil, g.from, 100*time.Millisecond)
	genuine := uint64(rigWall + g.clk.Now()) // fdbeat send's incarnation: its start time
	for seq := range uint64(5) {
		g.deliver(n(genuine, seq), nil, g.from, 100*time.Millisecond)
	}
	ns, ok := g.m.State("n")
	require.True(t, ok)
	assert.Equal(t, genuine, ns.Incarnation)
	assert.Equal(t, uint64(5), ns.Heartbeats)
	assert.Equal(t, uint64(4), g.r.stats.AheadOfClock)
}

// The incarnation bound is the receiver's clock plus --max-incarnation-ahead,
// to the nanosecond: a sender whose clock leads by the margin is taken, by
// a nanosecond more is refused.
func TestIncarnationAheadBound(t *testing.T) {
	g := newForgeRig(t, recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: time.Minute})
	const limit = 1764679260123456789 // docs/algorithms.md, “fdbeat: authenticated heartbeats and plausibility bounds” (incarnation bound)
	g.deliver(packet{Name: "a", Incarnation: limit + 1}, nil, g.from, 0)
	g.deliver(packet{Name: "b", Incarnation: limit}, nil, g.from, 0)
	_, okA := g.m.State("a")
	_, okB := g.m.State("b")
	assert.False(t, okA)
	assert.True(t, okB)
	assert.Equal(t, uint64(1), g.r.stats.AheadOfClock)
	assert.Contains(t, g.logs.String(), "ahead=1m0.000000001s")
}

// A jump within the bounds (an incarnation 30 s in the future) is confirmed
// only by a second heartbeat from the same source address at a plausible
// interval: two datagrams sent back to back, or the second from another
// address, confirm nothing, and the genuine sender is never blinded. A
// forger sending from its own address does not push out a genuine restart
// waiting for its second heartbeat, and a restart at a new rate (100 ms to
// 1 s) is confirmed by its second heartbeat.
func TestJumpNeedsSameAddressAndPlausibleInterval(t *testing.T) {
	const inc = 1764420000123456789
	g := newForgeRig(t, recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead})
	for seq := range uint64(10) {
		g.beat(inc, seq, nil)
	}
	forged := uint64(rigWall + 30*time.Second)
	other := &net.UDPAddr{IP: net.IPv4(10, 0, 0, 66), Port: 4444}
	fp := func(seq uint64) packet {
		return packet{Name: "s", Incarnation: forged, Seq: seq, Sent: time.Duration(seq) * 100 * time.Millisecond}
	}
	g.deliver(fp(0), nil, g.from, time.Millisecond)
	g.deliver(fp(1), nil, g.from, 10*time.Microsecond) // back to back
	assert.Equal(t, uint64(1), g.r.stats.BadInterval)
	g.deliver(fp(2), nil, other, 100*time.Millisecond) // another address
	assert.Equal(t, uint64(1), g.r.stats.OtherSource)
	for seq := uint64(10); seq < 20; seq++ {
		g.beat(inc, seq, nil)
	}
	st := g.state()
	assert.Equal(t, uint64(inc), st.Incarnation)
	assert.Equal(t, uint64(20), st.Heartbeats)
	assert.Equal(t, monitor.Trusted, st.Status)
	assert.Zero(t, g.r.stats.Confirmed)
	assert.Equal(t, uint64(3), g.r.stats.Implausible)

	// A genuine restart at 1 s while a forger sends from its own address.
	// Its incarnation is 3 days past the last, beyond --max-incarnation-jump.
	re := uint64(rigWall + g.clk.Now() + 2*time.Second)
	rp := func(seq uint64) packet {
		return packet{Name: "s", Incarnation: re, Seq: seq, Sent: time.Duration(seq) * time.Second}
	}
	g.deliver(rp(0), nil, g.from, 2*time.Second)
	g.deliver(fp(7), nil, other, 300*time.Millisecond)
	g.deliver(fp(8), nil, other, 10*time.Microsecond)
	g.deliver(rp(1), nil, g.from, 700*time.Millisecond)
	st = g.state()
	assert.Equal(t, re, st.Incarnation, "the restart is followed")
	assert.Equal(t, uint64(1), g.r.stats.Confirmed)
	assert.Equal(t, uint64(2), g.r.stats.BadInterval)
}

// A forger who passes the confirmation (two datagrams from the sender's
// address, paced at its interval, with an incarnation 30 s ahead) and then
// falls silent blinds the genuine sender for revertAfter (5 s) only: the
// first genuine heartbeat after that makes recv follow the older
// incarnation again. Without the rule the sender stayed stale until
// --evict-after. A genuine restart, with a heartbeat of the old
// incarnation reordered behind the new one's, does not revert.
func TestRevertToOlderIncarnation(t *testing.T) {
	const inc = 1764420000123456789
	g := newForgeRig(t, recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead})
	for seq := range uint64(10) {
		g.beat(inc, seq, nil)
	}
	forged := uint64(rigWall + 30*time.Second)
	g.deliver(packet{Name: "s", Incarnation: forged, Seq: 0, Sent: 0}, nil, g.from, 50*time.Millisecond)
	g.deliver(packet{Name: "s", Incarnation: forged, Seq: 1, Sent: 100 * time.Millisecond}, nil, g.from, 100*time.Millisecond)
	require.Equal(t, uint64(1), g.r.stats.Confirmed)
	require.Equal(t, forged, g.state().Incarnation)
	seq := uint64(10)
	for ; g.r.stats.Reverted == 0 && seq < 200; seq++ {
		g.beat(inc, seq, nil)
	}
	assert.Equal(t, uint64(1), g.r.stats.Reverted)
	assert.Equal(t, uint64(50), g.r.stats.Stale, "blind for 50 heartbeats: 5 s")
	for range 20 {
		g.beat(inc, seq, nil)
		seq++
	}
	st := g.state()
	assert.Equal(t, uint64(inc), st.Incarnation)
	assert.Equal(t, monitor.Trusted, st.Status)
	assert.Equal(t, uint64(21), st.Heartbeats, "followed afresh from the reverting heartbeat")
	assert.Contains(t, g.logs.String(), "followed again in an older incarnation")

	// A genuine restart; a heartbeat of the old incarnation arrives 50 ms
	// after the new one's first: stale, nothing reverted.
	re := uint64(rigWall + g.clk.Now())
	g.r.cfg.MaxIncarnationJump = math.MaxUint64 // a restart taken at once
	g.beat(re, 0, nil)
	g.deliver(packet{Name: "s", Incarnation: inc, Seq: seq, Sent: time.Duration(seq) * 100 * time.Millisecond}, nil, g.from, 50*time.Millisecond)
	g.beat(re, 1, nil)
	assert.Equal(t, re, g.state().Incarnation)
	assert.Equal(t, uint64(1), g.r.stats.Reverted)
	assert.Equal(t, uint64(51), g.r.stats.Stale)
}

// plausibleGap, worked by hand: k steps need a send gap d ≥ k ms and an
// arrival gap g with d/2 ≤ g ≤ 2d + 1 s.
func TestPlausibleGap(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		k    uint64
		d, g time.Duration
		want bool
	}{
		{1, 100 * ms, 100 * ms, true},
		{1, 100 * ms, 50 * ms, true},           // d/2
		{1, 100 * ms, 50*ms - 1, false},        // below d/2
		{1, 100 * ms, 1200 * ms, true},         // 2d + 1 s
		{1, 100 * ms, 1200*ms + 1, false},      // above it
		{3, 3 * ms, 3 * ms, true},              // 1 ms a step
		{3, 3*ms - 1, 3 * ms, false},           // faster than 1 ms a step
		{1, 0, 0, false},                       // back to back
		{1, -ms, ms, false},                    // sent earlier
		{1, math.MaxInt64, time.Second, false}, // a forged send gap
		{1, time.Second, math.MaxInt64, false}, // a second much later
		{100, 10 * time.Second, 10 * time.Second, true},
	} {
		assert.Equal(t, c.want, plausibleGap(c.k, c.d, c.g), "k=%d d=%v g=%v", c.k, c.d, c.g)
	}
}

// Unauthenticated, a jump beyond the bound needs a second heartbeat: a
// genuine restart (new incarnation two days later) and a long loss (seq
// +5000) each cost one heartbeat, then the sender is followed again.
func TestJumpConfirmedBySecondHeartbeat(t *testing.T) {
	const inc = 1764420000123456789
	g := newForgeRig(t, recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead})
	for seq := range uint64(5) {
		g.beat(inc, seq, nil)
	}
	g.beat(inc, 5005, nil) // rejected
	assert.Equal(t, uint64(5), g.state().Heartbeats)
	g.beat(inc, 5006, nil) // confirms
	assert.Equal(t, uint64(6), g.state().Heartbeats)
	assert.Equal(t, uint64(1), g.r.stats.Confirmed)

	later := uint64(inc + 2*24*time.Hour)
	g.beat(later, 0, nil) // rejected
	assert.Equal(t, uint64(inc), g.state().Incarnation)
	g.beat(later, 1, nil) // confirms: the restarted sender is followed
	g.beat(later, 2, nil)
	st := g.state()
	assert.Equal(t, later, st.Incarnation)
	assert.Equal(t, uint64(2), st.Heartbeats)
	assert.Equal(t, uint64(2), g.r.stats.Implausible)
	assert.Equal(t, uint64(2), g.r.stats.Confirmed)

	// A second datagram that does not continue the first (another forged
	// value, or a genuine heartbeat in between) confirms nothing.
	g.beat(later, 1e12, nil)
	g.beat(later, 3, nil)
	g.beat(later, 1e12+1, nil)
	assert.Equal(t, later, g.state().Incarnation)
	assert.Equal(t, uint64(3), g.state().Heartbeats)
	assert.Equal(t, uint64(4), g.r.stats.Implausible)
}

// With keys, plain and badly signed heartbeats are dropped and counted
// before they reach any bound: even two consistent forged datagrams change
// nothing; heartbeats signed with a key of the ring are taken.
func TestAuthenticatedRecvDropsForged(t *testing.T) {
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	kr, err := wire.NewKeyring(k1, k2)
	require.NoError(t, err)
	const inc = 77
	g := newForgeRig(t, recvConfig{Keys: kr, MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead})
	for seq := range uint64(5) {
		g.beat(inc, seq, k1)
	}
	bad := bytes.Repeat([]byte{3}, 32)
	for i := range uint64(2) {
		g.beat(math.MaxUint64, i, nil)
		g.beat(math.MaxUint64, i, bad)
		g.beat(inc, 1e12+i, nil)
		g.beat(inc, 1e12+i, bad)
	}
	for seq := uint64(5); seq < 10; seq++ {
		g.beat(inc, seq, k2) // the second key of the ring opens too
	}
	st := g.state()
	assert.Equal(t, uint64(inc), st.Incarnation)
	assert.Equal(t, uint64(10), st.Heartbeats)
	assert.Equal(t, monitor.Trusted, st.Status)
	assert.Equal(t, uint64(4), g.r.stats.Unauthenticated)
	assert.Equal(t, uint64(4), g.r.stats.AuthFailed)
	assert.Zero(t, g.r.stats.Implausible)
	assert.Zero(t, g.r.stats.Stale)
}

// fdbeat send --key to fdbeat recv --key over loopback: every signed
// heartbeat is recorded; forged ones (plain, or signed with another key,
// claiming incarnation 2^64−1) are refused and counted, and the sender stays
// trusted by every detector.
func TestAuthenticatedLoopback(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	kr, err := wire.NewKeyring(key)
	require.NoError(t, err)
	rc := recvConfig{Keys: kr, MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead,
		TableSenders: defaultTableSenders, Listen: "127.0.0.1:0", Interval: 10 * time.Millisecond,
		Sweep: 5 * time.Millisecond, Timeouts: []time.Duration{time.Second}, Out: filepath.Join(t.TempDir(), "auth.fdk")}
	ready := make(chan string, 1)
	rc.ready = func(a net.Addr, _ time.Duration) { ready <- a.String() }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan recvStats, 1)
	go func() {
		st, err := runRecv(ctx, rc, slog.New(slog.DiscardHandler))
		assert.NoError(t, err)
		done <- st
	}()
	addr := <-ready
	forger, err := net.Dial("udp", addr)
	require.NoError(t, err)
	defer forger.Close()
	sc := sendConfig{Targets: []string{addr}, Name: "a", Interval: 10 * time.Millisecond, Count: 30, DelayDist: "constant", Key: key,
		stall: func(seq uint64) {
			if seq == 10 {
				plain, _ := appendPacket(nil, packet{Name: "a", Incarnation: math.MaxUint64, Seq: 11})
				body, _ := appendPacket(nil, packet{Name: "a", Incarnation: math.MaxUint64, Seq: 11, Signed: true})
				_, _ = forger.Write(plain)
				_, _ = forger.Write(signPacket(body, bytes.Repeat([]byte{8}, 32)))
			}
		}}
	sst, err := runSend(ctx, sc, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.Equal(t, uint64(30), sst.Sent)
	time.Sleep(100 * time.Millisecond)
	cancel()
	st := <-done
	assert.Equal(t, uint64(30), st.Recorded)
	assert.Equal(t, uint64(1), st.Unauthenticated)
	assert.Equal(t, uint64(1), st.AuthFailed)
	assert.Zero(t, st.Stale)
	assert.Zero(t, st.Transitions["timeout-1s"], "never suspected")
}

// A forger stepping one name through incarnations (each a plausible restart)
// gets a new trace id per step until that name has maxPeerIDs of them;
// after that its heartbeats still reach the monitors but are counted and
// not recorded, instead of growing the id set without bound or merging
// incarnations. Other senders keep getting ids, and an eviction frees all
// of the name's ids.
func TestRestartsCannotGrowTraceIDs(t *testing.T) {
	g := newForgeRig(t, recvConfig{MaxSenders: 1, MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead})
	steps := maxPeerIDs + 500
	for inc := uint64(1); inc <= uint64(steps); inc++ {
		g.beat(inc, 0, nil)
	}
	assert.Len(t, g.r.used, maxPeerIDs)
	assert.Equal(t, uint64(steps-maxPeerIDs), g.r.stats.NoTraceID)
	st := g.state()
	assert.Equal(t, uint64(steps), st.Incarnation, "the monitors follow every restart")
	assert.Equal(t, monitor.Trusted, st.Status)
	assert.Contains(t, g.logs.String(), "trace sender ids used up")
	assert.NotEmpty(t, g.r.stream("b", 1), "another sender still gets an id")
	g.r.cfg.EvictAfter, g.r.clock = time.Nanosecond, g.clk
	g.clk.Set(g.clk.Now() + time.Hour)
	g.r.evict()
	assert.Empty(t, g.r.used, "eviction frees every id of the evicted senders")
}

// With keys no incarnation is forged, and a replayed capture of an older
// incarnation, arriving when the current one has been silent (the sender
// crashed), must not bring the sender back: no revert.
func TestNoRevertWithKeys(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	kr, err := wire.NewKeyring(key)
	require.NoError(t, err)
	g := newForgeRig(t, recvConfig{Keys: kr, MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: math.MaxUint64, MaxIncarnationAhead: defaultMaxIncarnationAhead})
	const old = 1764420000123456789
	g.beat(old, 0, key)
	re := uint64(rigWall)
	for seq := range uint64(5) {
		g.beat(re, seq, key)
	}
	for range 100 { // the sender crashed: 10 s of sweeps
		g.clk.Set(g.clk.Now() + 100*time.Millisecond)
		g.m.Sweep()
	}
	g.deliver(packet{Name: "s", Incarnation: old, Seq: 0, Signed: true}, key, g.from, time.Millisecond) // the capture, replayed
	st := g.state()
	assert.Equal(t, re, st.Incarnation)
	assert.Equal(t, monitor.Suspected, st.Status)
	assert.Zero(t, g.r.stats.Reverted)
	assert.Equal(t, uint64(1), g.r.stats.Stale)
}

// fdbeat send warns when --incarnation is further ahead of its clock than
// receivers accept by default, and not for a small one.
func TestSendWarnsIncarnationAhead(t *testing.T) {
	for _, c := range []struct {
		inc  uint64
		warn bool
	}{{math.MaxUint64, true}, {1, false}} {
		var logs syncBuffer
		_, err := runSend(context.Background(), sendConfig{Targets: []string{"127.0.0.1:9"}, Interval: time.Millisecond, Count: 1, DelayDist: "constant", Incarnation: c.inc},
			slog.New(slog.NewTextHandler(&logs, nil)))
		require.NoError(t, err)
		assert.Equal(t, c.warn, strings.Contains(logs.String(), "receivers refuse every heartbeat"), "incarnation %d", c.inc)
	}
}
