package agent

import (
	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
)

// Stats counts what the agent did with packets.
type Stats struct {
	PacketsSent, BytesSent         uint64
	PacketsReceived, BytesReceived uint64
	// AuthFailures counts datagrams dropped before their payload was read:
	// they failed authentication (wrong key, tampering) or had no valid
	// envelope (unknown first byte, too short, plain when encrypted or the
	// reverse). Oversized datagrams are not among them: the UDP transport
	// drops those before the agent sees them (DroppedOversize); only a
	// Config.Transport that lets one through gets it counted here.
	AuthFailures uint64
	// LabelMismatches counts datagrams and stream frames dropped for a
	// cluster label other than this member's (Config.Label), or for none
	// on a packet that is otherwise a plain or sealed one: packets of
	// another group. They are not counted in AuthFailures; a packet whose
	// first byte is no envelope's (random bytes) is, labelled group or
	// not.
	LabelMismatches uint64
	// ReliableSent counts reliable messages acknowledged by their
	// receiver (SendReliable), ReliableReceived those received whole.
	ReliableSent, ReliableReceived uint64
	// ReliableRefused counts reliable messages received whole and then
	// refused, unacknowledged (the sender's SendReliable fails), because
	// the reliable messages handed to the agent and not yet taken by it
	// already held MaxReceiveBytes: an agent that waits for a slow reader
	// (BlockingMessages) holds no more than that of them, and refuses one
	// only after waiting half a second for room.
	ReliableRefused uint64
	// PlainAccepted counts plain packets accepted while encryption is
	// being turned on (Config.AcceptPlain); once it stops growing on every
	// member, none sends plain any more.
	PlainAccepted uint64
	// DecodeErrors counts authenticated datagrams whose payload did not
	// decode; EncodeErrors and SendErrors count outgoing failures.
	DecodeErrors, EncodeErrors, SendErrors uint64
	// Rejected counts decoded packets the state machine refused
	// (swim.ErrPacket: inconsistent contents), and joins that did not come
	// from the address they claim (they would reflect the view there).
	Rejected uint64
	// Replayed counts sealed packets that authenticated but failed the
	// replay check (wire.ErrReplay: seen before, sealed before this agent
	// started, or outside the clock-skew bound). They are dropped unread
	// and nothing is sent in answer.
	Replayed uint64
	// UnknownKinds counts authenticated packets of a message kind this
	// version does not know (wire.ErrUnknownKind), sent by a member
	// running a later version, as datagrams or stream frames; they are
	// ignored, and not counted in DecodeErrors or StreamDecodeErrors.
	UnknownKinds uint64
	// UnknownFields counts extension entries skipped in accepted packets
	// because their tag is unknown to this version (fields a later
	// version added; wire.CodecStats).
	UnknownFields uint64
	// Format1Received counts accepted packets in wire format 1, written by
	// members that may read only format 1: while it grows, keep
	// WireVersion 1 on every member.
	Format1Received uint64
	// EventsDropped counts events not delivered to a subscriber whose
	// channel was full; MessagesDropped the same for application messages
	// (Receive).
	EventsDropped, MessagesDropped uint64
	// DroppedOversize and DroppedQueueFull are the transport's drops
	// before the agent sees a datagram: larger than MaxPacketSize, or
	// arriving while the receive queue was full (transport.Stats). They
	// stay 0 for a Config.Transport without a Stats() transport.Stats
	// method.
	DroppedOversize, DroppedQueueFull uint64
	// Stream path counters (Config.DisableStream). StreamsIn and
	// StreamsOut count streams accepted and dialled; StreamsRefused
	// new inbound ones closed at once over MaxStreamConns; StreamsEvicted
	// accepted ones closed while waiting on their peer to make room for a
	// new one (Config.MaxStreamConns; each stream counts once in StreamsIn or StreamsRefused;
	// eviction is how an accepted one ended, as a timeout is); StreamDialErrors
	// failed dials (refused, timed out). Inbound streams, and the answers
	// to joins read on dialled ones (StreamJoinAnswers), cut for a frame
	// that failed authentication (StreamAuthFailures), failed the replay
	// check (StreamReplayed), did not decode or is not a ping, sync or join
	// (StreamDecodeErrors; also an empty frame or one cut short; a kind
	// of a later version counts in UnknownKinds instead), a length
	// above MaxPacketSize or a stream over MaxStreamBytes or
	// MaxStreamMembers (StreamOversize), or the deadline passing
	// (StreamTimeouts: a slow sender). StreamSyncs counts views sent over
	// a stream, StreamSyncFallbacks those sent as datagrams after their
	// stream failed (joins sent over a stream too). StreamJoins counts
	// joins sent over a stream: Join resends a join that got no answer
	// within a ProbeInterval over a stream, which a member answers without
	// the join challenge and without verifying the joiner (a stream proves
	// the host, not the port), on that stream
	// (swim.Member.AnswerStreamJoin), which reaches the joiner where
	// datagrams do not. Frames count in PacketsSent and BytesSent too.
	StreamsIn, StreamsOut, StreamsRefused, StreamDialErrors uint64
	StreamsEvicted                                          uint64
	// StreamsSpared counts the times eviction passed over an accepted
	// stream whose whole first frame was already waiting unread in the
	// kernel (its handler was behind, not its peer: Linux only,
	// transport.StreamStats.Spared; always 0 elsewhere).
	StreamsSpared                                                    uint64
	StreamAuthFailures, StreamReplayed, StreamDecodeErrors           uint64
	StreamOversize, StreamTimeouts, StreamSyncs, StreamSyncFallbacks uint64
	StreamJoins                                                      uint64
	// StreamJoinAnswers counts views read back on the stream of a join
	// this member sent: a member that has not verified this one's address
	// answers a join on its stream, not at the address (a stream proves
	// the host, not the port: swim.Member.AnswerStreamJoin), and so does
	// one that has, for a join carrying a token; the answer to a join
	// resent to a seed vouches as the seed's
	// (swim.Member.StepJoinStreamAnswer). Such views are not counted in
	// StreamsIn, which counts accepted streams.
	StreamJoinAnswers uint64
	// StreamAnswersForeign counts frames read back on the stream of a
	// join this member sent that were dropped because they were not from
	// the member dialled: their sender claims another address than the
	// one dialled, or another ID than the stream's first such frame. A
	// stream proves the host, so such a frame would speak for a member
	// that did not send it.
	StreamAnswersForeign uint64
	// StreamPingsSkipped counts stream fallback pings the state machine
	// asked for that were not sent: every dialling slot of stream pings
	// was taken (at most 16 are dialled at once, at most 4 to one
	// address: StreamsAddrBusy; views, joins and reliable messages have
	// slots of their own) or the target's address could not be dialled.
	// The probe then waits for the end of its period, as without the
	// stream path.
	StreamPingsSkipped uint64
	// StreamsAddrBusy counts stream pings and views not dialled because 4
	// of this agent's dialled streams of that kind to that address
	// (ip:port) were open: the ping is skipped (also in
	// StreamPingsSkipped), the view sent as datagrams. One member that
	// holds streams open cannot take the slots that streams to the others
	// need, and views (16 slots) and stream pings (16) have theirs apart.
	// Growing steadily, with StreamAnswersIdle, it names a member that
	// accepts streams and stalls them.
	StreamsAddrBusy uint64
	// StreamJoinsBusy counts joins to a seed that would have been resent
	// over a stream (StreamJoins) and went as datagrams because a join's
	// stream to that seed address (ip:port) was still open, its answer
	// being read, or 4 joins' streams were open and none could be taken
	// over (StreamJoinsYielded). Joins' streams have their own 4 slots,
	// apart from those of stream pings and views, so seeds that stall
	// them cannot take those. Growing steadily, with
	// StreamAnswersIdle, it names seeds that accept streams and stall
	// them.
	StreamJoinsBusy uint64
	// StreamJoinsYielded counts joins' streams to a seed closed before
	// their answer to give their slot to a join to a seed that had had
	// fewer streams: all 4 joins' streams were open, and this one had
	// been for half a ProbeInterval or more, the oldest such. Seeds thus
	// take turns (at most 4 at once), and a seed listed after seeds that
	// stall still gets its stream within a few ProbeIntervals (Join).
	// Growing steadily, with StreamAnswersIdle, it names seeds that
	// accept streams and do not answer joins on them.
	StreamJoinsYielded uint64
	// StreamAnswersIdle counts answers to joins sent over a stream (and
	// to the view requests that end an exchange's stream) cut short
	// because no frame of the member dialled came within two
	// ProbeIntervals (at least 1 s) of the join or of its last such frame
	// (frames dropped as StreamAnswersForeign do not count), or the whole
	// answer took more than twice that from the join: a member writes its
	// answer at once, so this is a seed that accepted the stream and sends
	// nothing, or sends what is not an answer, or trickles it. The stream
	// is closed and its slot freed; the join has been, or will be,
	// resent. They are not counted in StreamTimeouts.
	StreamAnswersIdle uint64
	// Protocol holds the state machine's counters (swim.Stats: probes,
	// suspicions, refutations, eager gossip sent, ...) as of the last
	// packet or tick the agent processed.
	Protocol swim.Stats
}

