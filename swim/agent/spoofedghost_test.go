package agent

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// spoofedGhost is the ghost i at a victim's address: its node, and the
// address the spoofer writes its datagrams from (the same).
func spoofedGhost(i int, addr netip.AddrPort) swim.Node {
	return swim.Node{ID: swim.ID(fmt.Sprintf("ghost%03d", i)), Addr: addr.String()}
}

// plantSpoofed sends each member of as, for each ghost, from the ghost's
// own address: a gossip carrying the ghost's Alive at inc, and a bare
// ping in its name (which draws an ack).
func plantSpoofed(t *testing.T, sp *spoofer, as []*Agent, ghosts []swim.Node, inc swim.Incarnation) {
	t.Helper()
	for _, g := range ghosts {
		src := netip.MustParseAddrPort(g.Addr)
		for _, a := range as {
			sp.send(t, src, a.Self(), swim.Packet{Kind: swim.MsgGossip, From: g,
				Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: g, From: g.ID, Incarnation: inc}}})
			sp.send(t, src, a.Self(), swim.Packet{Kind: swim.MsgPing, From: g, Ping: swim.Ping{Seq: 7}})
		}
	}
}

// ghostsLive counts the ghosts (IDs "ghost…") a holds alive or suspect.
func ghostsLive(a *Agent) int {
	c := 0
	for _, m := range a.Members() {
		if strings.HasPrefix(string(m.Node.ID), "ghost") && (m.State == swim.StateAlive || m.State == swim.StateSuspect) {
			c++
		}
	}
	return c
}

// Ghosts announced by datagrams whose IP source is the ghost's own
// address (a victim's port, spoofed over a raw socket) are heard, not
// verified (swim/receipt.go): the victims get only bare pings (the
// challenges, the ghosts' probes) and the acks to the spoofed pings,
// never the queue, ping-reqs, gossip or joins, and at most twice the
// attacker's bytes. Each member challenges a ghost once per probe timeout
// at most, and only when the packet pays for the challenge and its ack;
// an unanswered challenge stands for the ghost's probe.
//
// Before, one such datagram verified its ghost, and the group sent the
// victims 9.9× the attacker's bytes (gossip) and 14.8× (pings), n = 8
// (issue 27, user38 F2; docs/experiments.md, “SWIM: verification by
// proof of receipt”). Measured after, 13 runs of this test at load 2-5:
// 0.65× to 0.68× (each member's challenge and ack per plant, against the
// attacker's gossip and ping). The bound is the 2×: the worst
// case for the ratio, one spoofed ping per ghost to one member only, so
// that the other members' probes of the ghost count against one packet,
// measured 1.93× (user38's repro, in docs/experiments.md), too close to
// the bound for a test on a loaded machine.
func TestSpoofedGhostsStayUnverified(t *testing.T) {
	const n, ghosts = 8, 10
	as := group(t, n, Config{Plain: true, Protocol: fast()})
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	sp := newSpoofer(t, codec)
	var vs []*victim
	var gs []swim.Node
	for i := range ghosts {
		v := newVictim(t, codec)
		vs = append(vs, v)
		gs = append(gs, spoofedGhost(i, netip.MustParseAddrPort(v.LocalAddr().String())))
	}
	kinds := map[swim.MessageKind]int{}
	read := func() {
		for i, v := range vs {
			for len(v.Packets()) > 0 {
				p := <-v.Packets()
				v.got += len(p.Data)
				pk, err := codec.Decode(p.Data)
				require.NoError(t, err)
				kinds[pk.Kind]++
				assert.Empty(t, pk.Broadcasts)
				for _, u := range pk.Updates {
					assert.Equal(t, gs[i].ID, u.Node.ID, "%v from %s: only the ghost's notice, never the queue", pk.Kind, pk.From.ID)
				}
			}
		}
	}
	// Planted, then refreshed at rising incarnations for 2 s: each
	// refresh revives a ghost its members declared dead meanwhile.
	inc := swim.Incarnation(1)
	for start := time.Now(); time.Since(start) < 2*time.Second; time.Sleep(300 * time.Millisecond) {
		plantSpoofed(t, sp, as, gs, inc)
		inc++
		read()
	}
	require.Eventually(t, func() bool {
		read()
		return !slices.ContainsFunc(as, func(a *Agent) bool { return ghostsLive(a) > 0 })
	}, 60*time.Second, 10*time.Millisecond, "the ghosts, never answering, are declared dead")
	periodsFrom(t, as...)(10)
	read()
	got, challenges := 0, 0
	for _, v := range vs {
		got += v.got
	}
	for _, a := range as {
		challenges += a.Stats().Protocol.VerifyChallenges
	}
	t.Logf("attacker %d B, victims %d B: %.2f×; %v; challenges %d", sp.sent, got, float64(got)/float64(sp.sent), kinds, challenges)
	assert.LessOrEqual(t, got, 2*sp.sent, "the victims get at most twice the attacker's bytes")
	assert.Positive(t, challenges)
	for k := range kinds {
		assert.Contains(t, []swim.MessageKind{swim.MsgPing, swim.MsgAck}, k, "no %v to a ghost", k)
	}
}

