// Package swim implements the SWIM membership protocol (Das, Gupta, Motivala,
// "SWIM: Scalable Weakly-consistent Infection-style Process Group Membership
// Protocol", DSN 2002) with the Lifeguard extensions (Dadgar, Phillips, Currey,
// "Lifeguard: Local Health Awareness for More Accurate Failure Detection", DSN
// Workshops 2018, arXiv 1707.00788), as described in docs/algorithms.md from
// “SWIM probes and ping-req” on, with fdkit's failure detectors as the per-peer
// source of timing and suspicion.
//
// # Usage
//
// A Member is driven by its caller: packets in through Step, time through
// Tick, and everything it decided out through Ready. A minimal driver:
//
//	m, err := swim.New(swim.Config{Self: swim.Node{ID: "a", Addr: "10.0.0.1:7946"}},
//		rand.New(rand.NewChaCha8(key)))     // key from crypto/rand: see New
//	if err != nil { ... }
//	m.Bootstrap(seeds)                        // the members to join through
//	for {
//		select {
//		case p := <-incoming:                 // decoded by swim/wire
//			m.Step(now(), &p)
//		case <-timer(m.NextDeadline()):
//			m.Tick(now())
//		}
//		r := m.Ready()
//		send(r.Packets)                       // encode and send each
//		deliver(r.Events, r.Messages)         // membership changes, user messages
//	}
//
// Package swim/agent is that driver over UDP and TCP, with encryption, for
// services; swim/sim drives many members in simulated time; Example shows a
// member ticked by hand.
//
// # A pure state machine
//
// Member is the protocol of one member, in the style of etcd's raft
// package: it does no I/O, reads no clock, starts no goroutine and takes its
// randomness from the *rand.Rand given to New. The caller (a transport, or
// the simulator in swim/sim) passes instants as time.Duration offsets:
//
//	m.Step(now, &packet)       // a packet arrived
//	m.Tick(now)                // timers; call at NextDeadline() at the latest
//	r := m.Ready()             // r.Packets to send, r.Events for the application
//
// The message types (Packet with Ping, Ack, Nack, PingReq, and the
// piggybacked Update with Alive, Suspect and Dead) are plain structs and
// the contract with the wire codec; Packet.Size is an upper bound of their
// encoded size that the member keeps within Config.MaxPacketSize.
//
// # Protocol
//
//   - One probe per protocol period (SWIM §3-4). The target follows one
//     order common to the group, the ring (members sorted by a hash of their
//     ID): in round r a member probes its (1 + r mod L)-th successor, so that
//     each round's probers are a permutation of the members and every member
//     is probed once per period, not by Poisson(1) probers as with
//     independent orders; the members align their rounds on those their
//     probes carry (the sequence number 2r), and each pass of the ring
//     probes every member once, whatever the rounds heard (probeorder.go;
//     docs/experiments.md, “SWIM: the ring probe order”).
//     Config.ShuffledProbes restores SWIM's round-robin over a list each
//     member reshuffles after each pass (§4.3). No direct ack before the probe timeout:
//     ping-req to IndirectChecks (k) random alive members, which ping the
//     target and relay its ack (and, under Lifeguard, send a nack if it does
//     not answer within their own probe timeout); the k are on as many
//     hosts (IP addresses) as the eligible members allow (spreadHosts,
//     probe.go), so that members of one host that relay nothing cannot be
//     all of them. No ack at all by the end of the period: the target
//     becomes Suspect. A target this member has not verified (it never
//     acked a ping of this member's numbered with a random nonce, nor
//     was vouched for; verify.go, receipt.go) gets no ping-reqs, only
//     its ping (with a nonce) and the stream probe, and is not probed
//     again while suspect. A member holds at most 128 relays at once, at most
//     4 of them for one asker (by ID or address) and 32 for the askers of
//     one IP address, and does not relay for an asker it does not hold at
//     the asker's address to a target it does not hold at the address
//     named; its answers to an asker it does not vouch for, and its pings to
//     a target it does not hold there, carry no gossip (Stats.RelaysRefused;
//     relay.go).
//   - Suspicion and incarnations with the precedence rules of
//     docs/algorithms.md, “SWIM suspicion and incarnations”; a suspected member
//     refutes by raising its incarnation (saturating at MaxIncarnation:
//     arithmetic never wraps) and gossiping Alive; in the Lifeguard modes it
//     also sends the new Alive at once, in a ping, to each member named as
//     suspecter or declarer (once per incarnation) and to IndirectChecks random
//     members it verified (one other per period when none is), so that
//     suspecters hear it before their timers fire (memberlist gets there
//     with a separate gossip loop; see eager dissemination below); three
//     refutations per protocol period at most are sent at once, one for
//     packets that are no member's word, and the rest ride the queue
//     (Stats.AliveDeferred).
//     Unlike SWIM's Confirm, a Dead update older than the local entry is
//     ignored (as in memberlist), so a member that refuted or restarted with a
//     higher incarnation is not killed by stale declarations. A live member
//     that hears it is believed dead refutes too: packets to members believed
//     dead carry that Dead update, and every ReconnectInterval a member pings
//     one random dead member it verified, which is how the halves of a
//     healed partition find each other again.
//   - Stream fallback probe (Config.StreamProbe, off here, on in package
//     agent; memberlist's TCP ping): with the ping-reqs the member asks its
//     caller for one ping of the target over a reliable stream
//     (Ready.StreamProbes, answered with StreamAck or StreamFailed). A
//     probe that only the stream answered suspects nobody and raises
//     EventStreamOnly (docs/algorithms.md, “SWIM: stream fallback probe”).
//   - Infection-style dissemination (SWIM §4.1): updates ride on every packet,
//     least-sent first (newest first among equals), each at most
//     λ·ceil(log10(n+1)) times, within MaxPacketSize. The answers to one
//     member (the acks of its pings and ping-reqs, relayed acks and
//     nacks) carry the queue once per protocol period on average, three
//     in a row at most, more than a prober asks; the others go bare
//     (Stats.AnswersUnqueued; reply.go).
//   - Eager dissemination (Lifeguard modes, Config.GossipFanout, default
//     2): piggybacking alone moves an update about one hop per protocol
//     period, so confirmations reached a suspecter after its timer had
//     mostly run at Max, and a declaration reached the last members
//     seconds after the first (memberlist avoids both with a gossip loop
//     every 200 ms). A member therefore also sends, at once and outside the
//     retransmission limit, MsgGossip packets (updates only, no answer):
//     its own suspicion to the suspect (when verified); its own
//     confirmation (one of the first K) to the members known to suspect
//     and to GossipFanout random members (random members, here and in the
//     drain loop, are members it verified); its own declaration and its own leave to GossipFanout
//     random members; a leave it knows of to whoever sends it a Dead about
//     the leaver; and a refutation that ended a suspicion it held to
//     GossipFanout random members (forwarded once per holder, so
//     refutations race the timers); likewise a declaration heard about a
//     member it suspected too (corroborated), so that a crash reaches the
//     group in a few hops. Suspicions heard from others are not forwarded
//     at once: flooding them brings every member's confirmations, hence
//     its timer, down to Min at once, and every member then runs, and
//     loses, the race against a paused member's refutation. Cost: nothing
//     in a group without failures or leaves; per accusation at most
//     GossipFanout+K+1 packets from the member making it until others
//     corroborate it; per refutation or corroborated declaration at most
//     GossipFanout per member that held the suspicion, and at most
//     4·GossipFanout forwarded
//     packets per member and protocol period (without that bound a member
//     bridging a non-transitive partition forwarded a number growing with
//     N). The fanout trades dissemination speed against messages and
//     against false positives under pauses (a refutation must win a race
//     with the timers); the simulations that chose 2 over 3 and 5 are in
//     docs/experiments.md, “SWIM: eager dissemination and its fanout”.
//   - Drain loop (Lifeguard modes, Config.GossipInterval, default 200 ms):
//     while the dissemination queue holds Alive updates, leaves or
//     declarations, a member sends them every GossipInterval to
//     GossipFanout random members in MsgGossip packets, within the same
//     λ·ceil(log10(n+1)) transmissions (suspicions never), so a group's join announcements stop riding on
//     pings within a second of it forming and a declaration reaches the
//     group about as fast as memberlist's gossip loop spreads it;
//     docs/experiments.md, “The drain loop”.
//   - Join through known addresses (MsgJoin answered by the view in MsgSync
//     packets) and voluntary leave (a Dead update from the member itself).
//   - Anti-entropy: every PushPullInterval (30 s, longer above 32 members)
//     a member sends one random alive member a digest of its view (on a
//     MsgJoin); only when that member's view differs do the two exchange
//     whole views (MsgSync), as memberlist's push-pull always does over
//     TCP (docs/algorithms.md, “SWIM dissemination”); and a protocol
//     packet from an unknown sender makes the member ask the sender for its view
//     (at most once per ProbeInterval, retries included), asking again two
//     periods after the request and four after that retry (six after the
//     request) while the sender stays unknown and its packets pay for
//     them, since the exchange takes up to four datagrams
//     (docs/experiments.md, “SWIM: retried view requests”). The requests
//     to a sender (its ID at its address), asked or retried, total at most
//     twice the bytes received from it there, and a packet received from
//     another address than it claims (StepFromOtherSource) draws none.
//     Without these requests two members that
//     joined through one seed at about the same time could stay unaware of
//     each other for good.
//     A member answers at most PullsPerSender pulls (MsgJoin: joins,
//     view requests, digests) per sender address and PullsPerPeriod in all
//     per ProbeInterval (2 and 128 by default; Stats.PullsRefused), so that
//     a peer sending pulls in a loop cannot make it send a view per pull
//     (docs/algorithms.md, “SWIM: hostile and stale updates”).
//     A join carries a random token (Packet.JoinToken,
//     Config.JoinTokens) that the seed's view echoes: only a view from a
//     seed's address that echoes it answers the join at once and vouches
//     for the members it lists (verify.go); one spoofed from the seed's
//     address without it answers as a view from elsewhere does, after
//     three periods, and vouches for nothing.
//   - Lifeguard (docs/algorithms.md, “Lifeguard local health”): the local
//     health multiplier LHM in [0, S−1] (+1 per failed probe, or per missed
//     nack when nacks were expected; +1 per refuted suspicion or
//     declaration, one per protocol period at most and one per probe of
//     its own ended since the last (a success, or a failure that raised
//     it); −1 per successful probe) scales the period
//     and the probe timeout by LHM+1; suspicion timeouts start at
//     Max = β·Min and shrink with each independent confirmation to
//     Min = α·max(1, log10 n)·ProbeInterval after K = α−2 of them (the
//     first K are re-gossiped); and the buddy system: a ping to a
//     suspected member carries the suspicion, so it can refute at once. fdkit
//     applies it to every packet sent to a suspect (acks and relayed pings
//     too), not only to probes.
//
// # Metadata and application messages
//
// A member carries up to MaxMetaLen (512) bytes of metadata in its Alive
// updates (Config.Meta, Member.SetMeta: a change raises the incarnation;
// receivers report EventUpdate), and the range of wire formats it reads
// (Config.Versions). The application's side of memberlist's Delegate is
// in the core too: Member.Broadcast queues a broadcast that every member
// delivers once (Ready.Messages) and passes on, piggybacked after the
// membership updates; Member.SendTo sends one direct message (MsgUser);
// Config.LocalState rides with every view transfer (Ready.RemoteStates).
// Every queue and message is bounded. See docs/algorithms.md, “SWIM: wire
// format and extensions” and “SWIM: application messages”.
//
// # Detectors as the per-peer suspicion source
//
// Every packet heard from a peer (and every relayed ack and fresh Alive
// about it) is a heartbeat for that peer's detector.Detector, made by
// Config.PeerDetector (default DefaultPeerDetectorFor(ProbeInterval): φ
// accrual, normal model, threshold 8, window of 32 inter-arrival times, σ
// floor of a tenth of a period, acceptable pause of three periods, as
// Akka's cluster detector at a 1 s heartbeat; any fdkit detector fits). A
// member hears from a given peer about every (n−1)/2 periods on average in
// a group of n (on the ring, when the peer probes it and when it probes
// the peer, once per n−1 rounds each; with ShuffledProbes irregularly, 1
// to 2(n−1)−1 periods apart from its own probes), so a detector with a
// fixed expectation must be configured for that:
// with their defaults (Δ = 100 ms) chen and sfd suspect every live peer, and a
// fixed timeout below a few times n/2 periods suspects most of them, which
// leaves the gate below inert; φ adapts by itself. Its level is exposed
// by Level, Member and Members. Config.Mode selects how much of this the
// protocol uses:
//
//   - ModeDetector (default): (1) the direct probe timeout of a peer is its
//     RTTEstimator's timeout over that peer's direct-ack round-trip times
//     (default Jacobson/Karels, SRTT + 4·RTTVAR, RFC 6298 order), clamped to
//     [MinProbeTimeout, MaxProbeTimeout] = [100 ms, 500 ms] and multiplied by
//     LHM+1; before the peer's first sample it is that of a group-wide
//     estimator over every peer's samples, and before any sample at all,
//     ProbeTimeout. The group-wide estimate only sets when a first probe's
//     ping-reqs go out: it follows whichever peers acked lately, so in a
//     group of near and far peers it is the near ones'. A relay's wait
//     before its nack and the least wait of the gate's retry are the
//     peer's own estimate, or ProbeTimeout before its first sample.
//     (2) The gate: when a probe of an alive peer fails and the peer's
//     detector does not suspect it (something was heard from it recently,
//     judged by its own history), or has no opinion yet (WarmingUp: fewer
//     intervals than it needs), the member does not suspect it yet but
//     probes it again, at once once every datagram path of the first probe
//     has failed, within what is left of the first probe's period. A
//     second consecutive failure suspects it regardless. A first failure
//     whose stream ping was refused or reset (nothing listens on the
//     peer's port, as when its process died; a paused process's kernel
//     accepts the connection) is not retried: it suspects once every
//     path has failed and the least direct wait has passed. The retry
//     re-checks a failure already seen, so it sends the ping-reqs and the
//     stream ping together with the ping and suspects once every path has
//     failed and its least direct wait (the peer's own RTT estimate, or
//     ProbeTimeout before its first sample, times LHM+1) has passed; it
//     gives its verdict at the end of the first probe's period (or once
//     its own stream ping is refused), where memberlist and
//     ModeLifeguard suspect, so the gate does not delay a suspicion past it
//     (by one direct probe timeout at most, for a retry started later than
//     that before the period's end; docs/experiments.md,
//     “SWIM: the gate's retry within its period”). It holds when every intermediate nacked too
//     (docs/experiments.md, “The detector gate, warm-up and the retry”).
//     A peer never heard from is not gated. (3)
//     The local-pause guard: a Tick that comes more than PauseGuard (default
//     500 ms) after the next period or a suspicion timer was due means this
//     member itself was not running; it then refutes preemptively (incarnation+1, Alive gossiped),
//     drops the probe and the relays whose time ran out while it was stopped
//     without suspecting or nacking anyone, raises its LHM, and declares nobody
//     dead for one period so that refutations queued meanwhile are read first
//     (Cassandra's local-pause rule, docs/algorithms.md, “φ accrual:
//     Cassandra's variant”). Below that scale, the live wrapper's measure
//     of its host's lateness (Member.SetHostLateness; swim/agent sets it
//     from package lateness before every Tick) shifts the detectors'
//     opinion: a peer counts as suspected only once its freshness point
//     has passed by more than the host's own recent lateness.
//   - ModeLifeguard: memberlist's behaviour (fixed probe timeout, no gate).
//   - ModeSWIM: plain SWIM with suspicion (no LHM, no nack, no buddy, fixed
//     suspicion timeout Min, i.e. β = 1).
//
// # Defaults
//
// The zero Config (besides Self) is memberlist's DefaultLANConfig: period
// 1 s, probe timeout 500 ms, k = 3, λ = 4, α = 4, β = 6, S = 8,
// MaxPacketSize 1400 bytes, plus GossipFanout 2, ReconnectInterval 30 s,
// PushPullInterval 30 s (scaled by ceil(n/32)) and the detector
// defaults above.
package swim
