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

// forgeRig is a receiver with one 1 s fixed-timeout monitor on a manual
// clock, fed datagrams through handle as the read loop does.
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
		streams: map[string]*streamID{}, stats: recvStats{Transitions: map[string]int{}}}
	return &forgeRig{t: t, r: r, m: m, clk: clk, logs: logs, from: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}}
}

// beat delivers a heartbeat of sender "s" 100 ms after the previous one,
// signed with key when key is not nil.
func (g *forgeRig) beat(inc, seq uint64, key []byte) {
	g.t.Helper()
	b, err := appendPacket(nil, packet{Name: "s", Incarnation: inc, Seq: seq, Sent: time.Duration(seq), Signed: key != nil})
	require.NoError(g.t, err)
	if key != nil {
		b = signPacket(b, key)
	}
	now := g.clk.Now() + 100*time.Millisecond
	g.clk.Set(now)
	g.r.eval.Lock()
	g.r.handle(b, g.from, now)
	g.r.eval.Unlock()
	g.m.Sweep()
}

func (g *forgeRig) state() monitor.PeerState {
	st, ok := g.m.State("s")
	require.True(g.t, ok)
	return st
}

// One forged datagram naming a live sender, with incarnation 2^64−1 or
// with the right incarnation and sequence number 10^12, does not blind recv:
// it is rejected and counted, and every later genuine heartbeat is taken.
// Without the bound (the behaviour before it), the same datagram made every
// later genuine heartbeat stale and the sender stayed suspected.
func TestForgedDatagramDoesNotBlindRecv(t *testing.T) {
	const inc = 1764420000123456789
	for name, forged := range map[string][2]uint64{
		"incarnation 2^64-1": {math.MaxUint64, 0},
		"sequence 10^12":     {inc, 1e12},
	} {
		for _, bounded := range []bool{true, false} {
			cfg := recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump}
			if !bounded {
				cfg.MaxSeqJump, cfg.MaxIncarnationJump = math.MaxUint64, math.MaxUint64
			}
			g := newForgeRig(t, cfg)
			for seq := range uint64(10) {
				g.beat(inc, seq, nil)
			}
			g.beat(forged[0], forged[1], nil)
			for seq := uint64(10); seq < 40; seq++ {
				g.beat(inc, seq, nil)
			}
			st := g.state()
			if !bounded {
				assert.Equal(t, monitor.Suspected, st.Status, "%s, no bound: blinded", name)
				continue
			}
			assert.Equal(t, uint64(1), g.r.stats.Implausible, name)
			assert.Zero(t, g.r.stats.Stale, name)
			assert.Equal(t, monitor.Trusted, st.Status, name)
			assert.Equal(t, uint64(inc), st.Incarnation, name)
			assert.Equal(t, uint64(40), st.Heartbeats, name)
			assert.Zero(t, st.Suspicions, name)
			assert.Equal(t, 1, strings.Count(g.logs.String(), "heartbeat rejected"), name)
		}
	}
}

// Unauthenticated, a jump beyond the bound needs a second heartbeat: a
// genuine restart (new incarnation two days later) and a long loss (seq
// +5000) each cost one heartbeat, then the sender is followed again.
func TestJumpConfirmedBySecondHeartbeat(t *testing.T) {
	const inc = 1764420000123456789
	g := newForgeRig(t, recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump})
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
	g := newForgeRig(t, recvConfig{Keys: kr, MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump})
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
	rc := recvConfig{Keys: kr, MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump,
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
	g := newForgeRig(t, recvConfig{MaxSenders: 1, MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump})
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
