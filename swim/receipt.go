package swim

import (
	"net/netip"
	"time"
)

// Verification by proof of receipt (verify.go). A member is verified at an
// address when it shows that it receives what is sent there: it acks, from
// that address and under its ID, a ping of this member's whose sequence
// number was drawn from the member's random source (nonce). The address a
// packet comes from proves nothing in plain mode: a datagram's source is
// whatever its sender writes, and one spoofed datagram per ghost, from the
// victim's address the ghost claims, verified the ghost, which then drew
// the queue, ping-reqs and pushes there (issue 27, user38 F2: 8-10× the
// attacker's bytes), and took a known member's probe turn for good (F3:
// 200 refreshed ghosts hid a real crash for over 120 s). So a packet from
// an unverified member's own address is a sign of life (heard) and draws
// one bare challenge ping (challengeSender); its ack, or the ack of this
// member's probe of it, which carries a nonce too (startProbe), verifies
// it (onAck). A round's probe number (2r, probeorder.go) is predictable,
// so only pings to verified members carry it.
//
// What this member sends an unverified member at its address is paid
// for by what came from there: each member not verified keeps a ledger
// (peer.credit). Each packet from its address (not StepFromOtherSource;
// a stream's packet from its IP address, StepSourceChecked, counts: its
// host sent those bytes) credits twice its bytes (Packet.WireLen or Size), less the bare ack it
// draws at once (reply.go) when that is positive (earn), up to ledgerCap; a challenge and each probe
// ping to it spend their bytes. So spoofed packets make this member send
// their claimed address no more than twice their bytes, whatever their
// sequence (TestLedgerBoundsSpoofedAddress), but for one thing: a member
// never heard from at its address (known by gossip, peer.direct false)
// gets its first probe ping there unpaid, as a real member announced by
// others must be pinged to be verified (verify.go, “what is sent to or
// about it”); one only, revivals by gossip included, while it is held
// at that address (peer.pinged): a ghost revived by a gossiped Alive
// after each failed probe drew one ping per revival from every member
// that held it (issue 27, user40 F4; docs/experiments.md, “SWIM: one
// unpaid ping per gossiped member”). A real member probes this one
// within a round, and its ping pays from then on. The ledger replaces a rule per packet (a challenge only when the
// packet that draws it pays for it and its ack): under that rule and
// with the challenge standing for the next probe (no ping), a real
// joiner's lost challenge or ack made that probe fail for certain, and
// one failed probe suspects an unverified member; 32 members joining
// through one seed raised 116 false suspicions over 60 runs at 1 % loss
// instead of 2, and 411 at 5 % instead of 36 (docs/experiments.md, “SWIM:
// real joiners under loss and the challenge ledger”). A real member's
// packets carry gossip and pay for the challenge and its probes; a
// ghost's one spoofed datagram pays for its challenge and not much more.
//
// The rules: a challenge goes only when the ledger pays for it, one per
// member outstanding at a time, for a probe timeout (peer.chalUntil),
// and at most PullsPerPeriod per ProbeInterval from all senders together,
// like the join challenges (joinchallenge.go), of which the members at
// one source prefix draw at most seven eighths, and three quarters with
// packets other than pings (prefixChallenges). A probe of an unverified
// member reuses its outstanding nonce (peer.chal: a late ack of the
// challenge or of the last probe answers it) and sends its ping when the
// ledger pays or the member, never heard from directly, has not had its
// unpaid ping; otherwise no
// ping leaves (probe.silent) and the probe fails unless the challenge's
// ack comes. An unverified member whose probe failed gets one more probe
// at once when the ledger pays for its ping (failProbe), charged to the
// probe budget of unverified members (nextTarget), before it is
// suspected. A challenge is bare: no queue, no notice; and so is the ack
// that answers it (challengePing).

// ledgerCap is the most an unverified member's ledger holds, in units
// of Config.MaxPacketSize: what a real member's packets earned pays for a
// few challenges and probes, and a sender cannot bank bytes for later.
const ledgerCap = 2

// nonce returns a sequence number from the member's random source, 3
// modulo 4: odd, so that it is never taken for a round of the probe order
// (hearRound), and apart from otherSeq's (1 modulo 4), so that the
// receiver can tell a challenge (challengePing).
func (m *Member) nonce() uint32 {
	return m.rng.Uint32() | 3
}

// challengePing reports whether pkt is a ping as this package sends to a
// member it has not verified (a challenge, a probe or relayed ping with a
// nonce): bare, numbered 3 modulo 4. Its sender holds this member
// unverified, and the ack it waits for goes without the queue (reply):
// a member that announces itself to many at once (a merging group's seed
// telling the other group's members, join.go) is challenged by all of them
// at once, and acks carrying its queue spent the retransmissions of the
// other group's Alives on members that knew them: 80 + 80 members merged
// in 2.5 min instead of 2 s (swim/sim TestMergeTwoGroupsFullView). No
// other ping is numbered 3 modulo 4 (rounds are even, otherSeq's 1
// modulo 4), except in ShuffledProbes, whose pings are numbered by one
// counter: there a challenge cannot be told from a probe, and its ack
// carries the queue as any other.
func (m *Member) challengePing(pkt *Packet) bool {
	return !m.cfg.ShuffledProbes && pkt.Kind == MsgPing && pkt.Ping.Seq&3 == 3 && len(pkt.Updates) == 0 && len(pkt.Broadcasts) == 0
}

