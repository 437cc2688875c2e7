package swim

import (
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Mode selects how much of Lifeguard and of the detector-driven design a
// Member uses. The zero value is the full design.
type Mode uint8

const (
	// ModeDetector is SWIM + Lifeguard + detector-driven timing (the
	// default): every probe's direct timeout comes from the peer's RTT
	// estimator, and a failed probe of a peer that the peer's own failure
	// detector still trusts is retried once, at once, before the peer is
	// suspected, unless its stream ping was refused (see the package doc).
	ModeDetector Mode = iota
	// ModeLifeguard is SWIM with all three Lifeguard components (local
	// health multiplier with nacks, dynamic suspicion timeouts, buddy
	// system) and a fixed probe timeout, like hashicorp/memberlist.
	ModeLifeguard
	// ModeSWIM is plain SWIM with suspicion: fixed probe timeout, no local
	// health multiplier, no nacks, no buddy system, and a fixed suspicion
	// timeout α·max(1, log10 n)·ProbeInterval (Lifeguard's baseline: β = 1).
	ModeSWIM
)

// String returns the mode's name.
func (m Mode) String() string {
	switch m {
	case ModeDetector:
		return "swim+lifeguard+detector"
	case ModeLifeguard:
		return "swim+lifeguard"
	case ModeSWIM:
		return "swim"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Defaults of Config (memberlist's DefaultLANConfig, docs/algorithms.md,
// “Lifeguard suspicion timeout”).
const (
	DefaultProbeInterval            = time.Second
	DefaultProbeTimeout             = 500 * time.Millisecond
	DefaultIndirectChecks           = 3
	DefaultRetransmitMult           = 4
	DefaultSuspicionMult            = 4
	DefaultSuspicionMaxTimeoutMult  = 6
	DefaultMaxLocalHealthMultiplier = 8
	DefaultMaxPacketSize            = 1400
	DefaultReconnectInterval        = 30 * time.Second
	DefaultPushPullInterval         = 30 * time.Second
	DefaultRTTDeviations            = 4.0
	DefaultGossipFanout             = 2
	DefaultGossipInterval           = 200 * time.Millisecond
	DefaultDeadRetention            = 15 * time.Minute
	DefaultMaxMembers               = 16384
	DefaultPullsPerSender           = 2
	DefaultPullsPerPeriod           = 128
)

// Config configures a Member. The zero value of every field except Self
// means the documented default. Pointer fields follow fdkit's rule on zero
// (see package detector): nil is the default and new(v) says any value,
// zero included (0 turns the feature off where the field says so); negative
// values are errors. New fills every pointer field in its copy.
type Config struct {
	// Self is this member's ID and address, both required (the other
	// members send to the address, and refuse updates naming a member
	// without one) and at most 255 bytes.
	Self Node

	// Mode selects plain SWIM, SWIM + Lifeguard, or (default) SWIM +
	// Lifeguard + detector-driven timing.
	Mode Mode

	// ProbeInterval is the base protocol period T' (default 1 s). Under
	// Lifeguard the period is ProbeInterval·(LHM+1) with LHM the local health
	// multiplier's score. New refuses a configuration whose longest timer
	// (the longest period, the longest suspicion timeout for MaxMembers
	// members, a leave, the anti-entropy interval of the largest group,
	// DeadRetention...) exceeds 2^60 ns, about 36.5 years: past it a
	// timer could wrap around into the past and fire at once.
	ProbeInterval time.Duration
	// ProbeTimeout is the base direct-ping timeout (default 500 ms), scaled
	// like the period by LHM+1. In ModeDetector a peer's direct timeout
	// comes from its RTT estimator once it has a sample, before that from
	// the group-wide estimator (every direct ack of every peer) once that
	// has one; ProbeTimeout remains, for a peer with no sample of its own,
	// how long a ping-req relay waits for it before its nack and the least
	// the detector gate's retry waits for its ack.
	ProbeTimeout time.Duration
	// MinProbeTimeout and MaxProbeTimeout clamp the RTT-derived probe
	// timeout of ModeDetector before it is scaled by LHM+1. Defaults
	// ProbeTimeout/5 (100 ms) and ProbeTimeout (500 ms); at most
	// ProbeInterval. new(0) leaves the RTT-derived timeout without a floor.
	MinProbeTimeout *time.Duration
	MaxProbeTimeout time.Duration
	// RTTDeviations is the multiplier K of the default RTT estimator's
	// timeout SRTT + K·RTTVAR (default 4, RFC 6298).
	RTTDeviations float64

	// IndirectChecks is k, the number of members asked to ping-req a target
	// whose direct probe timed out (default 3; 0: no indirect probes).
	IndirectChecks *int
	// RetransmitMult is λ: each update is piggybacked at most
	// λ·ceil(log10(n+1)) times (default 4).
	RetransmitMult int
	// Lifeguard holds the suspicion timeout's multipliers and the bound
	// of the local health multiplier.
	Lifeguard

	// GossipFanout (Lifeguard modes) is the number of random members an
	// update is pushed to at once, in a MsgGossip packet, besides being
	// piggybacked: this member's own confirmation of a suspicion (also sent
	// to the members known to suspect), its own declaration of a death, and
	// a refutation that ends a suspicion this member held (forwarded once).
	// A suspicion it raises goes at once to the suspect only, its own leave
	// to GossipFanout random members, and a leave it knows of to the sender
	// and declarer of a Dead about the leaver. Heard suspicions are not
	// forwarded, and a heard declaration only by a member that suspected
	// the dead member too (once, to GossipFanout random members), so an
	// accusation costs at most GossipFanout+K+1 packets from the member
	// that makes it until it is corroborated; refutations and corroborated
	// declarations cost at most GossipFanout packets per member that held
	// the suspicion, and a member forwards at most 4·GossipFanout packets
	// per protocol period. A group without failures or leaves sends none. Default 2
	// (DefaultGossipFanout, chosen in swim/sim: see the package doc);
	// new(0) disables it. ModeSWIM ignores it (plain SWIM disseminates by
	// piggybacking only).
	GossipFanout *int

	// GossipInterval (Lifeguard modes, with GossipFanout > 0) is the pace
	// of the drain loop: while the dissemination queue holds updates, every
	// GossipInterval this member sends them, least sent first, in one
	// MsgGossip to each of GossipFanout random members, each packet
	// counting as a transmission toward the λ·ceil(log10(n+1)) limit (the
	// role of memberlist's gossip loop, every 200 ms to 3 members). Alive
	// updates, leaves and declarations go every round, suspicions never
	// (they ride on pings and acks). The queue then
	// empties within a second of a group forming instead of riding on pings
	// and acks for seconds, and a declaration reaches the whole group about
	// 0.5 s sooner; a queue without such updates sends nothing. Default 200 ms
	// (DefaultGossipInterval); new(0) disables the loop (updates are then
	// piggybacked only, and declarations gossiped once per period). See
	// docs/algorithms.md, “SWIM dissemination”.
	GossipInterval *time.Duration

	// MaxPacketSize bounds every packet's estimated size (Packet.Size) in
	// bytes (default 1400). Piggybacked updates that do not fit wait. IDs
	// and addresses must leave room: a header alone (three nodes for a
	// ping-req) is never cut, see Packet.Size.
	MaxPacketSize int

	// WireOverhead is how many bytes, at most, the transport adds to each
	// packet's encoding (Packet.Size) on the wire: an envelope, a seal's
	// nonce and tag, a timestamp (swim/agent sets it from its codec). The
	// bounds on what a sender the view does not vouch for can make this
	// member send (reply.go, viewretry.go) count each packet sent as its
	// Size plus WireOverhead, and each packet received as its WireLen, or
	// its Size plus WireOverhead when WireLen is 0. Default 0; it must not
	// be negative nor reach MaxPacketSize.
	WireOverhead int

	// SyncProbes starts the probe periods at the first Tick. By default the
	// first probe comes at a random point of the first period (drawn from
	// the member's random source), as memberlist staggers its probe loop:
	// members started together would otherwise probe on one common grid,
	// so that their probes of a peer, the suspicions those raise and the
	// Lifeguard timers those start move in step, and a crash is declared
	// by the whole group at one instant that depends only on when the
	// group was started. SWIM needs no common grid: it requires no
	// synchronized clocks, and its properties hold with T' the members'
	// average period (§3.1). swim/sim always sets SyncProbes and spreads
	// its members' starts with its own StartSpread instead.
	SyncProbes bool

	// ShuffledProbes probes in SWIM's own order (§4.3): each member's
	// round-robin over its own randomly shuffled list of the others,
	// reshuffled after each pass. By default the members probe in one
	// common order, the ring, each round's probers a permutation of its
	// members, so that every member is probed once per period rather than
	// by Poisson(1) probers, and the first probe of a crashed member comes
	// within two periods (probeorder.go; docs/experiments.md, “SWIM: the
	// ring probe order”). Either order probes every member from every
	// member within 2n−1 periods.
	ShuffledProbes bool

	// RingKey, when set, keys the hash that places members on the ring
	// (HMAC-SHA256 of the ID), so that nobody without it can choose IDs
	// that land where it wants. On a ring everyone can compute, an
	// attacker with k identities in one arc takes k consecutive rounds of
	// every member's probers: a crash at a random instant waits about
	// (k+1)²/2L periods for its first probe by a real member, against
	// about half a period with no such identities (swim/sim
	// ringsybil_test.go). The default, none, places members by the FNV-1a
	// hash of their ID, under which IDs alike in all but their last bytes
	// are neighbours: an attacker's identities named sybil-1, sybil-2, …
	// make such an arc without even being chosen. A secret shared by the
	// group, 16 to 64 bytes, never sent; every member should use the same
	// one (members with different keys still probe everyone, on different
	// rings, without the one-prober-per-round schedule).
	RingKey []byte

	// DisableRTTTimeout and DisableSuspicionGate switch off, in
	// ModeDetector, the RTT-derived probe timeout and the detector gate on
	// suspicion respectively (for experiments that separate their effects).
	DisableRTTTimeout    bool
	DisableSuspicionGate bool

	// PauseGuard (ModeDetector only): when Tick is called more than PauseGuard
	// after the start of the next protocol period or a suspicion timer was
	// due, the member concludes that it was itself paused (descheduled,
	// stopped, starved of CPU) and,
	// before anything else: raises its own incarnation and gossips Alive (a
	// preemptive refutation of whatever was suspected meanwhile), abandons the
	// probe and the ping-req relays whose time ran out during the pause without
	// suspecting or nacking anyone, raises its local health multiplier, and
	// declares nobody dead for one ProbeInterval, so that refutations queued
	// during the pause are processed first (the local-pause rule of Cassandra's
	// FailureDetector, docs/algorithms.md, “φ accrual: Cassandra's variant”).
	// Default ProbeTimeout (500 ms); new(0) disables it.
	PauseGuard *time.Duration

	// ReconnectInterval is how often a member pings one random member it
	// believes dead, carrying that Dead update, so that a live member that
	// was cut off (a healed partition) refutes and comes back (default 30 s;
	// new(0) disables it).
	ReconnectInterval *time.Duration

	// PushPullInterval is the base interval of anti-entropy: every
	// interval a member sends one random alive member a MsgJoin with a
	// digest of its view (ViewDigest); when that member's view differs,
	// the two send each other their whole views (MsgSync packets) and
	// merge them, so that a member missed by gossip (two
	// members that joined through one seed at about the same time, a lost
	// sync) is learnt at the next exchange at the latest. Default 30 s, as
	// memberlist's PushPullInterval, multiplied by ceil(n/32) for a group
	// of n (×1 up to 32 members, ×32 at 1,000): an exchange between
	// differing views costs two full views, about 3 packets per 32
	// members each, so the scaling keeps that load near 0.1 packet per
	// member per base interval whatever n (memberlist scales by log2 n
	// only, but always sends both views over TCP); between agreeing views
	// it is one packet. A member that learnt of a new member by gossip
	// also runs one exchange three protocol periods after the last such
	// member, no sooner than an interval after the previous such
	// exchange, which counts as its periodic one (the next comes one to
	// one and a half intervals later): join announcements leave members
	// that never heard one, and a group formed through one seed otherwise
	// waited up to an interval for a full view. new(0) disables both; any
	// other value must be at least ProbeInterval, or
	// DefaultPushPullInterval when ProbeInterval is longer (an interval of
	// 1 ns made every Tick an exchange: the member spun).
	PushPullInterval *time.Duration

	// StreamProbe turns on the stream fallback probe: when a direct ping
	// times out, the member also asks its caller (Ready.StreamProbes) to
	// ping the target over a reliable stream, as memberlist's TCP ping, and
	// a probe that only the stream answered does not suspect the target
	// (see StreamProbe and docs/algorithms.md, “SWIM: stream fallback
	// probe”). Default off here, since only a caller with a stream path
	// can run the pings; package agent turns it on.
	StreamProbe bool

	// Incarnation is the incarnation this member starts with (default 0).
	// A member that persists its incarnation across restarts starts from
	// the persisted one (plus one), so that accusations of its previous
	// life are stale at once and nothing it says reads as older than what
	// the group holds.
	Incarnation Incarnation

	// SigningKey, when set, turns on signed self-updates, a group-wide
	// setting like encryption: this member signs its own Alive and leave
	// updates with this Ed25519 key (the signature and public key travel
	// in Update.Proof), and it accepts an Alive or a leave about another
	// member, whether it raises the stored incarnation or names a member
	// not yet known, only with a valid Proof by the key bound to that
	// member's ID. The key is bound at first sight (trust on first use),
	// or ahead of it with Trust. An accusation (Suspect or Dead) above the
	// stored incarnation is taken at the stored one. So only a member
	// itself can raise the incarnation others hold for it, and every
	// accusation the group accepts is one it can refute, even when the
	// accusation comes from a holder of the group's encryption key. Keep
	// the key across restarts (fdswim agent --identity-file): a member
	// that comes back with another key is a conflicting claim of its ID
	// until its old entry is reaped (DeadRetention). nil: unsigned
	// updates, as in SWIM; see docs/algorithms.md, “SWIM: hostile and
	// stale updates”, for what that leaves open.
	SigningKey ed25519.PrivateKey
	// Meta is this member's metadata at start: at most MaxMetaLen bytes of
	// any value, carried in its Alive updates (see Member.SetMeta). The
	// slice is copied.
	Meta []byte

	// AppData bounds the application's data the protocol carries:
	// states, broadcasts and their numbering.
	AppData

	// Versions is the range of wire formats this member reads, advertised
	// in its Alive updates (joins, syncs, refutations). Zero means
	// DefaultVersions. Metadata is taken only from Alive updates that carry
	// a range: one without (relayed through a member that writes wire
	// format 1, which has no field for either) leaves the metadata stored
	// for the member as it was, rather than clearing it.
	Versions VersionRange

	// DeadRetention is how long a member declared dead or left stays in
	// the view before it is forgotten (reaped): long enough for the
	// declaration to reach every member and for stale gossip about the
	// member's previous life to die out, so that it cannot come back as a
	// new member (nil: 15 min, DefaultDeadRetention; new(0) forgets them
	// at the next protocol period). While it is kept, a dead member gets
	// reconnect pings (ReconnectInterval).
	DeadRetention *time.Duration
	// DeadReclaimTime is how long a member must have been dead or left
	// before another node (another address) may take over its ID: a
	// member restarted on a new address or port (a container or pod) whose
	// old entry is still retained. The new node's Alive must be above the
	// incarnation of the death or leave, which it learns from the
	// declaration and refutes (so nothing of the old life in flight
	// touches the new one), and, with SigningKey, be signed with the key
	// bound to the ID: until the entry is reaped, only the same identity
	// reclaims it. A live or suspect holder is never displaced. Before the
	// time, the claim is refused as an ID conflict. nil: 0 (reclaim as
	// soon as the member is declared dead, after it failed to refute for
	// the whole suspicion timeout); a value of DeadRetention or more
	// refuses until the entry is reaped. Unlike memberlist's
	// DeadNodeReclaimTime, 0 does not mean never. See docs/algorithms.md,
	// “SWIM: hostile and stale updates” (ID conflicts).
	DeadReclaimTime *time.Duration

	// MaxMembers bounds the view, this member included (default 16,384,
	// DefaultMaxMembers). When the view is full, a new member evicts the
	// dead or left member reaped soonest; with none to evict, the new
	// member is refused (Stats.MembersRefused) until one is. A flood of
	// fake members (anyone in plain mode, a key holder otherwise) thus
	// costs bounded memory. At least 2.
	MaxMembers int

	// PullsPerSender and PullsPerPeriod bound the pulls this member
	// answers (MsgJoin: joins, view requests and anti-entropy exchanges),
	// counted per ProbeInterval: at most PullsPerSender per sender address
	// (the address the answer goes to; default 2, DefaultPullsPerSender)
	// and PullsPerPeriod from all senders together (default 128,
	// DefaultPullsPerPeriod). A pull over either bound is applied (its
	// updates, the sender's Alive) but not answered, and counted in
	// Stats.PullsRefused. Why: a pull is one small packet, and its answer
	// costs O(n) (a digest over the view, then the whole view: about n/40
	// packets of MaxPacketSize, or a stream); a hostile or looping peer
	// (anyone in plain mode, a key holder in an encrypted or signed group)
	// that sends pulls in a tight loop would turn each into a view sent to
	// the address it names. The bounds cap that at PullsPerSender views per
	// sender address and PullsPerPeriod views in all per ProbeInterval,
	// whatever the flood. Why these values: an honest member sends a given
	// member at most one join attempt per ProbeInterval (Join resends every
	// ProbeInterval), one view request (to an unknown sender or, isolated,
	// a dead member's) and one exchange per PushPullInterval, rarely two
	// of them in one window; 128 is memberlist's bound on concurrent
	// push-pull streams (maxPushPullRequests, which carry its joins too),
	// and lets 127 members joining through one seed within one period all
	// be answered at their first attempt. A refused join is retried a
	// ProbeInterval later, a refused exchange happens at the next
	// interval. The answer to this member's own exchange (the view request
	// of the member it sent its digest to, within ProbeInterval) is never
	// refused. PullsPerPeriod also bounds the challenge pings sent per
	// ProbeInterval to members heard from but not verified
	// (Stats.VerifyChallenges; the rest are counted in
	// Stats.VerifyChallengesRefused). Negative values are errors.
	PullsPerSender, PullsPerPeriod int

	// MergeFilter, when set, is asked before a view transfer or a join is
	// merged: from is the sender, updates every entry of one view transfer
	// (the answer to a join or an anti-entropy exchange: a view cut into
	// several datagrams or stream frames is held until its last part and
	// asked about once, as a whole; see swim/viewparts.go) or the joiner's
	// Alive of a MsgJoin. An error refuses the whole transfer or join:
	// nothing in it is applied, a join or pull gets no answer, and
	// Stats.MergesRefused counts it (memberlist's MergeDelegate, which
	// Consul uses to keep members of other datacenters or segments out).
	// A transfer whose parts do not all arrive within two protocol periods
	// is not merged (Stats.ViewsIncomplete). Packets of a sender that does
	// not mark its parts (Packet.Part) are asked about one by one. The
	// application state that comes with a transfer (LocalState) is held
	// until the filter's verdict on the sender's view and delivered only
	// if it accepts, as memberlist calls MergeRemoteState only after its
	// MergeDelegate accepted; a refused or lost view's state is dropped
	// (Stats.StatesWithheld; swim/heldstate.go). It runs inside Step and
	// must not block.
	MergeFilter func(from Node, updates []Update) error
	// JoinTokens, when set, draws the token of each Join (Packet.JoinToken:
	// only a view that echoes it answers the join and vouches for its
	// members; swim/verify.go). Whoever can predict it can answer a join
	// with a view spoofed from the seed's address, so it must be
	// unpredictable to others: swim/agent's reads crypto/rand, whatever
	// its Seed. nil: a ChaCha8 keyed with 32 bytes drawn from New's rng at
	// the first Join. A simulation passes a source of its own so that its
	// members' generators draw the same numbers with or without joins.
	// Called inside Join; must not block. A 0 is taken as 1 (0 is no
	// token).
	JoinTokens func() uint64
	// JoinTokenless says that this member's joins reach the seeds without
	// their token (Packet.JoinToken), as in swim/wire format 1, which has
	// no field for it, so no seed can echo it: a view without a token from
	// an address joined through answers the join at once and vouches for
	// the members it lists as the seed's (swim/verify.go, seedView), as
	// before join tokens, and the joins are still resent for
	// joinFallbackPeriods protocol periods after that answer, each
	// answer vouching likewise (answersJoin says why). Without it such a
	// joiner waited three periods for its answer and then held the
	// view's members unverified, so that its first probes of members it
	// had heard too little from were silent and suspected them (usr28
	// F2). The cost is the protection the token gives: a view spoofed
	// from a seed's address (plain mode, or by a key holder) answers the
	// join and vouches for what it lists. swim/agent sets it for its
	// Config.WireVersion 1. Default false: the joins carry their token.
	JoinTokenless bool
	// AliveFilter, when set, is asked about every Alive update that would
	// change the view (a new member, or a known one at a higher
	// incarnation), whether gossiped, in a view transfer or in a join: an
	// error drops the update, so the member is not added or not refreshed,
	// counted in Stats.AlivesRefused (memberlist's AliveDelegate, which
	// Serf uses to filter members by their tags: metadata here). It runs
	// inside Step and must not block.
	AliveFilter func(u Update) error
	// ValidAddr, when set, is asked about a member's address before an
	// update brings it into the view: the address of a member not held,
	// or one other than the address held (a dead or left member's ID
	// reclaimed elsewhere, a conflicting claim). An error drops the
	// update, counted in Stats.AddrsRefused, and New refuses a Self.Addr
	// it rejects. The protocol takes addresses as opaque strings (the
	// simulator names members by any string); a transport that can only
	// send to some addresses says which here, so that a forged update
	// cannot move a member to an address nothing can reach, or to one that
	// turns its probes on others (swim/agent accepts a unicast ip:port).
	// It runs inside Step and must not block.
	ValidAddr func(addr string) error
	// AckPayload, when set, returns the bytes (at most MaxAckPayloadLen,
	// and few enough that the ack fits MaxPacketSize, else none are sent
	// and Stats.AckPayloadsTooLarge counts it) that this member attaches
	// to each ack it sends in answer to a ping, and
	// PingComplete, when set, receives, for each direct probe of this
	// member answered by its target's ack, the target, the round-trip time
	// from ping to ack and the ack's payload (memberlist's PingDelegate,
	// which Serf uses for Vivaldi network coordinates). Both run inside
	// Step and must not block; the payload slice must not be kept. Wire
	// format 2 only; older members ignore the payload.
	AckPayload   func() []byte
	PingComplete func(target Node, rtt time.Duration, payload []byte)

	// PeerDetector makes the per-peer failure detector that every message
	// heard from a peer feeds as a heartbeat. Default (nil):
	// DefaultPeerDetectorFor(ProbeInterval), the φ accrual detector (normal
	// model) with a small window, a σ floor of a tenth of the period and an
	// acceptable pause of three periods.
	// The heartbeats carry no sequence numbers and arrive irregularly, every
	// few protocol periods in a small group: detectors built on NFD-E's
	// expected arrivals (chen, twowfd, kappa) number them by arrival, so
	// their Interval must be about the mean interval at which a member
	// hears a given peer, not the protocol period; with a shorter Interval
	// their expected arrivals fall further behind at every message and they
	// suspect live peers (κ-FD always, in a group of 8 with Δ = 1 s), which
	// leaves the detector gate nothing to do. φ and Satzger's detector learn
	// the inter-arrival times and need no Interval.
	// The factory is called inside Step, when a peer is first heard from,
	// and the detector's methods inside Step and Tick: like the other
	// callbacks here they must not block, nor call back into the Member
	// (in swim/agent, on the agent's goroutine: the factory counts as a
	// callback there, agent.ErrInCallback; the detector's methods must
	// call no method of the Agent). A factory error, or a nil detector,
	// is counted in Stats.DetectorErrors and the peer goes without one.
	PeerDetector func() (detector.Detector, error)
	// RTTEstimator makes the per-peer estimator of ack round-trip times
	// whose timeout is the peer's direct probe timeout in ModeDetector.
	// Default: the Jacobson/Karels estimator, its timeout the smoothed RTT
	// plus RTTDeviations times its mean deviation.
	// It is called, and the estimator's methods run, inside Step and
	// Tick, under the same rules as PeerDetector.
	RTTEstimator func() (RTTEstimator, error)
}

// RTTEstimator turns a peer's ack round-trip times into a probe timeout.
// Observe records one RTT sample; Timeout returns the timeout it implies, ok
// false while it has no sample.
type RTTEstimator interface {
	Observe(rtt time.Duration)
	Timeout() (timeout time.Duration, ok bool)
}

// Lifeguard holds the suspicion timeout's multipliers α and β, the number
// of confirmations K that shorten it, and the bound of the local health
// multiplier (Lifeguard, Dadgar et al. 2018, §IV; memberlist's names).
type Lifeguard struct {
	// SuspicionMult is α: the minimum suspicion timeout is
	// α·max(1, log10 n)·ProbeInterval (default 4).
	SuspicionMult int
	// SuspicionMaxTimeoutMult is β: the maximum suspicion timeout is
	// β times the minimum (default 6). Ignored by ModeSWIM (β = 1).
	SuspicionMaxTimeoutMult int
	// SuspicionConfirmations is K, the number of independent suspicions
	// that bring the timeout down to the minimum. Default α−2 as in
	// memberlist (3 for the paper's α = 5); 0 is used when the group has
	// fewer than K+2 members. new(0): the timeout is the minimum from the
	// start.
	SuspicionConfirmations *int
	// MaxLocalHealthMultiplier bounds the local health multiplier, which
	// stays in [0, MaxLocalHealthMultiplier−1] (default 8, so periods and
	// timeouts grow at most eightfold; memberlist's
	// AwarenessMaxMultiplier).
	MaxLocalHealthMultiplier int
}

// AppData bounds the application's data the protocol carries: its state
// on view transfers (LocalState) and its broadcasts.
type AppData struct {
	// LocalState, when set, returns the application's state, sent with
	// every answer to a join or pull and at the start of every
	// anti-entropy exchange, whether the views then differ or not
	// (memberlist's push-pull LocalState): in one MsgSync packet carrying
	// this member's Alive, before any MsgSync packets of its view. join is
	// true when the transfer
	// answers a MsgJoin from a member not alive in this member's view (a
	// joiner), false for an anti-entropy exchange. The receiver gets it in
	// Ready.RemoteStates (with a MergeFilter, only once the filter accepted
	// the sender's view). It is called on the caller's goroutine during
	// Step or Tick and must not block. A state over MaxStateSize, or one
	// that does not fit a packet, is not sent (Stats.StatesTooLarge).
	LocalState func(join bool) []byte
	// MaxStateSize bounds an application state sent or accepted, in bytes
	// (default 512, DefaultMaxStateSize; larger received ones are refused
	// and counted). Over datagrams a state must also fit one packet with
	// this member's Alive.
	MaxStateSize int
	// MaxQueuedBroadcasts bounds the application broadcasts queued for
	// sending, this member's and those it passes on (default 1,024,
	// DefaultMaxQueuedBroadcasts); see Member.Broadcast.
	MaxQueuedBroadcasts int
	// BroadcastBudget bounds the bytes of application broadcasts one
	// packet carries (counted as Packet.Size counts them, section
	// included); 0, the default, gives them all the room the membership
	// updates leave under MaxPacketSize (memberlist's GetBroadcasts
	// limit). Broadcast refuses a broadcast larger than the budget
	// (ErrMessageSize); one received larger than it, from a member with a
	// larger budget, is delivered but not passed on.
	BroadcastBudget int
	// FirstBroadcastSeq is the Seq after which this member numbers its
	// broadcasts (default 0). Receivers deliver a broadcast only when its
	// Seq is new for its origin and, once they remember 64 of its
	// numbers, above the lowest of them, so a member that restarts must
	// number above its previous life: the agent starts from the clock
	// (Unix nanoseconds) and numbers each broadcast with its clock at the
	// broadcast (Member.BroadcastAt).
	FirstBroadcastSeq uint64
	// BroadcastSeqCeiling, when set, bounds the numbers of received
	// broadcasts: one numbered above BroadcastSeqCeiling(now) is refused
	// before it touches its origin's delivery window, and counted
	// (Stats.BroadcastsImplausible). Without a bound, one forged broadcast
	// numbered 2^64−1 under an origin's name moves the window's top there
	// and silences the origin's genuine broadcasts everywhere. The agent
	// numbers each broadcast with its wall clock in Unix nanoseconds at
	// the broadcast, or one above its last if that is higher
	// (Member.BroadcastAt), and sets the ceiling to its own wall clock in
	// Unix nanoseconds, as read with the Step's now (so it follows an NTP
	// correction), plus MaxBroadcastLead: an honest origin's numbers stay
	// at its own clock (one broadcast per nanosecond at most), and pass a
	// forged number below the ceiling once its clock does. nil: no bound (the
	// default, for numbering that is not clock-based). The function is
	// given the now of the Step; it must not read a clock of its own.
	BroadcastSeqCeiling func(now time.Duration) uint64
}