// crashDetection starts a group of n plain agents, plants k ghosts by
// spoofed datagrams at every member (closed ports of 127.0.0.3), shuts
// one member down while refreshing the ghosts every refresh, and returns
// how long until every other member holds it dead, or fails after
// limit.
func crashDetection(t *testing.T, n, k int, refresh, limit time.Duration) time.Duration {
	t.Helper()
	as := group(t, n, Config{Plain: true, Protocol: fast()})
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	sp := newSpoofer(t, codec)
	var gs []swim.Node
	for i := range k {
		gs = append(gs, spoofedGhost(i, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.3"), uint16(20000+i))))
	}
	inc := swim.Incarnation(1)
	plantSpoofed(t, sp, as, gs, inc)
	periodsFrom(t, as...)(2)
	inc++
	plantSpoofed(t, sp, as, gs, inc)
	crashed := as[n-1]
	start := time.Now()
	require.NoError(t, crashed.Shutdown())
	last := start
	for {
		if time.Since(last) >= refresh {
			inc++
			plantSpoofed(t, sp, as, gs, inc)
			last = time.Now()
		}
		if !slices.ContainsFunc(as[:n-1], func(a *Agent) bool { return !holdsDead(a, crashed.Self().ID) }) {
			return time.Since(start)
		}
		require.Less(t, time.Since(start), limit, "%d ghosts: %s not dead at every member", k, crashed.Self().ID)
		time.Sleep(5 * time.Millisecond)
	}
}

// 200 ghosts planted at every member of a group of 8 by spoofed
// datagrams, refreshed every 500 ms, so that every member holds about 200
// of them live, unverified (each admitted as speaking for itself, beyond
// the unverified quota): a real member's crash is still detected within
// twice the time it takes without them. Unverified members take at most
// one probe in max(3, v+1), v the verified ones (swim/verify.go), so the
// known members' turns come about (v+1)/v times as slowly: 8/7 here.
//
// Before, each spoofed datagram verified its ghost, and the crash was not
// detected within 120 s (issue 27, user38 F3(b)). Measured after
// (TestSpoofedGhostsMeasure, 8 runs each, load 3.6-4.3): without ghosts
// 0.49-0.58 s, median 0.56 s; with 200 ghosts 0.55-0.80 s, median
// 0.59 s. Single runs vary by more than the 8/7 the ghosts cost (the
// slowest run with ghosts is 1.64× the fastest without), so each side is
// the median of three runs, and the bound is the 2×.
func TestSpoofedGhostsDoNotHideCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("six groups of eight agents")
	}
	const runs = 3
	var normal, ghosts []time.Duration
	for range runs {
		normal = append(normal, crashDetection(t, 8, 0, 500*time.Millisecond, 60*time.Second))
		ghosts = append(ghosts, crashDetection(t, 8, 200, 500*time.Millisecond, 120*time.Second))
	}
	slices.Sort(normal)
	slices.Sort(ghosts)
	t.Logf("crash detected without ghosts %v, with 200 spoofed ghosts %v", normal, ghosts)
	assert.LessOrEqual(t, ghosts[runs/2], 2*normal[runs/2], "with the ghosts at most twice the time without")
}

// TestSpoofedGhostsMeasure prints crash detection times for
// SPOOF_K ghosts over SPOOF_RUNS runs (docs/experiments.md, “SWIM:
// verification by proof of receipt”). Off unless SPOOF_RUNS is set.
func TestSpoofedGhostsMeasure(t *testing.T) {
	var runs, k int
	if _, err := fmt.Sscan(os.Getenv("SPOOF_RUNS"), &runs); err != nil {
		t.Skip("set SPOOF_RUNS (and SPOOF_K, default 0) to measure")
	}
	fmt.Sscan(os.Getenv("SPOOF_K"), &k)
	var ds []time.Duration
	for range runs {
		ds = append(ds, crashDetection(t, 8, k, 500*time.Millisecond, 120*time.Second))
	}
	slices.Sort(ds)
	t.Logf("K=%d: %v", k, ds)
}

// holdsDead reports whether a holds id dead.
func holdsDead(a *Agent, id swim.ID) bool {
	for _, m := range a.Members() {
		if m.Node.ID == id {
			return m.State == swim.StateDead
		}
	}
	return false
}
