package swim

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// relayMember is a member of b, c, d with a full queue (30 members heard
// of from b), its own Alive queued (200 bytes of metadata) and a 300-byte
// broadcast: anything that carries the queue is over 1,000 bytes.
func relayMember(t *testing.T) *Member {
	t.Helper()
	a := newTest(t, "a", ModeLifeguard, func(c *Config) {
		c.Meta = bytes.Repeat([]byte("m"), 200)
	}, "b", "c", "d")
	a.Tick(0)
	drain(a)
	require.NoError(t, a.SetMeta([]byte("zone=a")))
	drain(a)
	require.NoError(t, a.Broadcast("k", bytes.Repeat([]byte("x"), 300)))
	g := Packet{Kind: MsgAck, From: node("b"), To: a.Self()}
	for i := range 30 {
		g.Updates = append(g.Updates, Update{Kind: UpdateAlive, Node: node(fmt.Sprintf("n%02d", i)), From: "b"})
	}
	require.NoError(t, a.Step(5*time.Millisecond, &g))
	drain(a)
	return a
}

func pingReq(from, target Node, nack bool) Packet {
	return Packet{Kind: MsgPingReq, From: from, To: node("a"), PingReq: PingReq{Seq: 7, Target: target, Nack: nack}}
}

// relayOne steps the ping-req p into a at 10 ms and returns the one ping
// a relays for it, and every packet a sent; it fails t unless a sent
// exactly one ping.
func relayOne(t *testing.T, a *Member, p Packet, msgAndArgs ...any) (Packet, []Packet) {
	t.Helper()
	require.NoError(t, a.Step(10*time.Millisecond, &p))
	pk, _ := drain(a)
	pings := only(t, pk, MsgPing)
	require.Len(t, pings, 1, msgAndArgs...)
	return pings[0], pk
}

// padded is p with Alive updates of fresh members until its Size is at
// least size.
func padded(p Packet, size int) Packet {
	for i := 0; p.Size() < size; i++ {
		id := fmt.Sprintf("u%d", i)
		p.Updates = append(p.Updates, Update{Kind: UpdateAlive, Node: node(id), From: ID(id)})
	}
	return p
}

// sentTo sums the sizes of the packets of pk to addr.
func sentTo(pk []Packet, addr string) int {
	n := 0
	for _, q := range pk {
		if q.To.Addr == addr {
			n += q.Size()
		}
	}
	return n
}

// A ping-req between members (the origin and the target held at their
// addresses) is relayed as before: the ping and the relayed ack carry the
// queue, the ping within twice the ping-req's bytes (relayPingLimit): a
// ping-req that carries gossip of its own (here padded to 700 bytes, its
// updates queued in turn) pays for them.
func TestPingReqBetweenMembersCarriesQueue(t *testing.T) {
	a := relayMember(t)
	req := padded(pingReq(node("c"), node("b"), false), 700)
	ping, _ := relayOne(t, a, req)
	assert.Equal(t, node("b"), ping.To)
	assert.Greater(t, len(ping.Updates), 10)
	assert.LessOrEqual(t, a.sentBytes(&ping), 2*a.recvBytes(&req))
	ack := Packet{Kind: MsgAck, From: node("b"), To: a.Self(), Ack: Ack{Seq: ping.Ping.Seq}}
	require.NoError(t, a.Step(20*time.Millisecond, &ack))
	pk, _ := drain(a)
	acks := only(t, pk, MsgAck)
	require.Len(t, acks, 1)
	assert.Equal(t, node("c"), acks[0].To)
	assert.Equal(t, uint32(7), acks[0].Ack.Seq)
	assert.NotEmpty(t, acks[0].Updates, "the relayed ack to a member carries the queue")
	assert.Zero(t, a.Stats().RelaysRefused)
}