// earn credits the ledger of s, the unverified member held at the address
// pkt came from, with twice pkt's bytes less the bare ack pkt draws, if
// that is positive, up to ledgerCap MaxPacketSize, and notes that s was
// heard from there. A ping shorter than half its ack (one without its To
// ID, to a member whose own node is long) debits nothing: its ack goes
// anyway (reply.go), and a flood of such pings spoofed from a joiner's
// address left its ledger that much in debt, for good, so that neither
// its challenge nor its probe pings were paid again.
func (m *Member) earn(s *peer, from Node, pkt *Packet) {
	s.direct = true
	s.credit = min(s.credit+max(0, 2*m.recvBytes(pkt)-m.bareReplySize(from, pkt)), ledgerCap*m.cfg.MaxPacketSize)
}

// bareNoncePing returns the bare ping with a nonce this member sends p
// (a challenge, or a probe of a member not verified) and its bytes on the
// wire (sentBytes), before its sequence number is set (its size does not
// depend on it).
func (m *Member) bareNoncePing(p *peer) (Packet, int) {
	ping := Packet{Kind: MsgPing, From: m.self, To: p.node, Ping: Ping{MatchBySeq: true, Verifies: true}}
	return ping, m.sentBytes(&ping)
}

// pays reports whether p's ledger pays for a bare ping of bytes.
func pays(p *peer, bytes int) bool {
	return p.credit >= bytes
}

// challengeSender sends s, the unverified live member held at the address
// a packet came from, one bare ping with a nonce (challenge), unless one
// to s is outstanding, s's ledger does not pay for it, or this period's
// challenges are spent: all of them, or its source prefix's share, which
// is larger for pings (pinged; prefixChallenges).
func (m *Member) challengeSender(now time.Duration, s *peer, pinged bool) {
	if m.st != running || s.verified || (s.state != StateAlive && s.state != StateSuspect) || now < s.chalUntil {
		return
	}
	ping, bytes := m.bareNoncePing(s)
	if !pays(s, bytes) {
		return
	}
	if now >= m.probing.chalPeriodEnd {
		m.probing.chalPeriodEnd, m.probing.chals = now+m.cfg.ProbeInterval, 0
		clear(m.probing.chalsFrom)
	}
	if m.probing.chals >= m.cfg.PullsPerPeriod {
		// before challengePrefix, which allocates: a flood past the
		// period's budget costs no allocation here
		m.stats.VerifyChallengesRefused++
		return
	}
	prefix := challengePrefix(s.node.Addr)
	from := m.probing.chalsFrom[prefix]
	all, other := prefixChallenges(m.cfg.PullsPerPeriod)
	if from.all >= all || !pinged && from.other >= other {
		m.stats.VerifyChallengesRefused++
		return
	}
	if m.probing.chalsFrom == nil {
		m.probing.chalsFrom = make(map[string]prefixChals)
	}
	m.probing.chals++
	from.all++
	if !pinged {
		from.other++
	}
	m.probing.chalsFrom[prefix] = from
	s.credit -= bytes
	s.chal, s.chalUntil = m.nonce(), now+m.probeTimeout(s)
	ping.Ping.Seq = s.chal
	m.stats.VerifyChallenges++
	// Its ack, without IDs as the ping asks, is matched by AckSender.
	m.probing.sentChallenges.add(m.challengesKept(), ping.Ping.Seq, s.node.ID)
	m.ready.packets = append(m.ready.packets, ping)
}

// prefixChallenges returns how many of a period's challenges (pulls of
// them) the members of one source prefix may draw: all, at most all but
// an eighth, and other, with packets other than pings, at most all but a
// quarter. A flood of packets spoofed from one prefix, of any kind, then
// leaves the members of other prefixes an eighth of the challenges, and
// a flood of other packets leaves another eighth to the pings from its
// own prefix (user39 F6: ghosts re-announcing themselves from one
// address spent every period's challenges, and a real joiner drew none
// for 30 s), while a group merging from one prefix (a LAN) gets most of
// them. A real member pings the members it learns of (its probes); a
// flood of spoofed pings from a joiner's own prefix still spends its
// challenges.
func prefixChallenges(pulls int) (all, other int) {
	return max(1, pulls-pulls/8), max(1, pulls-pulls/4)
}

// prefixChals counts a period's challenges drawn from one source prefix:
// all, and other, drawn by packets other than pings (prefixChallenges).
type prefixChals struct{ all, other int }

// challengePrefix returns the source prefix that addr's challenges count
// against (prefixChallenges): its IPv4 /24 or IPv6 /64, an IPv4-mapped
// IPv6 address taken as IPv4, or, for an address that is not an IP
// address and port (a host name), its host (hostOf), a prefix of its own.
func challengePrefix(addr string) string {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return hostOf(addr)
	}
	ip, bits := ap.Addr().Unmap().WithZone(""), 64
	if ip.Is4() {
		bits = 24
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return hostOf(addr)
	}
	return p.String()
}

// challengeAcked verifies s, whose ack from its address echoes the nonce
// of the challenge sent to s (challengeSender), late or not: it shows s
// received it there (onAck).
func (m *Member) challengeAcked(s *peer) {
	s.chal, s.chalUntil = 0, 0
	m.verify(s)
}
