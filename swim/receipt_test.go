package swim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// challengeTo returns the challenge ping (receipt.go) among out to id: a
// bare ping with an odd sequence number, the nonce m holds for id. It
// fails the test when there is none.
func challengeTo(t *testing.T, m *Member, out []Packet, id ID) Packet {
	t.Helper()
	for _, p := range out {
		if p.Kind == MsgPing && p.To.ID == id && len(p.Updates) == 0 && p.Ping.Seq&1 == 1 && m.peers[id] != nil && m.peers[id].chal == p.Ping.Seq {
			return p
		}
	}
	require.Failf(t, "no challenge", "to %s among %d packets", id, len(out))
	return Packet{}
}

// stepAnswered steps pkt into m at now, then the ack of the challenge ping
// m sends pkt's sender for it, as a sender that receives at its address
// answers it. It returns m's output for pkt.
func stepAnswered(t *testing.T, m *Member, now time.Duration, pkt *Packet) []Packet {
	t.Helper()
	require.NoError(t, m.Step(now, pkt))
	out, _ := drain(m)
	ping := challengeTo(t, m, out, pkt.From.ID)
	require.NoError(t, m.Step(now, &Packet{Kind: MsgAck, From: pkt.From, To: m.Self(), Ack: Ack{Seq: ping.Ping.Seq}}))
	return out
}

// A packet from the address a member is held at is a sign of life, not a
// proof that it receives there (issue 27, user38 F2: one spoofed datagram
// per ghost verified it): it draws one bare challenge ping with a nonce,
// and only the ack echoing that nonce, from the member's address and
// under its ID, verifies it. Acks with another number, or from another
// source, do not; nor does a packet while the challenge is outstanding
// draw a second one.
func TestHeardIsNotVerified(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	g := Node{ID: "ghost", Addr: "victim:1"}
	alive := []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgGossip, From: g, To: a.Self(), Updates: alive}))
	out, _ := drain(a)
	p := a.peers["ghost"]
	require.NotNil(t, p)
	assert.Equal(t, StateAlive, p.state)
	assert.False(t, p.verified, "a packet from its address does not verify it")
	assert.Equal(t, 1, a.unverified)
	require.Len(t, out, 1, "the challenge alone")
	ch := challengeTo(t, a, out, "ghost")
	assert.Equal(t, g, ch.To)
	assert.Equal(t, 1, a.Stats().VerifyChallenges)
	// A second packet while the challenge is outstanding draws none.
	require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgGossip, From: g, To: a.Self(), Updates: alive}))
	out, _ = drain(a)
	assert.Empty(t, out)
	// Acks with the wrong number, the round's, or from another source.
	for _, seq := range []uint32{ch.Ping.Seq + 2, ch.Ping.Seq ^ 1, a.probing.round << 1, 0} {
		require.NoError(t, a.Step(3*time.Millisecond, &Packet{Kind: MsgAck, From: g, To: a.Self(), Ack: Ack{Seq: seq}}))
		assert.False(t, p.verified, "seq %d", seq)
	}
	require.NoError(t, a.StepFromOtherSource(3*time.Millisecond, &Packet{Kind: MsgAck, From: g, To: a.Self(), Ack: Ack{Seq: ch.Ping.Seq}}))
	assert.False(t, p.verified, "the right number from another source")
	// Under another ID at the same address.
	require.NoError(t, a.Step(3*time.Millisecond, &Packet{Kind: MsgAck, From: node("b"), To: a.Self(), Ack: Ack{Seq: ch.Ping.Seq}}))
	assert.False(t, p.verified, "the right number under another ID")
	// Under its ID from another address.
	require.NoError(t, a.Step(3*time.Millisecond, &Packet{Kind: MsgAck, From: Node{ID: g.ID, Addr: "elsewhere:1"}, To: a.Self(), Ack: Ack{Seq: ch.Ping.Seq}}))
	assert.False(t, p.verified, "the right number from another address")
	assert.Equal(t, g, p.node)
	assert.Equal(t, 1, a.unverified)
	require.NoError(t, a.Step(4*time.Millisecond, &Packet{Kind: MsgAck, From: g, To: a.Self(), Ack: Ack{Seq: ch.Ping.Seq}}))
	assert.True(t, p.verified, "the challenge's nonce, from its address")
	assert.Zero(t, a.unverified)
	assert.Equal(t, 1, a.Stats().VerifyChallenges)
}