// A forged ping-req from an origin the view does not hold (x at victim:1)
// for a target it does not hold (y at victim:2) is not relayed: before,
// it drew a 1,331-byte ping to victim:2 and a nack to victim:1 (rev31,
// 26.6 times the 50-byte ping-req). Nor when the ping-req itself brings
// the target's Alive: the target must be held before its updates merge.
func TestForgedPingReqForStrangerNotRelayed(t *testing.T) {
	for _, withAlive := range []bool{false, true} {
		a := relayMember(t)
		victim2 := Node{ID: "y", Addr: "victim:2"}
		p := pingReq(Node{ID: "x", Addr: "victim:1"}, victim2, true)
		if withAlive {
			p.Updates = []Update{{Kind: UpdateAlive, Node: victim2, From: "y"}}
		}
		require.NoError(t, a.Step(10*time.Millisecond, &p))
		pk, _ := drain(a)
		assert.Zero(t, sentTo(pk, "victim:2"), "Alive in the ping-req %v: nothing to the target", withAlive)
		later, _ := advance(a, 3*time.Second) // y may be probed, as a member gossip announced
		pk = append(pk, later...)
		for _, q := range pk {
			assert.NotEqual(t, MsgNack, q.Kind, "no relay, no nack")
			if q.To.Addr == "victim:1" {
				assert.Equal(t, MsgJoin, q.Kind, "only a view request to the origin, if any")
			}
		}
		assert.Equal(t, 1, a.Stats().RelaysRefused)
		assert.Zero(t, a.Stats().NacksSent)
	}
}

// A forged ping-req from x at victim:1 for the member b: the relayed ack
// to victim:1 is bare (it was 1,291 bytes for a 48-byte ping-req, rev31),
// whether the packet came from victim:1 or from another source, and the
// ping to b carries at most twice the ping-req's bytes. (Padded so that
// it pays for its view request and the relayed ack: see
// TestPingReqPaysForRequestFirst.)
func TestForgedPingReqRelayedAckBare(t *testing.T) {
	for _, other := range []bool{false, true} {
		a := relayMember(t)
		p := padded(pingReq(Node{ID: "x", Addr: "victim:1"}, node("b"), false), 150)
		in := p.Size()
		if other {
			require.NoError(t, a.StepFromOtherSource(10*time.Millisecond, &p))
		} else {
			require.NoError(t, a.Step(10*time.Millisecond, &p))
		}
		pk, _ := drain(a)
		pings := only(t, pk, MsgPing)
		require.Len(t, pings, 1)
		assert.Equal(t, node("b"), pings[0].To)
		assert.LessOrEqual(t, pings[0].Size(), 2*in, "other %v: the ping to b", other)
		assert.Empty(t, pings[0].Broadcasts)
		toVictim := sentTo(pk, "victim:1")
		ack := Packet{Kind: MsgAck, From: node("b"), To: a.Self(), Ack: Ack{Seq: pings[0].Ping.Seq}}
		require.NoError(t, a.Step(20*time.Millisecond, &ack))
		pk, _ = drain(a)
		acks := only(t, pk, MsgAck)
		require.Len(t, acks, 1, "other %v: the ack is relayed", other)
		bare := Packet{Kind: MsgAck, From: a.Self(), To: Node{ID: "x", Addr: "victim:1"}, Ack: Ack{Seq: 7}}
		assert.Equal(t, bare, acks[0], "other %v", other)
		toVictim += sentTo(pk, "victim:1")
		assert.LessOrEqual(t, toVictim, 2*in, "other %v", other)
	}
}

// The nack of a relay for an origin not vouched for is bare too, and a
// ping-req from a member for a target the view does not hold pings it
// without the queue.
func TestRelayNackBareAndStrangerTargetPingBare(t *testing.T) {
	a := relayMember(t)
	p := padded(pingReq(Node{ID: "x", Addr: "victim:1"}, node("b"), true), 150)
	require.NoError(t, a.Step(10*time.Millisecond, &p))
	drain(a)
	pk, _ := advance(a, 3*time.Second)
	var nacks []Packet
	for _, q := range only(t, pk, MsgNack) {
		if q.To.Addr == "victim:1" {
			nacks = append(nacks, q)
		}
	}
	require.Len(t, nacks, 1)
	assert.Equal(t, Packet{Kind: MsgNack, From: a.Self(), To: Node{ID: "x", Addr: "victim:1"}, Nack: Nack{Seq: 7}}, nacks[0])

	a = relayMember(t)
	ping, _ := relayOne(t, a, pingReq(node("c"), Node{ID: "y", Addr: "elsewhere:1"}, false))
	assert.Equal(t, Packet{Kind: MsgPing, From: a.Self(), To: Node{ID: "y", Addr: "elsewhere:1"}, Ping: Ping{Seq: ping.Ping.Seq}}, ping)
}

