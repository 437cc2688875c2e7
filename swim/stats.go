package swim

// Stats counts what a Member did since New, grouped by concern; the
// groups are embedded, so each counter reads as Stats.<Name>.
type Stats struct {
	ProbeStats
	GossipStats
	GuardStats
	AppStats
}

// ProbeStats count the failure detector's work: probes, suspicions,
// declarations and refutations.
type ProbeStats struct {
	ProbesStarted int // probes sent (one per protocol period with a target)
	ProbesFailed  int // probes with neither a direct nor an indirect ack
	PingReqsSent  int
	NacksSent     int
	// RelaysExpired counts relays whose target did not ack before the
	// relay's deadline (ProbeTimeout, or the measured round-trip time):
	// the origin then gets a nack if it asked for one (NacksSent), else
	// nothing.
	RelaysExpired int
	// RelaysRefused counts ping-reqs for another member not relayed:
	// from an origin the view does not vouch for (swim/reply.go) when the
	// view did not hold the target at its address or the ping-req's
	// bytes do not pay for the bare answer (twice them must cover it,
	// swim/relay.go), from any origin when twice its bytes do not cover
	// the bare relayed ping (relayPingLimit), or with the relays held at their bound (128; half
	// of them for origins the view does not vouch for; 4 for one origin,
	// counted as the relays whose origin has its ID or its address; 32
	// for the origins of one IP address).
	RelaysRefused int
	// AcksFromOtherHost counts acks ignored because they came from
	// another host than their sender is held at (StepFromOtherSource), or
	// claimed another address than the one held for their sender: they
	// answer no probe and complete no relay (onAck).
	AcksFromOtherHost int
	// AcksUnmatched counts acks without their sender's ID
	// (Ack.NoSenderID) whose sequence number matches none of the latest
	// probe pings (sentPingsKept of them), the join challenges waiting
	// for an ack and the latest challenges of unverified members
	// (Member.AckSender; ackmatch.go): refused, as Step cannot tell who
	// sent them.
	AcksUnmatched int
	Refutations   int // times this member raised its own incarnation
	// RefutationsUncharged counts refutations not counted against the
	// local health multiplier (Lifeguard modes): those of an Alive
	// claiming a later incarnation, those of a suspicion or a declaration
	// (Dead) in a packet whose sender the view did not hold alive or
	// suspect at the address the packet came from (a stranger, a member
	// held dead, StepFromOtherSource; the join seed's view counts), and
	// those of a suspicion or declaration in a protocol period in which
	// one was counted already, or before a probe of this member's own has
	// ended, in a success or in a failure that raised the multiplier,
	// since the last counted one (a refuted accusation raises the
	// multiplier once per period and once per such probe at most).
	// Growing by more than one or two per period, it says that something
	// sends this member accusations at rising incarnations, which no
	// honest group does (one refutation answers every accusation of the
	// incarnation it leaves).
	RefutationsUncharged int
	AliveSent            int // pings sent only to carry a refutation (Alive) at once
	// AliveDeferred counts the immediate sends of this member's Alive left
	// to the dissemination queue by their budget per protocol period
	// (between two probe timers): refutations and metadata restatements
	// not announced at once, past the three of the period or past the one
	// for packets that are no member's word, and direct sends to a member
	// already sent the Alive three times in the period. More than a few
	// per period say that something sends this member accusations at
	// rising incarnations.
	AliveDeferred int
	GateDeferrals int // failed probes forgiven once by the detector gate
	// UnverifiedRetries counts failed probes of members not verified
	// that were probed once more before a suspicion, their ledgers
	// paying (receipt.go).
	UnverifiedRetries int
	Suspicions        int // suspicions this member raised itself
	Declarations      int // members this member declared dead by its own timeout
	LocalPauses       int // late Ticks taken for a pause of this member (PauseGuard)
	DetectorErrors    int // per-peer detector or estimator factory errors
	// StreamProbes counts stream fallback pings requested
	// (Config.StreamProbe); StreamOnly counts probes that only the stream
	// answered (EventStreamOnly, rate-limited, warns of them).
	StreamProbes, StreamOnly int
	// StreamProbesUnpaid counts stream fallback pings not requested for a
	// member not verified: never heard from at its address, or its ledger
	// does not pay for the ping (receipt.go, requestStreamProbe).
	StreamProbesUnpaid int
}