// A challenge acked by a member whose address another verified live
// member holds leaves it unverified (verify: one verified member per
// address), and ends the challenge: no stale nonce stands for its next
// probe (startProbe's silent probe).
func TestChallengeAckedAtTakenAddressEndsChallenge(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	g := Node{ID: "ghost", Addr: node("b").Addr}
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgGossip, From: g, To: a.Self(),
		Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}))
	out, _ := drain(a)
	ch := challengeTo(t, a, out, "ghost")
	require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgAck, From: g, To: a.Self(), Ack: Ack{Seq: ch.Ping.Seq}}))
	p := a.peers["ghost"]
	assert.False(t, p.verified, "b is verified at that address")
	assert.Zero(t, p.chal, "the challenge is over")
}

// An unverified member's probe carries a nonce, not the round's number
// (2r, predictable by anyone the group probes): an ack forged with 2r, in
// the target's name and from its address, answers no probe and verifies
// nothing; the ack with the nonce verifies it. A verified member's probe
// keeps the round's number.
func TestProbeOfUnverifiedCarriesNonce(t *testing.T) {
	a := newTest(t, "a", ModeSWIM, nil)
	g := Node{ID: "g", Addr: "victim:1"}
	require.NoError(t, a.Step(0, &Packet{Kind: MsgGossip, From: node("b"), To: a.Self(),
		Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}))
	drain(a)
	require.False(t, a.peers["g"].verified)
	a.Tick(0)
	out, _ := drain(a)
	pings := only(t, out, MsgPing)
	require.Len(t, pings, 1)
	require.Equal(t, g, pings[0].To)
	seq := pings[0].Ping.Seq
	round := a.probing.round << 1
	require.NotEqual(t, round, seq)
	assert.Equal(t, uint32(1), seq&1, "odd: never a round")
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgAck, From: g, To: a.Self(), Ack: Ack{Seq: round}}))
	assert.False(t, a.peers["g"].verified, "a forged ack numbered 2r")
	assert.True(t, a.pr.active, "answers no probe")
	require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgAck, From: g, To: a.Self(), Ack: Ack{Seq: seq}}))
	assert.True(t, a.peers["g"].verified)
	assert.False(t, a.pr.active, "answered")
	// Verified, its next probe carries the round's number.
	var found bool
	tickUntil(a, 3*time.Second, func(_ time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			if p.Kind == MsgPing && p.To.ID == "g" && !found {
				found = true
				assert.Equal(t, a.probing.round<<1, p.Ping.Seq)
			}
		}
	})
	assert.True(t, found, "probed again")
}

// The ack of a probe's nonce, under the target's ID but from another
// address than the one the nonce went to, does not verify the target:
// it shows nothing about who receives there.
func TestProbeNonceFromOtherAddressVerifiesNothing(t *testing.T) {
	a := newTest(t, "a", ModeSWIM, nil)
	g := Node{ID: "g", Addr: "victim:1"}
	require.NoError(t, a.Step(0, &Packet{Kind: MsgGossip, From: node("b"), To: a.Self(),
		Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}))
	drain(a)
	a.Tick(0)
	out, _ := drain(a)
	pings := only(t, out, MsgPing)
	require.Len(t, pings, 1)
	require.Equal(t, g, pings[0].To)
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgAck, From: Node{ID: g.ID, Addr: "elsewhere:1"}, To: a.Self(), Ack: Ack{Seq: pings[0].Ping.Seq}}))
	assert.False(t, a.peers["g"].verified, "the nonce from another address")
}

// answerChallenge has b answer the challenge ping a sent it among out
// (receipt.go): b steps it and a steps b's ack, at now.
func answerChallenge(t *testing.T, a, b *Member, now time.Duration, out []Packet) {
	t.Helper()
	ping := challengeTo(t, a, out, b.Self().ID)
	require.NoError(t, b.Step(now, &ping))
	back, _ := drain(b)
	acks := 0
	for _, p := range back {
		if p.Kind == MsgAck && p.To.ID == a.Self().ID {
			acks++
			require.NoError(t, a.Step(now, &p))
		}
	}
	require.Equal(t, 1, acks)
	require.True(t, a.peers[b.Self().ID].verified)
}