// A member's ping-req for a target the view holds only because a packet
// (here the same member's, just before) announced it, unverified, alive
// or dead, pings it with its notice alone (Dead, when dead; nothing when
// alive): otherwise a vouched insider draws the queue to a victim's
// address with each ping-req for a ghost it planted there (user33 F3), as
// do the members whose probes of the ghost failed (F4). Verified, the
// target gets the queue and the broadcasts (the first test above). Before
// F3 the ping carried 30 updates and the 300-byte broadcast; until F4, as
// much of them as fit twice the ping-req's bytes.
func TestRelayPingToUnverifiedTargetBare(t *testing.T) {
	for _, dead := range []bool{false, true} {
		a := relayMember(t)
		y := Node{ID: "y", Addr: "victim:2"}
		g := Packet{Kind: MsgAck, From: node("c"), To: a.Self(),
			Updates: []Update{{Kind: UpdateAlive, Node: y, From: "c"}}}
		if dead {
			g.Updates = append(g.Updates, Update{Kind: UpdateDead, Node: y, From: "c"})
		}
		require.NoError(t, a.Step(6*time.Millisecond, &g))
		drain(a)
		py := a.peers["y"]
		require.NotNil(t, py, "y admitted")
		require.False(t, py.verified)
		if dead {
			require.Equal(t, StateDead, py.state)
		}
		ping, pk := relayOne(t, a, pingReq(node("c"), y, false), "dead %v", dead)
		assert.Equal(t, y, ping.To)
		want := Packet{Kind: MsgPing, From: a.Self(), To: y, Ping: Ping{Seq: ping.Ping.Seq}}
		if dead {
			want.Updates = []Update{a.viewUpdate(a.peers["y"])}
		}
		assert.Equal(t, want, ping, "dead %v", dead)
		assert.Equal(t, ping.Size(), sentTo(pk, "victim:2"))
	}
}

// The ack of a relayed ping's nonce verifies its target only from the
// address the ping went to: under the target's ID from another address
// it verifies nothing (receipt.go).
func TestRelayNonceFromOtherAddressVerifiesNothing(t *testing.T) {
	for _, addr := range []string{"elsewhere:2", "victim:2"} {
		a := relayMember(t)
		y := Node{ID: "y", Addr: "victim:2"}
		require.NoError(t, a.Step(6*time.Millisecond, &Packet{Kind: MsgAck, From: node("c"), To: a.Self(),
			Updates: []Update{{Kind: UpdateAlive, Node: y, From: "c"}}}))
		drain(a)
		require.False(t, a.peers["y"].verified)
		ping, _ := relayOne(t, a, pingReq(node("c"), y, false))
		require.NoError(t, a.Step(20*time.Millisecond, &Packet{Kind: MsgAck, From: Node{ID: y.ID, Addr: addr}, To: a.Self(), Ack: Ack{Seq: ping.Ping.Seq}}))
		assert.Equal(t, addr == y.Addr, a.peers["y"].verified, "the nonce acked from %s", addr)
	}
}