// GossipStats count dissemination and anti-entropy: gossip sent, view
// exchanges and the pulls and joins answered.
type GossipStats struct {
	GossipsSent       int // MsgGossip packets sent (eager dissemination, GossipFanout)
	JoinAnnouncements int // members sent this member's Alive directly on joining (announceJoin)
	// AccusationsReturned counts accusations sent back to the sender of a
	// stale Alive and to the accused (see accuseBack).
	AccusationsReturned int
	PushPulls           int // anti-entropy exchanges started (PushPullInterval)
	// DigestMatches and DigestMismatches count the view digests of
	// anti-entropy exchanges received (ViewDigest): equal to this
	// member's, so no view was sent, or different, so both views were.
	DigestMatches, DigestMismatches int
	ViewRequests                    int // views asked of unknown senders
	// ViewEntriesSkipped counts entries left out of a view transfer
	// (MsgSync: a join's answer, an exchange) because the entry alone
	// does not fit MaxPacketSize after the packet's header: IDs,
	// addresses and metadata near their maximum (255, 255 and 512 bytes)
	// with a small MaxPacketSize. The receiver learns of such a member
	// from the member itself or from gossip instead. No packet goes out
	// without updates or above MaxPacketSize (the codec would send it
	// empty).
	ViewEntriesSkipped int
	// PullsRefused counts pulls (MsgJoin: joins, view requests,
	// anti-entropy exchanges) not answered because their sender address
	// or all senders together had reached their bound for the protocol
	// period (Config.PullsPerSender, Config.PullsPerPeriod), or because
	// as many join challenges were waiting, or one for the same sender.
	PullsRefused int
	// JoinChallenges counts joins from unverified sources answered first
	// with a challenge ping (see Step).
	JoinChallenges int
	// VerifyChallenges counts the challenge pings sent to members heard
	// from at their address but not verified (receipt.go), and
	// VerifyChallengesRefused those not sent because as many as
	// Config.PullsPerPeriod were sent in the protocol period.
	VerifyChallenges, VerifyChallengesRefused int
}

// GuardStats count updates and packets refused or dropped to keep the view
// safe, and the view's upkeep.
type GuardStats struct {
	Misdirected int // packets for another ID dropped
	// Implausible counts updates refused for an incarnation more than
	// MaxIncarnationJump above the one stored (or this member's own; an
	// accusation: more than half of it, maxAccusationJump).
	Implausible int
	// Reaped counts dead and left members forgotten (DeadRetention, or
	// evicted to make room under MaxMembers); MembersRefused counts
	// members not admitted or revived because the view was full of live
	// ones, or because as many unverified members as the view may hold
	// were live (a flood of forged gossip; swim/verify.go).
	Reaped, MembersRefused int
	// Conflicts counts claims of a live member's ID (or this member's, or
	// a dead or left member's before DeadReclaimTime) by a node at another
	// address (EventConflict).
	Conflicts int
	// Reclaims counts entries of dead or left members taken over by a
	// node at another address (Config.DeadReclaimTime).
	Reclaims int
	// MergesRefused counts view transfers and joins refused by
	// Config.MergeFilter; AlivesRefused Alive updates dropped by
	// Config.AliveFilter; AddrsRefused updates dropped because
	// Config.ValidAddr rejected the address they name.
	MergesRefused, AlivesRefused, AddrsRefused int
	// ViewsIncomplete counts view transfers in parts held for
	// Config.MergeFilter and dropped, unmerged, before their last part
	// came: expired, displaced by newer ones, or larger than MaxMembers
	// (swim/viewparts.go).
	ViewsIncomplete int
	// BadProofs counts Alive and leave updates refused, with signed
	// self-updates, for a missing or invalid proof or one under a key
	// other than the one bound to the member; AccusationsCapped counts
	// accusations taken at the stored incarnation instead of a higher one
	// (Config.SigningKey).
	BadProofs, AccusationsCapped int
	// AccusationsUnvouched counts Suspect and Dead updates (not leaves)
	// about a member held alive or suspect, gossiped in a packet whose
	// sender was not held alive or suspect at the address it came from (a
	// stranger, a member held dead, StepFromOtherSource): each was taken
	// as this member's own suspicion timer, dropped past the budget of
	// such suspicions (HearsayDropped), or, about a member already
	// suspect, ignored; never as a death (swim/hearsay.go).
	AccusationsUnvouched int
	// HearsayDropped counts accusations about a member held alive, from
	// hearsay or a view transfer, dropped because this member had made as
	// many suspicions from them in the protocol period as it may (three;
	// swim/hearsay.go): each costs a send to the suspect and its
	// refutation, and a stranger can send as many as it likes.
	HearsayDropped int
	// AnswersUnqueued counts answers to a verified member (the acks of
	// its pings and of its ping-reqs for this member, the relayed acks
	// and nacks of its ping-reqs) sent without the queue because an
	// answer to it carried the queue less than a protocol period before
	// (swim/reply.go): pings forged from its address, or its own sent
	// more often than a prober's.
	AnswersUnqueued int
	// MetaRestated counts incarnation raises to correct a previous
	// life's metadata held by others (see Member.SetMeta).
	MetaRestated int
}