// A challenge, a bare ping numbered 3 modulo 4, is answered with a bare
// ack even by a member that holds the challenger verified: the queue
// goes with the pings of rounds and the other pings (1 modulo 4).
func TestChallengeAnsweredBare(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
	a.enqueue(Update{Kind: UpdateAlive, Node: node("x"), From: "x"})
	now := time.Millisecond
	for _, c := range []struct {
		seq  uint32
		bare bool
	}{{7, true}, {4, false}, {5, false}} {
		// A period apart: one answer a period carries the queue (reply.go).
		now += a.cfg.ProbeInterval
		require.NoError(t, a.Step(now, &Packet{Kind: MsgPing, From: node("b"), To: a.Self(), Ping: Ping{Seq: c.seq}}))
		out, _ := drain(a)
		acks := only(t, out, MsgAck)
		require.Len(t, acks, 1)
		assert.Equal(t, c.bare, !hasUpdate(acks[0], UpdateAlive, "x", 0), "seq %d", c.seq)
	}
}

// A packet draws a challenge only when the challenge ping and the bare
// ack it draws take at most twice the packet's bytes (receipt.go): a
// member whose own node is long, which a packet need not name (To left
// empty), gets a sender's small Alive and sends no challenge, so that a
// spoofed packet makes it send the claimed address no more than twice
// what the packet carried; with a short node the same packet draws one.
func TestChallengeOnlyWhenPaidFor(t *testing.T) {
	for _, c := range []struct {
		self string
		want int
	}{{"a", 1}, {strings.Repeat("a", 200), 0}} {
		a := newTest(t, c.self, ModeLifeguard, nil)
		a.Tick(0)
		drain(a)
		g := Node{ID: "g", Addr: "victim:1"}
		pkt := Packet{Kind: MsgGossip, From: g, Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}
		require.NoError(t, a.Step(10*time.Millisecond, &pkt))
		out, _ := drain(a)
		var bytes int
		for _, p := range out {
			if p.To.ID == "g" {
				bytes += a.sentBytes(&p)
			}
		}
		assert.Equal(t, c.want, a.Stats().VerifyChallenges, "self of %d bytes", len(c.self))
		assert.LessOrEqual(t, bytes, 2*a.recvBytes(&pkt), "self of %d bytes", len(c.self))
		assert.False(t, a.peers["g"].verified)
	}
}

// A stream from a member's IP address (StepSourceChecked) proves the
// host, not the port it claims (issue 27, user40 F1: two view frames per
// ghost over streams from one host verified ghosts at any port of it).
// Its packets from a held sender are a sign of life that draws the usual
// challenge, credited to the ledger like a datagram's, and verify nothing
// until the challenge's ack comes.
func TestSourceCheckedIsNotVerified(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	g := Node{ID: "ghost", Addr: "10.0.0.1:21000"}
	sync := Packet{Kind: MsgSync, From: g, To: a.Self(), Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID, Incarnation: 1}}}
	require.NoError(t, a.StepSourceChecked(time.Millisecond, &sync))
	require.NotNil(t, a.peers["ghost"])
	assert.False(t, a.peers["ghost"].verified, "the first frame adds it")
	out, _ := drain(a)
	ch := challengeTo(t, a, out, "ghost")
	assert.Equal(t, g, ch.To)
	assert.Empty(t, ch.Updates, "bare")
	require.NoError(t, a.StepSourceChecked(2*time.Millisecond, &sync))
	p := a.peers["ghost"]
	assert.False(t, p.verified, "a second frame, from a held sender, does not verify it")
	assert.Positive(t, p.credit, "the frames' bytes are credited to its ledger")
	out, _ = drain(a)
	assert.Empty(t, out, "one challenge outstanding at a time")
	require.NoError(t, a.StepSourceChecked(3*time.Millisecond, &Packet{Kind: MsgAck, From: g, To: a.Self(), Ack: Ack{Seq: ch.Ping.Seq}}))
	assert.True(t, p.verified, "the challenge's ack, from its address, verifies it")
}