// The relays held are bounded: 64 for origins not vouched for, 128 in
// all, maxRelaysPerOrigin for each origin. 1,000 strangers at 1,000
// addresses, then 40 members asking 10 times each (4 held each, until 16
// of them fill the rest).
func TestRelaysBounded(t *testing.T) {
	peers := []string{"b", "c", "d"}
	for i := range 40 {
		peers = append(peers, fmt.Sprintf("p%02d", i))
	}
	a := newTest(t, "a", ModeLifeguard, nil, peers...)
	a.Tick(0)
	drain(a)
	const n = 1000
	for i := range n {
		p := pingReq(Node{ID: ID(fmt.Sprintf("x%d", i)), Addr: fmt.Sprintf("victim%d:1", i)}, node("b"), false)
		require.NoError(t, a.Step(10*time.Millisecond, &p))
		drain(a)
	}
	assert.Len(t, a.probing.relays, maxRelays/2, "origins not vouched for")
	assert.Equal(t, n-maxRelays/2, a.Stats().RelaysRefused)
	for i := range 40 {
		for range 10 {
			p := pingReq(node(fmt.Sprintf("p%02d", i)), node("b"), false)
			require.NoError(t, a.Step(10*time.Millisecond, &p))
			drain(a)
		}
	}
	assert.Len(t, a.probing.relays, maxRelays)
	assert.Equal(t, n-maxRelays/2+400-maxRelays/2, a.Stats().RelaysRefused)
	// Their deadlines passed: room again.
	advance(a, 3*time.Second)
	assert.Empty(t, a.probing.relays)
	p := pingReq(node("c"), node("b"), false)
	require.NoError(t, a.Step(3*time.Second, &p))
	assert.Len(t, a.probing.relays, 1)
}

// One origin, even one the view vouches for, holds at most
// maxRelaysPerOrigin relays, counted by its ID and by its address, so a
// flood from it leaves room for the other members' ping-reqs (user33 F5:
// an insider's flood filled all 128 and two members whose direct path was
// cut declared each other dead). On main before the cap, c's flood took
// all 128 and d's ping-req was refused.
func TestRelaysPerOrigin(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	const n = 1000
	var pings []Packet
	for range n {
		p := pingReq(node("c"), node("b"), false)
		require.NoError(t, a.Step(10*time.Millisecond, &p))
		pk, _ := drain(a)
		pings = append(pings, only(t, pk, MsgPing)...)
	}
	require.Len(t, a.probing.relays, maxRelaysPerOrigin)
	require.Len(t, pings, maxRelaysPerOrigin)
	assert.Equal(t, n-maxRelaysPerOrigin, a.Stats().RelaysRefused)

	// Another member is still relayed.
	relayOne(t, a, pingReq(node("d"), node("b"), true))
	assert.Len(t, a.probing.relays, maxRelaysPerOrigin+1)

	// Another ID at c's address, or c's ID at another address, counts
	// as c, even with a ping-req large enough to pay for the bare answer.
	for _, o := range []Node{{ID: "c2", Addr: "c:7946"}, {ID: "c", Addr: "elsewhere:1"}} {
		p := pingReq(o, node("b"), false)
		p.WireLen = 1000
		require.NoError(t, a.Step(10*time.Millisecond, &p))
		pk, _ := drain(a)
		assert.Empty(t, only(t, pk, MsgPing), "origin %v", o)
	}
	assert.Equal(t, n-maxRelaysPerOrigin+2, a.Stats().RelaysRefused)

	// b's ack ends one of c's relays: c may ask once more.
	ack := Packet{Kind: MsgAck, From: node("b"), To: a.Self(), Ack: Ack{Seq: pings[0].Ping.Seq}}
	require.NoError(t, a.Step(20*time.Millisecond, &ack))
	pk, _ := drain(a)
	require.Len(t, only(t, pk, MsgAck), 1)
	for range 2 {
		p := pingReq(node("c"), node("b"), false)
		require.NoError(t, a.Step(30*time.Millisecond, &p))
		drain(a)
	}
	assert.Len(t, a.probing.relays, maxRelaysPerOrigin+1)
	assert.Equal(t, n-maxRelaysPerOrigin+3, a.Stats().RelaysRefused)
}