// AppStats count the application's messages (usermsg.go).
// BroadcastsQueued: broadcasts this member queued (Broadcast);
// BroadcastsReceived: new broadcasts delivered; BroadcastsDropped: queued
// broadcasts dropped, unsent or not fully sent, because the queue was
// full (relayed ones first: see Member.Broadcast); BroadcastsOwnDropped:
// those of them that this member queued itself (Broadcast), dropped
// because its own filled the queue; BroadcastsUnrelayed: broadcasts
// delivered but not passed on because their packet's sender was not held
// alive or suspect at the address it came from (swim/usermsg.go,
// receiveBroadcasts); BroadcastsUnvouched: broadcasts from such a sender
// dropped undelivered, numbered above every number delivered from their
// origin or from an origin none was delivered from (the sender's own,
// from the address it is held at, are delivered); BroadcastsSuperseded: queued broadcasts removed by a newer one
// with the same origin and key; BroadcastOriginsForgotten: delivery
// windows forgotten to bound memory (MaxMembers origins);
// BroadcastOriginsRefused: broadcasts from an origin not held live
// refused, undelivered, because the windows were at that bound and none
// of those looked at was of an origin not held live either;
// BroadcastsImplausible: received broadcasts numbered above
// Config.BroadcastSeqCeiling, refused; BroadcastsStale: received
// broadcasts numbered below every number remembered from their origin
// (its window full: Config.MaxQueuedBroadcasts numbers for an origin held
// live, 64 for others), taken as old news and not delivered (a replay, or
// a broadcast reordered past the window). MessagesSent and MessagesReceived
// count direct messages (SendTo), and MessagesUnqueued those sent to a
// verified member without the queue because a packet to it had carried
// the queue less than a protocol period before (swim/reply.go); StatesSent and StatesReceived
// application states (Config.LocalState); StatesTooLarge states not sent,
// or refused, for exceeding MaxStateSize; StatesWithheld received states
// not delivered because Config.MergeFilter refused their sender's view
// transfer or no verdict on it came in time (swim/heldstate.go);
// AckPayloadsTooLarge payloads of Config.AckPayload over MaxAckPayloadLen,
// or that would have made an ack larger than MaxPacketSize, not sent (the
// ack went without them).
type AppStats struct {
	BroadcastsQueued, BroadcastsReceived, BroadcastsDropped int
	BroadcastsSuperseded, BroadcastOriginsForgotten         int
	BroadcastsImplausible, BroadcastsStale                  int
	BroadcastOriginsRefused                                 int
	BroadcastsOwnDropped, BroadcastsUnrelayed               int
	BroadcastsUnvouched                                     int
	MessagesSent, MessagesReceived, MessagesUnqueued        int
	StatesSent, StatesReceived, StatesTooLarge              int
	StatesWithheld                                          int
	AckPayloadsTooLarge                                     int
}
