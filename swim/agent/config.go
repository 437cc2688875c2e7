package agent

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
)

// Config configures an Agent. The zero value of every field means the
// documented default, except that Keys or Plain must be set.
type Config struct {
	// ID is this member's name in the group, at most 255 bytes of UTF-8
	// without control characters (wire.CheckName), kept across restarts.
	// Default: the advertised address.
	ID swim.ID
	// Bind is the UDP address to listen on, ip:port. Default "127.0.0.1:0".
	// Streams are dialled from its IP address too (from Advertise's,
	// when that is local, for 0.0.0.0 or ::), so that the members see
	// them come from the address they hold this member at.
	Bind string
	// Advertise is the address other members send to, ip:port with a
	// specified IP and port. Default: the bound address (with the
	// kernel-chosen port); a socket bound to 0.0.0.0 or :: needs Advertise.
	Advertise string
	// Keys are AES keys (16, 24 or 32 bytes) for packet encryption; the
	// first is the primary. Required unless Plain.
	Keys [][]byte
	// Plain turns encryption off. It must be set explicitly and excludes Keys.
	Plain bool
	// AcceptPlain and SendPlain, with Keys, turn encryption on (or off) in
	// a running group (memberlist's GossipVerifyIncoming = false and
	// GossipVerifyOutgoing = false): AcceptPlain also accepts plain
	// packets, SendPlain sends plain instead of sealing; SendPlain
	// needs AcceptPlain (ErrPlainStage). Start every member
	// with Keys and both on (it reads and is read by plain members), then
	// call SetSendPlain(false) on every member, then, once Stats.PlainAccepted
	// stops growing everywhere, SetAcceptPlain(false) (wire.Security.SetAcceptPlain).
	// While AcceptPlain is on anyone who reaches the port can inject
	// packets: unless every member has a Protocol.SigningKey, that includes
	// Alives that keep a crashed member alive and claims of a dead member's
	// ID (docs/coming-from-memberlist.md, “Sign self-updates”).
	AcceptPlain, SendPlain bool
	// Label is the cluster label, at most 255 bytes (memberlist's Label):
	// every datagram and stream frame carries it, and packets with another
	// label, or none, are dropped and counted in Stats.LabelMismatches
	// (wire.Security.Label). Members of one group must share it. Default
	// "": no label.
	Label string
	// SkipInboundLabelCheck (memberlist's SkipInboundLabelCheck) is for a
	// Transport (and StreamWrap) that checks and strips the cluster label
	// itself: received datagrams and stream frames must carry none and are
	// read as if they carried Label (a sealed one still authenticates it);
	// one that still carries a label is dropped (Stats.LabelMismatches).
	// What this member sends still carries Label
	// (wire.Security.SkipInboundLabelCheck). Start refuses it without a
	// Transport, and without a StreamWrap unless DisableStream: the
	// built-in ones strip nothing.
	SkipInboundLabelCheck bool
	// MaxPacketSize bounds datagrams, envelope included, in bytes
	// (default 1,400). It must leave the protocol 256 bytes of payload
	// (at least 257 plain, 293 encrypted: envelope and sealed timestamp)
	// and fit this member's own join, its Alive in a view transfer to a
	// member with an ID as long, and, with Protocol.AckPayload, an ack with
	// 512 bytes of payload to such a member (ErrSelfTooLarge).
	MaxPacketSize int
	// Protocol configures the SWIM state machine; Self and MaxPacketSize are
	// filled in by the agent, ValidAddr accepts only a unicast ip:port
	// before asking the one set here, every other zero field means swim's
	// default. Its callbacks run on the agent's goroutine; what they may
	// call of the Agent is said at ErrInCallback.
	Protocol swim.Config
	// Seed seeds the state machine's random source (target shuffles,
	// ping-req members, the phase of the first probe, and the nonces of
	// the pings whose acks verify members: swim's proof of receipt),
	// together with the member's ID: agents given one Seed still draw
	// different sequences. Whoever knows the Seed and the ID can predict
	// the nonces and verify members at addresses where they do not
	// receive, so a fixed Seed is for tests and reproducible runs.
	// Default (0): a key drawn from crypto/rand at Start.
	Seed uint64
	// TickInterval is the longest the agent waits between two ticks of the
	// state machine. The agent ticks at every deadline the machine asks
	// for (swim.Member.NextDeadline: probe start, probe timeout, end of
	// the period, suspicion timeouts, relays, joins, anti-entropy), which
	// is every tick the protocol needs, so this bound is only a backstop;
	// while leaving, the agent ticks at least every 50 ms (leavePoll) to
	// stop as soon as its leave has been sent. Default 1 s. A short bound
	// costs CPU: each tick wakes the agent's goroutine (see
	// docs/experiments.md, “Agent CPU at N = 8”).
	TickInterval time.Duration
	// LeaveTimeout is how long Leave and a cancelled context keep the
	// member running so its leave spreads (nil: DefaultLeaveTimeout, 2 s;
	// new(0) stops at once after announcing the leave; see package
	// detector for this rule on zero).
	LeaveTimeout *time.Duration
	// Logger receives debug logs of dropped packets and warnings. Default:
	// discard.
	Logger *slog.Logger
	// Transport replaces the UDP socket (tests, benchmarks). When set, Bind
	// is ignored and the agent closes it when it stops.
	Transport transport.Transport

	// DisableStream turns the stream path (TCP) off: no listener, no
	// stream fallback pings (swim.Config.StreamProbe), and views larger
	// than one datagram go as datagrams. By default it is on, as
	// memberlist's TCP pings and push-pull are (see stream.go and
	// docs/algorithms.md, “SWIM: stream fallback probe”).
	DisableStream bool
	// DisableStreamProbes keeps the stream listener and the views over
	// streams but sends no stream fallback pings (memberlist's
	// DisableTcpPings); this member still answers others' pings.
	DisableStreamProbes bool
	// StreamBind is the TCP address the stream listener binds, ip:port.
	// Default: the UDP socket's address, same port number (the port the
	// other members dial: they reach the stream path at the advertised
	// address, on TCP). With Bind's port 0 the kernel's choice is taken for
	// both.
	StreamBind string
	// StreamTimeout bounds each stream's whole life, dial included
	// (default 10 s, memberlist's TCPTimeout); a reliable message it cuts
	// fails with an error naming it (SendReliable). A stream ping's deadline is
	// also the end of the probe's protocol period, and each frame of the
	// answer to a join sent over a stream must come within two
	// ProbeIntervals, at least 1 s, and the whole answer within twice
	// that (Stats.StreamAnswersIdle).
	StreamTimeout time.Duration
	// MaxStreamConns bounds the inbound streams served at once (default
	// 64). When all are taken, a new one replaces a served stream that is
	// waiting on its peer: from an IP address holding more than two and
	// more than a quarter of MaxStreamConnsPerSource first (the most
	// first), then one from an address that is no live member's before a
	// member's (alive or suspected; the TCP handshake proves a stream's
	// address, so a flood from other addresses displaces its own streams,
	// and a joiner, not yet a member, still displaces a member's stream
	// when no other is waiting), then one that has not delivered a whole
	// frame (a stream is cut at a frame that fails authentication), then
	// the one idle longest, counted from its last byte received, so that a
	// slow transfer in progress is not taken for a stalled one
	// (transport.StreamConfig; counted in Stats.StreamsEvicted). A stream
	// whose frame is being handled is not replaced; when every one is, the
	// new one is closed at once (Stats.StreamsRefused).
	MaxStreamConns int
	// MaxStreamConnsPerSource bounds the inbound streams served at once
	// from one IP address (default MaxStreamConns/4, at least 1; at most
	// MaxStreamConns); one beyond it replaces a stream from the same
	// address waiting on its peer, as above, or is closed at once
	// (Stats.StreamsRefused). Members behind one NAT address, or many on
	// one host, share it, and share it with any process there: a flood of
	// streams from that address that redials as fast as it is cut ranks
	// with the members' streams. On Linux a stream whose first frame has
	// arrived whole before its handler read it is not replaced
	// (Stats.StreamsSpared); a member's stream replaced before its
	// first bytes arrive still fails (docs/experiments.md, “SWIM: stream
	// and message floods at a ported service (user46 M2, M6)”).
	MaxStreamConnsPerSource int
	// MaxStreamBytes bounds what one inbound stream may carry, frame
	// prefixes included (default 8 MiB); MaxStreamMembers bounds the
	// membership updates one inbound stream may carry (default: the
	// protocol's MaxMembers plus one, a whole view and a join's Alive). A stream over either cap is cut and counted
	// (Stats.StreamOversize). Every frame is at most MaxPacketSize bytes.
	MaxStreamBytes   int
	MaxStreamMembers int
	// MaxReliableSize bounds a reliable message (SendReliable) sent or
	// received, in bytes (default 1 MiB, DefaultMaxReliableSize, or what
	// fits MaxStreamBytes when that is less). Its frames, of MaxPacketSize
	// each, must fit one stream's MaxStreamBytes: Start refuses a larger
	// value. A receiver cuts a stream whose message claims more
	// (Stats.StreamOversize).
	MaxReliableSize int
	// MaxReceiveBytes bounds the bytes of application messages (data and
	// key) waiting unread in each Receive channel (default 8 MiB,
	// DefaultMaxReceiveBytes; not negative): a message that would exceed
	// it is dropped (Stats.MessagesDropped), or waited for with
	// BlockingMessages. A channel's buffer counts messages, and reliable
	// ones are up to MaxReliableSize each. It also bounds the reliable
	// messages received whole and waiting for the agent to take them (as
	// while it waits for a reader): one past it is refused
	// unacknowledged (Stats.ReliableRefused).
	MaxReceiveBytes int
	// StreamWrap, when set, wraps every stream connection, accepted
	// (inbound true) or dialled, before a frame crosses it: TLS, byte
	// accounting, or an impairment in a benchmark (transport.StreamConfig.Wrap).
	// An error closes the connection.
	StreamWrap func(conn net.Conn, inbound bool) (net.Conn, error)
	// WireVersion is the wire format written (wire.CodecConfig.Version;
	// 0: the latest, wire.Version). Packets of every format are read. Set
	// 1 while the group still has members that read only format 1; those
	// show a zero Versions range in Members. Format 1 carries no metadata
	// and no application data: with 1, Start refuses Protocol.Meta,
	// LocalState and Protocol.AckPayload, and Broadcast, SendTo,
	// SendToAddress, SendReliable and SetMeta fail, with ErrNeedsFormat2.
	// Nor has format 1 a field for a join's token: with 1, Start sets
	// Protocol.JoinTokenless, so that a seed's view answers Join at once
	// and vouches for its members, without the token's protection against
	// a view spoofed from the seed's address.
	WireVersion byte
	// LocalState, when set, returns the application's state to send with
	// every anti-entropy exchange and answer to a join or pull,
	// at most Protocol.MaxStateSize bytes (default 512; Start refuses a
	// larger bound than one datagram carries with this member's Alive,
	// 1,237 bytes plain and 1,201 sealed at the default MaxPacketSize, with
	// a short ID and no metadata:
	// a larger state goes by SendReliable); see
	// swim.Config.LocalState, which it sets. MergeRemoteState receives the
	// states other members send: from, the state, and whether it came as
	// the answer to this member's join. Both run on the agent's goroutine
	// and must not block (memberlist's Delegate.LocalState and
	// MergeRemoteState). Like Protocol's callbacks (MergeFilter,
	// AliveFilter, ValidAddr, AckPayload, PingComplete), they may call
	// Members and the other reads, but the Agent's methods that change the
	// state, send or stop return ErrInCallback there (ErrInCallback).
	LocalState       func(join bool) []byte
	MergeRemoteState func(from swim.Node, state []byte, join bool)
	// BlockingDelivery makes the agent wait for a Subscribe channel that
	// is full instead of dropping the event: memberlist's behaviour for
	// events (its ChannelEventDelegate blocks the protocol). Messages
	// (Receive) wait only with BlockingMessages: memberlist hands datagram
	// messages to NotifyMsg through a bounded queue that drops when full,
	// which is what Receive does by default. While it
	// waits the agent does nothing else, neither probing nor answering
	// probes, so a subscriber that stops reading gets this member
	// suspected and declared dead. Cancelling the subscription frees it;
	// so do Shutdown, Leave, Close and cancelling Start's context, after
	// which full channels drop as without BlockingDelivery, so that the
	// agent stops. While it waits, the agent serves the calls of its
	// methods (a subscriber may call Members for each event it reads),
	// and any goroutine, the subscriber waited for included, may call
	// Subscribe or Receive or cancel a subscription: a subscription added
	// meanwhile gets what is delivered after the wait.
	// Default false: drop and count (Stats.EventsDropped), the protocol
	// never waits.
	BlockingDelivery bool
	// BlockingMessages makes the agent wait, as BlockingDelivery does for
	// events, for a Receive channel that is full (or over
	// MaxReceiveBytes) instead of dropping the message, for broadcasts,
	// reliable messages (SendReliable) and direct messages (SendTo) that a
	// member held at its address sent from there (swim.Message.FromHeldAddr).
	// Direct messages from anyone else, a stranger or a forger under a
	// member's ID from another address, are still dropped and counted: a
	// stranger's flood of them would otherwise throttle the agent through
	// a reader slower than the flood, its probes with it (user46 M6).
	// Broadcasts and reliable messages are waited for whoever sent them,
	// so in plain mode (and the AcceptPlain stage) anyone, and with keys
	// any key holder, can still slow a member whose reader is slow:
	// BlockingMessages is for groups whose senders are trusted. A reader
	// that stops stops the agent as with BlockingDelivery, and the same
	// calls free it. Default false: drop and count
	// (Stats.MessagesDropped).
	BlockingMessages bool
	// Resolve turns a host name of a Join address into IP addresses.
	// Default: the system resolver (net.DefaultResolver, A and AAAA
	// records, /etc/hosts included). Set it to use another DNS server or
	// service discovery, or in tests.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// WireExtraTag makes every packet carry an extension entry this
	// version does not know (wire.CodecConfig.ExtraTag), standing in for
	// a later version's field: for tests of groups mixing versions.
	WireExtraTag uint16

	// wallSkew, when set (tests only), is added to every reading of the
	// wall clock: a clock set wrong at start and corrected by NTP later is
	// a skew that changes. The monotonic clock is not affected.
	wallSkew func() time.Duration
	// streamFailed, when set (tests only), sees every stream ping the
	// agent reports as failed (swim.Member.StreamFailed).
	streamFailed func(id swim.ID, seq uint32)
}