// Origins on one IP address hold at most maxRelaysPerHost relays between
// them, whatever their ports and IDs (user37 F10): an insider announcing a
// vouched member at each of 32 ports of one address, each asking 4 times
// (maxRelaysPerOrigin), took all 128 relays (maxRelays), and d's ping-req,
// that of a member whose direct path to its target is cut, was refused.
func TestRelaysPerHost(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "d")
	var ins []Node
	for i := range 32 {
		ins = append(ins, Node{ID: ID(fmt.Sprintf("i%02d", i)), Addr: fmt.Sprintf("10.0.0.9:%d", 7000+i)})
	}
	a.Bootstrap(ins)
	a.Tick(0)
	drain(a)
	silent := Node{ID: "s", Addr: "10.0.0.8:1"} // held nowhere: a vouched origin's ping-req is relayed anyway
	for _, o := range ins {
		for range maxRelaysPerOrigin {
			p := pingReq(o, silent, true)
			require.NoError(t, a.Step(10*time.Millisecond, &p))
			drain(a)
		}
	}
	require.Equal(t, maxRelaysPerHost, len(a.probing.relays), "a quarter of the 128")
	assert.Equal(t, 32*4-32, a.Stats().RelaysRefused)

	// d, on another host, is still relayed.
	ping, _ := relayOne(t, a, pingReq(node("d"), node("b"), true))
	assert.Equal(t, node("b"), ping.To)

	// The same IP address written as IPv4-mapped IPv6 counts as the same
	// host; another address of the same /24 does not.
	a.Bootstrap([]Node{{ID: "m", Addr: "[::ffff:10.0.0.9]:8000"}, {ID: "n", Addr: "10.0.0.10:7000"}})
	for _, o := range []Node{{ID: "m", Addr: "[::ffff:10.0.0.9]:8000"}, {ID: "n", Addr: "10.0.0.10:7000"}} {
		p := pingReq(o, node("b"), false)
		require.NoError(t, a.Step(10*time.Millisecond, &p))
		drain(a)
	}
	assert.Equal(t, maxRelaysPerHost+2, len(a.probing.relays))
	assert.Equal(t, 32*4-32+1, a.Stats().RelaysRefused)
}

// A member's ping-reqs go to members of as many hosts as it can: with
// 32 members of one host (an insider's ports, acking pings, relaying
// nothing) beside c and d, each probe of b asks c and d and one of the
// 32 (user37 F10: chosen at random, the three were all the insider's in
// most probes, and two members whose direct path was cut declared each
// other dead). Members of distinct hosts are drawn as pickKnown draws
// them (TestSpreadHostsKeepsDistinct).
func TestPingReqsSpreadOverHosts(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	var ins []Node
	for i := range 32 {
		ins = append(ins, Node{ID: ID(fmt.Sprintf("i%02d", i)), Addr: fmt.Sprintf("10.0.0.9:%d", 7000+i)})
	}
	a.Bootstrap(ins)
	for range 50 {
		a.pr.target = a.peers["b"]
		a.sendPingReqs()
		pk, _ := drain(a)
		var to []string
		for _, p := range only(t, pk, MsgPingReq) {
			to = append(to, p.To.Addr)
		}
		require.Len(t, to, 3)
		assert.Contains(t, to, "c:7946")
		assert.Contains(t, to, "d:7946")
	}
}

// spreadHosts changes nothing, and draws nothing, when the hosts differ.
func TestSpreadHostsKeepsDistinct(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e")
	twin := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e")
	chosen := []*peer{a.peers["c"], a.peers["b"], a.peers["e"]}
	got := a.spreadHosts(slices.Clone(chosen), func(*peer) bool { return true })
	assert.Equal(t, chosen, got)
	assert.Equal(t, twin.rng.Uint64(), a.rng.Uint64(), "no draw")
}

// hostOf counts origins by IP address, or by what precedes the port.
func TestHostOf(t *testing.T) {
	for addr, want := range map[string]string{
		"10.0.0.9:7946":          "10.0.0.9",
		"[::ffff:10.0.0.9]:7946": "10.0.0.9",
		"[fe80::1%eth0]:7946":    "fe80::1",
		"[2001:db8::1]:1":        "2001:db8::1",
		"c:7946":                 "c",
		"host.example:80":        "host.example",
		"n12":                    "n12",
		"":                       "",
	} {
		assert.Equal(t, want, hostOf(addr), "%q", addr)
	}
}