// Stats returns the packet counters.
func (a *Agent) Stats() Stats {
	st := Stats{
		PacketsSent: a.ctr.sent.Load(), BytesSent: a.ctr.sentBytes.Load(),
		PacketsReceived: a.ctr.recv.Load(), BytesReceived: a.ctr.recvBytes.Load(),
		AuthFailures: a.ctr.authFail.Load(), DecodeErrors: a.ctr.decodeErr.Load(), Rejected: a.ctr.rejected.Load(),
		EncodeErrors: a.ctr.encodeErr.Load(), SendErrors: a.ctr.sendErr.Load(),
		EventsDropped: a.ctr.evDrop.Load(), MessagesDropped: a.ctr.msgDrop.Load(), Replayed: a.ctr.replayed.Load(), UnknownKinds: a.ctr.unknownKind.Load(),

		StreamsIn: a.sctr.streamsIn.Load(), StreamsOut: a.sctr.streamsOut.Load(), StreamDialErrors: a.sctr.streamDialErr.Load(),
		StreamAuthFailures: a.sctr.streamAuth.Load(), StreamReplayed: a.sctr.streamReplayed.Load(),
		StreamDecodeErrors: a.sctr.streamGarbage.Load(), StreamOversize: a.sctr.streamOversize.Load(),
		StreamTimeouts: a.sctr.streamTimeouts.Load(), StreamSyncs: a.sctr.streamSyncs.Load(), StreamSyncFallbacks: a.sctr.streamFallbacks.Load(),
		StreamPingsSkipped: a.sctr.streamSkipped.Load(), StreamJoins: a.sctr.streamJoins.Load(),
		StreamJoinAnswers: a.sctr.streamJoinAnswers.Load(), StreamAnswersForeign: a.sctr.streamAnswersForeign.Load(),
		StreamsAddrBusy: a.sctr.streamsAddrBusy.Load(), StreamAnswersIdle: a.sctr.streamAnswersIdle.Load(),
		StreamJoinsBusy: a.sctr.streamJoinsBusy.Load(), StreamJoinsYielded: a.sctr.streamJoinsYielded.Load(),
	}
	if a.stream.listener != nil {
		ss := a.stream.listener.Stats()
		st.StreamsRefused, st.StreamsEvicted, st.StreamsSpared = ss.Refused, ss.Evicted, ss.Spared
	}
	cs := a.codec.Stats()
	st.UnknownFields, st.Format1Received, st.PlainAccepted = cs.UnknownFields, cs.Formats[1], cs.PlainAccepted
	st.LabelMismatches = a.ctr.labelMismatch.Load()
	st.ReliableSent, st.ReliableReceived = a.ctr.reliableSent.Load(), a.ctr.reliableRecv.Load()
	st.ReliableRefused = a.ctr.reliableRefused.Load()
	a.pub.mu.Lock()
	st.Protocol = a.pub.stats
	a.pub.mu.Unlock()
	if ts, ok := a.tr.(interface{ Stats() transport.Stats }); ok {
		t := ts.Stats()
		st.DroppedOversize, st.DroppedQueueFull = t.DroppedOversize, t.DroppedQueueFull
	}
	return st
}