// A ping-req from a stranger that pays for the view request it draws but
// not for the relayed answer too is not relayed: the request, which
// tells this member who the stranger is, goes first. Here a 48-byte
// ping-req draws a 71-byte request (this member's Alive with 6 bytes of
// metadata), and 2×48 − 71 = 25 bytes are left, less than the 36-byte
// bare ack (ID "a", "a:7946"; "x", "victim:1").
func TestPingReqPaysForRequestFirst(t *testing.T) {
	a := relayMember(t)
	p := pingReq(Node{ID: "x", Addr: "victim:1"}, node("b"), false)
	require.Equal(t, 48, p.Size())
	bare := Packet{Kind: MsgAck, From: a.Self(), To: p.From}
	require.Equal(t, 36, bare.Size())
	require.NoError(t, a.Step(10*time.Millisecond, &p))
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	assert.Equal(t, MsgJoin, pk[0].Kind)
	assert.Equal(t, 71, pk[0].Size())
	assert.Equal(t, 1, a.Stats().RelaysRefused)
}

// Ping-reqs forged in a member's name from its address (c, vouched),
// naming a member that acks at once (b, verified): five a protocol
// period for five periods. Each draws one relayed ping to b, and the
// origin's budget of queued answers (queuedAnswer: one a period, a burst
// of three) let one a period carry the whole queue, 2.4× the forged bytes
// over a real group (issue 27, user40 F2). Now every relayed ping is
// within twice its ping-req's bytes, and so are all of them together.
func TestForgedPingReqsRelayedWithinTwice(t *testing.T) {
	a := relayMember(t)
	now := 10 * time.Millisecond
	sent, recv := 0, 0
	for i := range 25 {
		req := pingReq(node("c"), node("b"), false)
		req.PingReq.Seq = uint32(100 + i)
		require.NoError(t, a.Step(now, &req))
		recv += a.recvBytes(&req)
		pk, _ := drain(a)
		pings := only(t, pk, MsgPing)
		require.Len(t, pings, 1, "ping-req %d relayed", i)
		sent += a.sentBytes(&pings[0])
		assert.LessOrEqual(t, a.sentBytes(&pings[0]), 2*a.recvBytes(&req), "ping-req %d", i)
		require.NoError(t, a.Step(now+time.Millisecond, &Packet{Kind: MsgAck, From: node("b"), To: a.Self(), Ack: Ack{Seq: pings[0].Ping.Seq}}))
		drain(a)
		now += a.cfg.ProbeInterval / 5
	}
	t.Logf("to b %d B for %d B of ping-reqs: %.2f×", sent, recv, float64(sent)/float64(recv))
	assert.LessOrEqual(t, sent, 2*recv)
	assert.Zero(t, a.Stats().RelaysRefused)
}

// A ping-req too small to pay for the bare ping it asks for (to a member
// with a 255-byte ID, which the ping carries as its sender, and the
// ping-req, without the receiver's ID, does not) is not relayed.
func TestPingReqSmallerThanHalfItsPingNotRelayed(t *testing.T) {
	a := relayMember(t)
	a.self.ID = ID(bytes.Repeat([]byte("a"), MaxIDLen))
	req := Packet{Kind: MsgPingReq, From: node("c"), PingReq: PingReq{Seq: 7, Target: node("b")}}
	ping := Packet{Kind: MsgPing, From: a.Self(), To: node("b")}
	require.Greater(t, a.sentBytes(&ping), 2*a.recvBytes(&req), "the case under test")
	require.NoError(t, a.Step(10*time.Millisecond, &req))
	pk, _ := drain(a)
	assert.Empty(t, only(t, pk, MsgPing))
	assert.Equal(t, 1, a.Stats().RelaysRefused)
}
