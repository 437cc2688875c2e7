// Package agent runs one SWIM member on a real network: it owns a UDP
// transport and, on the same port number, a TCP stream listener (the
// stream fallback ping before suspecting, views larger than one datagram;
// Config.DisableStream turns it off), seals and opens packets with the
// wire package, and drives the pure swim state machine with ticks from the
// monotonic clock. It is the library API for Go services: Start, Join,
// Leave, Members (with state, suspicion level, metadata and wire-format
// range), Subscribe for membership events, SetMeta for this member's
// metadata, Broadcast, SendTo and Receive for application messages,
// Config.LocalState and Config.MergeRemoteState for application state
// exchanged with anti-entropy (memberlist's Delegate roles), and Stats;
// package promswim exports them to Prometheus.
//
// One goroutine owns the state machine; every public method talks to it
// through a channel, so an Agent is safe for concurrent use. Time given to
// the state machine is the time elapsed since Start, read from Go's
// monotonic clock (time.Since), so wall-clock steps do not disturb it.
package agent

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// Defaults.
const (
	DefaultTickInterval = time.Second
	DefaultLeaveTimeout = 2 * time.Second
	DefaultEventBuffer  = 256
	// MaxBroadcastLead is how far above this agent's clock (Unix
	// nanoseconds) a received broadcast's number may be: the clock skew
	// allowed between members, as the replay check of sealed packets
	// allows (swim.Config.BroadcastSeqCeiling).
	MaxBroadcastLead = 30 * time.Second
)

// Config configures an Agent. The zero value of every field means the
// documented default, except that Keys or Plain must be set.
type Config struct {
	// ID is this member's name in the group, at most 255 bytes of UTF-8
	// without control characters (wire.CheckName), kept across restarts.
	// Default: the advertised address.
	ID swim.ID
	// Bind is the UDP address to listen on, ip:port. Default "127.0.0.1:0".
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
	// MaxPacketSize bounds datagrams, envelope included, in bytes
	// (default 1,400). It must leave the protocol 256 bytes of payload
	// (at least 257 plain, 293 encrypted: envelope and sealed timestamp) and fit this member's own join.
	MaxPacketSize int
	// Protocol configures the SWIM state machine; Self and MaxPacketSize are
	// filled in by the agent, every other zero field means swim's default.
	Protocol swim.Config
	// Seed seeds the state machine's random source (target shuffles,
	// ping-req members, the phase of the first probe), together with the
	// member's ID: agents given one Seed still draw different sequences.
	// Default: derived from the clock at Start.
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
	// (default 10 s, memberlist's TCPTimeout). A stream ping's deadline is
	// also the end of the probe's protocol period.
	StreamTimeout time.Duration
	// MaxStreamConns bounds the inbound streams served at once (default
	// 64). When all are taken, a new one replaces the oldest that has not
	// delivered a frame yet (counted in Stats.StreamsEvicted), else it is
	// closed at once (Stats.StreamsRefused).
	MaxStreamConns int
	// MaxStreamBytes bounds what one inbound stream may carry, frame
	// prefixes included (default 8 MiB); MaxStreamMembers bounds the
	// membership updates one inbound stream may carry (default: the
	// protocol's MaxMembers plus one, a whole view and a join's Alive). A stream over either cap is cut and counted
	// (Stats.StreamOversize). Every frame is at most MaxPacketSize bytes.
	MaxStreamBytes   int
	MaxStreamMembers int
	// StreamWrap, when set, wraps every stream connection, accepted
	// (inbound true) or dialled, before a frame crosses it: TLS, byte
	// accounting, or an impairment in a benchmark (transport.StreamConfig.Wrap).
	// An error closes the connection.
	StreamWrap func(conn net.Conn, inbound bool) (net.Conn, error)
	// WireVersion is the wire format written (wire.CodecConfig.Version;
	// 0: the latest, wire.Version). Packets of every format are read. Set
	// 1 while the group still has members that read only format 1; those
	// show a zero Versions range in Members. Format 1 carries no metadata
	// and no application data: with 1, Start refuses Protocol.Meta and
	// LocalState, and Broadcast, SendTo and SetMeta fail, with
	// ErrNeedsFormat2.
	WireVersion byte
	// LocalState, when set, returns the application's state to send with
	// every anti-entropy exchange and answer to a join or pull,
	// at most Protocol.MaxStateSize bytes (default 512); see
	// swim.Config.LocalState, which it sets. MergeRemoteState receives the
	// states other members send: from, the state, and whether it came as
	// the answer to this member's join. Both run on the agent's goroutine
	// and must not block (memberlist's Delegate.LocalState and
	// MergeRemoteState).
	LocalState       func(join bool) []byte
	MergeRemoteState func(from swim.Node, state []byte, join bool)
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

// Member is one entry of the membership view: the state machine's view
// entry (state, incarnation, per-peer suspicion level from the peer's
// detector, φ by default; instants are offsets from the agent's start) and
// whether it is this member.
type Member struct {
	swim.PeerStatus
	Self bool
}

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
	// accepted ones closed before their first frame to make room for a
	// new one (each stream counts once in StreamsIn or StreamsRefused;
	// eviction is how an accepted one ended, as a timeout is); StreamDialErrors
	// failed dials (refused, timed out). Inbound streams cut for a frame
	// that failed authentication (StreamAuthFailures), failed the replay
	// check (StreamReplayed), did not decode or is not a ping, sync or join
	// (StreamDecodeErrors; also an empty frame or one cut short; a kind
	// of a later version counts in UnknownKinds instead), a length
	// above MaxPacketSize or a stream over MaxStreamBytes or
	// MaxStreamMembers (StreamOversize), or the deadline passing
	// (StreamTimeouts: a slow sender). StreamSyncs counts views sent over
	// a stream, StreamSyncFallbacks those sent as datagrams after their
	// stream failed. Frames count in PacketsSent and BytesSent too.
	StreamsIn, StreamsOut, StreamsRefused, StreamDialErrors          uint64
	StreamsEvicted                                                   uint64
	StreamAuthFailures, StreamReplayed, StreamDecodeErrors           uint64
	StreamOversize, StreamTimeouts, StreamSyncs, StreamSyncFallbacks uint64
	// StreamPingsSkipped counts stream fallback pings the state machine
	// asked for that were not sent: every dialling slot was taken (at most
	// 16 streams are dialled at once) or the target's address could not
	// be dialled. The probe then waits for the end of its period, as
	// without the stream path.
	StreamPingsSkipped uint64
	// Protocol holds the state machine's counters (swim.Stats: probes,
	// suspicions, refutations, eager gossip sent, ...) as of the last
	// packet or tick the agent processed.
	Protocol swim.Stats
}

// leavePoll is the longest the agent waits between two ticks while
// leaving: the state machine finishes leaving at the first tick after its
// leave announcement has been sent (swim.Member.Left), which is not a
// deadline it reports.
const leavePoll = 50 * time.Millisecond

// authLogEvery is the least time between two warnings of packets that
// failed authentication; the warning counts those dropped in between.
const authLogEvery = 10 * time.Second

// minPayload is the smallest packet payload the swim state machine accepts
// (swim.Config.MaxPacketSize).
const minPayload = 256

// ErrStopped is returned by calls on an agent that has stopped.
var ErrStopped = errors.New("agent: stopped")

// Agent runs one member. Create it with Start.
type Agent struct {
	cfg   Config
	tr    transport.Transport
	codec *wire.Codec
	keys  *wire.Keyring
	log   *slog.Logger
	self  swim.Node
	src   netip.Addr // the address datagrams and dialled streams leave from (sendSource); invalid: the kernel's choice
	start time.Time
	m     *swim.Member
	// wallNs is the wall clock in Unix nanoseconds read with the last now.
	wallNs atomic.Int64

	reqs    chan func()
	stopped chan struct{}
	leaving chan struct{}
	leaveMu sync.Once
	err     error

	subMu     sync.Mutex
	subs      map[int]chan swim.Event
	msgSubs   map[int]chan swim.Message
	subID     int
	subClosed bool // set when the agent stops; later subscriptions get a closed channel

	sent, sentBytes, recv, recvBytes                          atomic.Uint64
	authFail, decodeErr, rejected, encodeErr, sendErr, evDrop atomic.Uint64
	replayed, unknownKind, msgDrop                            atomic.Uint64
	streamsIn, streamsOut, streamDialErr, streamAuth          atomic.Uint64
	streamReplayed, streamGarbage, streamOversize             atomic.Uint64
	streamTimeouts, streamSyncs, streamFallbacks              atomic.Uint64
	streamSkipped                                             atomic.Uint64
	conflict                                                  atomic.Pointer[swim.Node] // another node claiming this member's ID

	// joinWaiters are closed, on the agent's goroutine, as soon as this
	// member knows another live member or its ID was refused (joined).
	joinWaiters map[chan struct{}]struct{}

	// The stream path (stream.go); sl is nil when it is off.
	sl         *transport.StreamListener
	streamInCh chan streamIn
	streamRes  chan streamResult
	outSlots   chan struct{}
	quit       chan struct{} // closed when the agent starts stopping
	outWG      sync.WaitGroup
	streamCtx  context.Context
	streamStop context.CancelFunc

	// The last swim.Stats published for Stats, under protoMu (a copy in
	// place: a pointer swapped in would allocate at every packet that
	// moves a counter), and its copy read by the agent goroutine only.
	protoMu   sync.Mutex
	proto     swim.Stats
	lastProto swim.Stats
	// Rate limit of the authentication warning (agent goroutine only):
	// when the last was logged, and failures not logged since.
	authLogged   time.Duration
	authLoggedOK bool
	authQuiet    uint64
	authFrom     netip.AddrPort // source of the last datagram that failed authentication (agent goroutine only)
}

// Start opens the transport, creates the state machine and runs it until
// ctx is cancelled (then the member leaves gracefully, within LeaveTimeout)
// or Leave or Close is called.
func Start(ctx context.Context, cfg Config) (*Agent, error) {
	if cfg.TickInterval == 0 {
		cfg.TickInterval = DefaultTickInterval
	}
	if cfg.TickInterval < 0 {
		return nil, fmt.Errorf("agent: TickInterval %v is negative", cfg.TickInterval)
	}
	leave := detector.OrDefault(cfg.LeaveTimeout, DefaultLeaveTimeout)
	cfg.LeaveTimeout = &leave
	if leave < 0 {
		return nil, fmt.Errorf("agent: LeaveTimeout %v is negative", leave)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	sec := &wire.Security{Plain: cfg.Plain}
	if len(cfg.Keys) > 0 {
		kr, err := wire.NewKeyring(cfg.Keys[0], cfg.Keys[1:]...)
		if err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		sec.Keyring = kr
	}
	codec, err := wire.NewCodec(wire.CodecConfig{Security: sec, MaxPacketSize: cfg.MaxPacketSize,
		Version: cfg.WireVersion, ExtraTag: cfg.WireExtraTag})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if codec.MaxPayload() < minPayload {
		return nil, fmt.Errorf("agent: MaxPacketSize %d is too small: the protocol needs %d bytes of payload, so at least %d with this envelope",
			codec.MaxPacketSize(), minPayload, minPayload+codec.MaxPacketSize()-codec.MaxPayload())
	}
	if err := streamDefaults(&cfg); err != nil {
		return nil, err
	}
	// The stream listener's handler finds the agent here once it exists;
	// a stream arriving before is closed (its sender falls back).
	var ready atomic.Pointer[Agent]
	handle := func(c *transport.Conn) {
		if a := ready.Load(); a != nil {
			a.serveStream(c)
		}
	}
	scfg := transport.StreamConfig{MaxFrame: codec.MaxPacketSize(), MaxBytes: cfg.MaxStreamBytes,
		MaxConns: cfg.MaxStreamConns, Timeout: cfg.StreamTimeout, Wrap: cfg.StreamWrap}
	var sl *transport.StreamListener
	tr := cfg.Transport
	var src netip.Addr
	if tr == nil {
		src = sendSource(cfg.Bind, cfg.Advertise)
	}
	switch {
	case tr == nil && !cfg.DisableStream && cfg.StreamBind == "":
		u, l, err := listenBoth(orDefault(cfg.Bind, "127.0.0.1:0"), src, codec.MaxPacketSize(), scfg, handle)
		if err != nil {
			return nil, err
		}
		tr, sl = u, l
	case tr == nil:
		u, err := transport.Listen(transport.Config{Bind: cfg.Bind, MaxPacketSize: codec.MaxPacketSize(), Source: src})
		if err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		tr = u
	}
	if sl == nil && !cfg.DisableStream {
		scfg.Bind = orDefault(cfg.StreamBind, tr.LocalAddr().String())
		l, err := transport.ListenStream(scfg, handle)
		if err != nil {
			_ = tr.Close()
			return nil, fmt.Errorf("agent: stream listener: %w (set StreamBind, or DisableStream)", err)
		}
		sl = l
	}
	closeAll := func() {
		_ = tr.Close()
		if sl != nil {
			_ = sl.Close()
		}
	}
	self := swim.Node{ID: cfg.ID, Addr: cfg.Advertise}
	if self.Addr == "" {
		self.Addr = tr.LocalAddr().String()
	}
	if self.ID == "" {
		self.ID = swim.ID(self.Addr)
	}
	if err := checkSelf(self); err != nil {
		closeAll()
		return nil, err
	}
	if len(cfg.Protocol.Meta) > swim.MaxMetaLen {
		closeAll()
		return nil, fmt.Errorf("agent: Protocol.Meta: %w: %d bytes", swim.ErrMetaTooLarge, len(cfg.Protocol.Meta))
	}
	if codec.Version() < 2 && (len(cfg.Protocol.Meta) > 0 || cfg.LocalState != nil) {
		// Format 1 would drop them from every packet: only this member
		// would ever see its metadata, and no state would be sent.
		closeAll()
		return nil, fmt.Errorf("%w: Protocol.Meta or LocalState is set", ErrNeedsFormat2)
	}
	if cfg.Protocol.Versions.IsZero() {
		cfg.Protocol.Versions = wire.Versions()
	}
	join := swim.Packet{Kind: swim.MsgJoin, From: self, To: swim.Node{Addr: self.Addr},
		Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: self, From: self.ID,
			Meta: string(cfg.Protocol.Meta), Versions: cfg.Protocol.Versions}}}
	if cfg.Protocol.SigningKey != nil {
		join.Updates[0].Proof = swim.Proof(make([]byte, swim.ProofSize)) // its size: a join carries the signed Alive
	}
	if n := join.Size(); n > codec.MaxPayload() {
		closeAll()
		return nil, fmt.Errorf("agent: ID and address too long for MaxPacketSize %d: a join needs up to %d bytes plus %d of envelope",
			codec.MaxPacketSize(), n, codec.MaxPacketSize()-codec.MaxPayload())
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	pc := cfg.Protocol
	if cfg.LocalState != nil {
		pc.LocalState = cfg.LocalState
	}
	pc.Self = self
	pc.MaxPacketSize = codec.MaxPayload()
	pc.StreamProbe = !cfg.DisableStream && !cfg.DisableStreamProbes
	a := &Agent{
		cfg: cfg, tr: tr, codec: codec, keys: sec.Keyring, log: cfg.Logger, self: self, src: src,
		reqs:    make(chan func()),
		stopped: make(chan struct{}),
		leaving: make(chan struct{}),
		subs:    map[int]chan swim.Event{},

		joinWaiters: map[chan struct{}]struct{}{},

		sl:         sl,
		streamInCh: make(chan streamIn, 64),
		streamRes:  make(chan streamResult, 64),
		outSlots:   make(chan struct{}, streamOutMax),
		quit:       make(chan struct{}),
	}
	a.streamCtx, a.streamStop = context.WithCancel(context.Background())
	a.start = time.Now()
	a.wallNs.Store(a.wallAt(a.start))
	if pc.FirstBroadcastSeq == 0 {
		// Above every number of a previous life of this member: receivers
		// drop broadcasts numbered at or below what they delivered.
		pc.FirstBroadcastSeq = uint64(max(a.wallNs.Load(), 0))
	}
	if pc.BroadcastSeqCeiling == nil {
		// Every member numbers from its clock, so a number above this
		// member's clock by more than the skew allowed is forged. The
		// clock is the wall clock read with the Step's now (a.now), not
		// the start time plus the monotonic time since: a clock that NTP
		// corrects after the start is followed, and a member started
		// behind does not refuse honest numbers until it restarts.
		pc.BroadcastSeqCeiling = func(time.Duration) uint64 {
			return uint64(max(a.wallNs.Load(), 0)) + uint64(MaxBroadcastLead)
		}
	}
	a.m, err = swim.New(pc, machineRand(cfg.Seed, pc.Self.ID))
	if err != nil {
		a.streamStop()
		closeAll()
		return nil, fmt.Errorf("agent: %w", err)
	}
	if a.cfg.MaxStreamMembers == 0 {
		a.cfg.MaxStreamMembers = a.m.Config().MaxMembers + 1 // a whole view and the Alive of a join
	}
	ready.Store(a)
	go a.run(ctx)
	return a, nil
}

// sendSource is the address a member bound to a wildcard address (0.0.0.0,
// ::) sends from: its advertised IP when that is an address of this host,
// so that the members see its packets come from the address it claims
// (they answer a join only then: joinFromClaimed). Without it the kernel
// picks the address of the route, on a host with several addresses often
// another one. Invalid, the kernel's choice, when Bind names an address
// (the socket sends from it) or the advertised IP is not local (behind
// NAT: the translated address is what the members see).
func sendSource(bind, advertise string) netip.Addr {
	b, err1 := netip.ParseAddrPort(bind)
	ad, err2 := netip.ParseAddrPort(advertise)
	if err1 != nil || err2 != nil || !b.Addr().IsUnspecified() || !transport.IsLocal(ad.Addr()) {
		return netip.Addr{}
	}
	if b.Addr().Is4() && !ad.Addr().Unmap().Is4() {
		return netip.Addr{} // an IPv4 socket cannot send from an IPv6 address
	}
	return ad.Addr().Unmap()
}

// checkSelf refuses an identity the other members could not use: an ID the
// wire format refuses, or an advertised address that is not ip:port or
// names no host (0.0.0.0, ::, port 0), which the others would send to
// themselves or nowhere, then suspect and declare this member dead.
func checkSelf(n swim.Node) error {
	if err := wire.CheckName(string(n.ID)); err != nil {
		return fmt.Errorf("agent: ID %q: %w", n.ID, err)
	}
	ap, err := netip.ParseAddrPort(n.Addr)
	switch {
	case err != nil:
		return fmt.Errorf("agent: advertised address %q: want ip:port: %w", n.Addr, err)
	case ap.Addr().IsUnspecified() || ap.Port() == 0:
		return fmt.Errorf("agent: advertised address %s names no host or port: set Advertise to an address the other members can reach", n.Addr)
	}
	return nil
}

// now is the state machine's clock: time since Start on the monotonic clock.
// The same reading of the wall clock is kept for the broadcast numbering
// ceiling (swim.Config.BroadcastSeqCeiling), so that the core, which reads
// no clock, is given what the agent read.
func (a *Agent) now() time.Duration {
	t := time.Now()
	a.wallNs.Store(a.wallAt(t))
	return t.Sub(a.start)
}

// wallAt is t's wall clock reading in Unix nanoseconds (plus the test
// skew, Config.wallSkew).
func (a *Agent) wallAt(t time.Time) int64 {
	ns := t.UnixNano()
	if a.cfg.wallSkew != nil {
		ns += int64(a.cfg.wallSkew())
	}
	return ns
}

func (a *Agent) run(ctx context.Context) {
	defer close(a.stopped)
	defer func() {
		close(a.quit)
		a.streamStop()
		if a.sl != nil {
			_ = a.sl.Close()
		}
		a.outWG.Wait()
		_ = a.tr.Close()
		a.subMu.Lock()
		for id, ch := range a.subs {
			close(ch)
			delete(a.subs, id)
		}
		a.closeMessageSubs()
		a.subClosed = true
		a.subMu.Unlock()
	}()
	tick := time.NewTimer(0)
	defer tick.Stop()
	var leaveDeadline <-chan time.Time
	startLeave := func() {
		if leaveDeadline != nil {
			return
		}
		if err := a.m.Leave(a.now()); err != nil {
			a.log.Debug("leave", "err", err)
		}
		leaveDeadline = time.After(*a.cfg.LeaveTimeout)
	}
	done := ctx.Done()
	leaving := a.leaving
	packets := a.tr.Packets()
	for {
		// A due tick goes before queued packets, so that after this process
		// was stopped or starved the state machine sees the late tick (its
		// local-pause guard) before the backlog.
		select {
		case <-tick.C:
			a.m.Tick(a.now())
			a.flush()
			if a.m.Left() {
				return
			}
			a.schedule(tick, leaveDeadline != nil)
			continue
		default:
		}
		select {
		case <-done:
			done = nil
			startLeave()
		case <-leaving:
			leaving = nil
			startLeave()
		case <-leaveDeadline:
			return
		case <-tick.C:
			a.m.Tick(a.now())
		case p, ok := <-packets:
			if !ok {
				a.err = errors.New("agent: transport closed")
				return
			}
			a.receive(p)
		case f := <-a.reqs:
			f()
		case in := <-a.streamInCh:
			a.receiveStream(in)
		case r := <-a.streamRes:
			a.streamResult(r)
		}
		a.flush()
		if a.m.Left() {
			return
		}
		a.schedule(tick, leaveDeadline != nil)
	}
}

// schedule sets the timer to the state machine's next deadline, but at
// least every TickInterval (every leavePoll while leaving).
func (a *Agent) schedule(t *time.Timer, leaving bool) {
	wait := a.cfg.TickInterval
	if leaving {
		wait = min(wait, leavePoll)
	}
	if at, ok := a.m.NextDeadline(); ok {
		wait = min(wait, max(0, at-a.now()))
	}
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	t.Reset(wait)
}

func (a *Agent) receive(p transport.Packet) {
	a.recv.Add(1)
	a.recvBytes.Add(uint64(len(p.Data)))
	pkt, err := a.codec.Decode(p.Data)
	if err != nil {
		// A *wire.DecodeError about the payload comes after the envelope was
		// opened (authenticated, in encrypted mode). Everything else, an
		// oversized datagram included, never got past the envelope: an
		// unknown envelope byte, a short packet, a wrong key, the wrong mode.
		var de *wire.DecodeError
		if errors.Is(err, wire.ErrReplay) {
			a.replayed.Add(1)
		} else if errors.Is(err, wire.ErrUnknownKind) {
			a.unknownKind.Add(1) // a later version's message: not an error
		} else if errors.As(err, &de) && !errors.Is(err, wire.ErrOversize) {
			a.decodeErr.Add(1)
		} else {
			a.authFail.Add(1)
			a.authFrom = p.From
			a.warnAuth(p.From, err)
			return
		}
		a.log.Debug("dropped packet", "from", p.From, "err", err)
		return
	}
	if pkt.Kind == swim.MsgJoin && !joinFromClaimed(pkt.From.Addr, p.From, true) {
		a.rejected.Add(1)
		a.log.Debug("join refused: it did not come from the address it claims", "from", p.From, "claimed", pkt.From.Addr)
		return
	}
	if pkt.From.Addr == "" && p.From.IsValid() && a.m.State(pkt.From.ID) == 0 {
		// Wire format 2 leaves the sender's address out of acks and
		// nacks; the state machine uses the one it holds, and needs the
		// datagram's source only for a sender it does not know (whom it
		// asks for its view).
		pkt.From.Addr = netip.AddrPortFrom(p.From.Addr().Unmap(), p.From.Port()).String()
	}
	if err := a.m.Step(a.now(), pkt); err != nil {
		a.rejected.Add(1)
		a.log.Debug("rejected packet", "from", p.From, "err", err)
	}
}

// joinFromClaimed reports whether a join that arrived from src may be
// answered at the address it claims: the same IP address and, for a
// datagram (port true), the same port; a stream comes from an ephemeral
// port, so only its address is compared. A join is answered with the
// whole view sent to the claimed address, so without this check one small
// forged join (a key holder's, or anyone's in plain mode) reflects up to
// hundreds of times its size at any address (memberlist answers a join on
// the connection it came on, which has the same effect). src invalid
// (a test transport that does not say) is not checked.
func joinFromClaimed(claimed string, src netip.AddrPort, port bool) bool {
	if !src.IsValid() {
		return true
	}
	c, err := netip.ParseAddrPort(claimed)
	if err != nil {
		return false
	}
	if c.Addr().Unmap() != src.Addr().Unmap() {
		return false
	}
	return !port || c.Port() == src.Port()
}

// warnAuth logs a datagram or stream frame that failed authentication at
// Warn level, at most once per authLogEvery; the others are counted into
// the next warning (a flood of forged packets must not flood the log).
// Stats.AuthFailures and Stats.StreamAuthFailures count them all; the
// line's total is their sum.
func (a *Agent) warnAuth(from netip.AddrPort, err error) {
	now := a.now()
	if a.authLoggedOK && now-a.authLogged < authLogEvery {
		a.authQuiet++
		return
	}
	a.log.Warn("dropped a packet that failed authentication (wrong key, tampering, or not sealed as this group's packets are)",
		"from", from, "err", err, "unlogged_since_last", a.authQuiet, "total", a.authFail.Load()+a.streamAuth.Load())
	a.authLogged, a.authLoggedOK, a.authQuiet = now, true, 0
}

// flush sends what the state machine produced and publishes its events.
func (a *Agent) flush() {
	if st := a.m.Stats(); st != a.lastProto {
		a.lastProto = st
		a.protoMu.Lock()
		a.proto = st
		a.protoMu.Unlock()
	}
	rd := a.m.Ready()
	events := rd.Events
	for i := 0; i < len(rd.Packets); {
		if n := a.viewRunLen(rd.Packets[i:]); n > 0 {
			if to, err := netip.ParseAddrPort(rd.Packets[i].To.Addr); err == nil {
				a.sendViewStream(to, rd.Packets[i:i+n])
				i += n
				continue
			}
		}
		a.sendDatagrams(rd.Packets[i : i+1])
		i++
	}
	for _, sp := range rd.StreamProbes {
		a.startStreamProbe(sp)
	}
	a.deliver(rd.Messages, rd.RemoteStates)
	a.publish(events)
}

// viewRunLen is viewRun when the stream path is on, else 0.
func (a *Agent) viewRunLen(pkts []swim.Packet) int {
	if a.sl == nil {
		return 0
	}
	return viewRun(pkts)
}

// sendDatagrams seals and sends packets as datagrams. Agent goroutine.
func (a *Agent) sendDatagrams(pkts []swim.Packet) {
	for i := range pkts {
		p := &pkts[i]
		to, err := netip.ParseAddrPort(p.To.Addr)
		if err != nil {
			a.sendErr.Add(1)
			a.log.Debug("bad destination address", "to", p.To, "err", err)
			continue
		}
		b, n, err := a.codec.Encode(p)
		if err != nil {
			a.encodeErr.Add(1)
			a.log.Warn("encode failed", "kind", p.Kind, "err", err)
			continue
		}
		if n < len(p.Updates) {
			a.log.Debug("updates cut to fit the packet", "kept", n, "of", len(p.Updates))
		}
		if err := a.tr.Send(to, b); err != nil {
			a.sendErr.Add(1)
			a.log.Debug("send failed", "to", to, "err", err)
			continue
		}
		a.sent.Add(1)
		a.sentBytes.Add(uint64(len(b)))
	}
}

// publish hands events to the subscribers and releases waiting joins.
// Agent goroutine.
func (a *Agent) publish(events []swim.Event) {
	if len(events) == 0 {
		return
	}
	for _, e := range events {
		if e.Kind == swim.EventStreamOnly {
			a.log.Warn("member reachable only over the stream path (TCP): its UDP probes failed, directly and through others; the network may drop UDP to or from it",
				"id", e.Node.ID, "addr", e.Node.Addr, "stream_only_total", a.m.Stats().StreamOnly)
		}
		if e.Kind == swim.EventConflict {
			// Only a claim heard while a Join waits refuses that Join: the
			// same event shape (another node, this member held) also
			// reports a newcomer this member refused as the ID's holder,
			// which must not fail the holder's own later Joins.
			if e.Held == a.self && len(a.joinWaiters) > 0 {
				a.conflict.Store(&e.Node)
			}
			a.log.Warn("member ID conflict: two nodes claim one ID; the one held is kept and the other refused",
				"id", e.Node.ID, "claimed_by", e.Node.Addr, "held", e.Held.Addr, "self", e.Held == a.self)
		}
	}
	a.subMu.Lock()
	for _, e := range events {
		for _, ch := range a.subs {
			select {
			case ch <- e:
			default:
				a.evDrop.Add(1)
			}
		}
	}
	a.subMu.Unlock()
	// Waiting joins are released after the events are published, so a
	// subscriber has the join event of the member that answered by the
	// time Join returns.
	if len(a.joinWaiters) > 0 && a.joined() {
		for ch := range a.joinWaiters {
			close(ch)
			delete(a.joinWaiters, ch)
		}
	}
}

// joined reports whether a Join can return: this member knows another
// alive or suspect member, or another node holds its ID. Agent goroutine
// only.
func (a *Agent) joined() bool {
	if a.conflict.Load() != nil {
		return true
	}
	for i, p := range a.m.Members(a.now()) {
		if i > 0 && (p.State == swim.StateAlive || p.State == swim.StateSuspect) {
			return true
		}
	}
	return false
}

// do runs f on the agent's goroutine and waits for it.
func (a *Agent) do(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case a.reqs <- func() { f(); close(done) }:
	case <-a.stopped:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-a.stopped:
		return ErrStopped
	}
}

// SetMeta replaces this member's metadata (at most swim.MaxMetaLen = 512
// bytes) and disseminates it with an incarnation bump (swim.Member.SetMeta);
// the other members report it with swim.EventUpdate and show it in
// Members. Errors: swim.ErrMetaTooLarge, swim.ErrLeft, ErrNeedsFormat2
// (non-empty metadata on an agent writing wire format 1), ErrStopped, or
// the context's.
func (a *Agent) SetMeta(ctx context.Context, meta []byte) error {
	if len(meta) > swim.MaxMetaLen {
		return fmt.Errorf("agent: %w: %d bytes", swim.ErrMetaTooLarge, len(meta))
	}
	if a.codec.Version() < 2 && len(meta) > 0 {
		return ErrNeedsFormat2
	}
	var err error
	if derr := a.do(ctx, func() { err = a.m.SetMeta(meta) }); derr != nil {
		return derr
	}
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

// Keyring returns the live keyring (nil in plain mode). Rotate keys at run
// time through it: AddKey the new key on every member, then UseKey it on
// every member, then RemoveKey the old one; packets sealed with any key in
// the ring are accepted meanwhile.
func (a *Agent) Keyring() *wire.Keyring { return a.keys }

// Self returns this member's ID and advertised address.
func (a *Agent) Self() swim.Node { return a.self }

// Join asks the members at addrs (ip:port) to admit this member and waits
// until this member knows at least one other live member, or ctx is done.
// It fails at once when a member refuses the join because another node
// holds this member's ID (swim.EventConflict), with a *ConflictError.
// Join may be called again, for example to rejoin after a partition.
func (a *Agent) Join(ctx context.Context, addrs ...string) error {
	if len(addrs) == 0 {
		return errors.New("agent: Join needs at least one address")
	}
	for _, s := range addrs {
		if _, err := netip.ParseAddrPort(s); err != nil {
			return fmt.Errorf("agent: join address %q: want ip:port: %w", s, err)
		}
	}
	// The wait is driven by the agent's goroutine: it closes joined in
	// flush, right after the packet that brought the answer is processed,
	// so Join returns without polling delay.
	var jerr error
	joined := make(chan struct{})
	auth0 := a.authFail.Load()
	if err := a.do(ctx, func() {
		a.conflict.Store(nil) // a refusal of an earlier Join is not this one's
		if jerr = a.m.Join(a.now(), addrs); jerr != nil {
			return
		}
		if a.joined() {
			close(joined)
			return
		}
		a.joinWaiters[joined] = struct{}{}
	}); err != nil {
		return err
	}
	if jerr != nil {
		return fmt.Errorf("agent: %w", jerr)
	}
	select {
	case <-joined:
	case <-a.stopped:
		return ErrStopped
	case <-ctx.Done():
		// Forget the waiter (best effort: a stopped agent has no waiters to
		// keep), and say what the join heard meanwhile.
		je := &JoinError{Addrs: addrs, Err: ctx.Err()}
		_ = a.do(context.Background(), func() {
			delete(a.joinWaiters, joined)
			if r, ok := a.m.JoinRefusal(); ok {
				je.Refusal = &r
			}
			if je.AuthFailures = a.authFail.Load() - auth0; je.AuthFailures > 0 {
				je.AuthFrom = a.authFrom
			}
		})
		return je
	}
	if c := a.conflict.Load(); c != nil {
		return &ConflictError{ID: a.self.ID, Holder: *c}
	}
	return nil
}

// JoinError is Join's error when its context ends before a member admitted
// this one. It wraps the context's error (Err) and says what the join
// heard meanwhile:
//   - Refusal: a member answered with this member's ID held dead or left
//     at another address (swim.JoinRefusal). The members hand a dead
//     member's ID to a new address only once it has been dead or left for
//     their swim.Config.DeadReclaimTime, and, with signed self-updates,
//     only to the key bound to the ID until the entry is reaped
//     (swim.Config.DeadRetention). The join may succeed later.
//   - AuthFailures: datagrams that arrived during the join and failed
//     authentication (another key, tampering, or one side plain), the
//     last from AuthFrom. A member with another key never answers a join,
//     and the members that probe this address send what it cannot open.
//
// Both empty: nothing answered (no member at the addresses, a key
// mismatch both ways, a join sent from another address than the one
// advertised).
type JoinError struct {
	Addrs        []string
	Err          error
	Refusal      *swim.JoinRefusal
	AuthFailures uint64
	AuthFrom     netip.AddrPort
}

func (e *JoinError) Error() string {
	msg := fmt.Sprintf("agent: join %v: %v", e.Addrs, e.Err)
	if r := e.Refusal; r != nil {
		how := "dead"
		if r.Left {
			how = "left"
		}
		msg += fmt.Sprintf("; refused: the member at %s holds ID %q as %s at %s (incarnation %d) and keeps it from a new address "+
			"until it has been down for its DeadReclaimTime, or, with signed updates, from any key but the one bound to the ID",
			r.By.Addr, r.Held.ID, how, r.Held.Addr, r.Incarnation)
	}
	if e.AuthFailures > 0 {
		msg += fmt.Sprintf("; %d datagrams that failed authentication arrived meanwhile, the last from %v (another key, or one side plain)",
			e.AuthFailures, e.AuthFrom)
	}
	return msg
}

// Unwrap returns the context's error.
func (e *JoinError) Unwrap() error { return e.Err }

// ConflictError is Join's error when a member refuses the join because
// another node, Holder, holds this member's ID alive or suspect. Holder
// may be this member's own previous process, crashed and not yet declared
// dead: once it is, a Join from a new address reclaims the ID
// (swim.Config.DeadReclaimTime), so a caller restarted on a new address
// may retry.
type ConflictError struct {
	ID     swim.ID
	Holder swim.Node
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("agent: join refused: ID %q is already held by the member at %s; start this member with another ID", e.ID, e.Holder.Addr)
}

// Members returns the membership view: this member first, then every other
// member known, dead and left ones included until they are reaped
// (swim.Config.DeadRetention), sorted by ID.
// It returns nil once the agent has stopped.
func (a *Agent) Members() []Member {
	ms, _ := a.MembersContext(context.Background())
	return ms
}

// MembersContext is Members with a context bounding the wait.
func (a *Agent) MembersContext(ctx context.Context) ([]Member, error) {
	var ms []Member
	err := a.do(ctx, func() { ms = a.members() })
	return ms, err
}

// Subscribe returns a channel of membership events with the given buffer
// (default 256 when buffer <= 0) and a function that cancels the
// subscription. The protocol never waits for a subscriber: events that find
// the channel full are dropped and counted in Stats.EventsDropped. The
// channel is closed when the agent stops or the subscription is cancelled.
func (a *Agent) Subscribe(buffer int) (<-chan swim.Event, func()) {
	if buffer <= 0 {
		buffer = DefaultEventBuffer
	}
	ch := make(chan swim.Event, buffer)
	a.subMu.Lock()
	defer a.subMu.Unlock()
	if a.subClosed {
		close(ch)
		return ch, func() {}
	}
	id := a.subID
	a.subID++
	a.subs[id] = ch
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			a.subMu.Lock()
			defer a.subMu.Unlock()
			if c, ok := a.subs[id]; ok {
				close(c)
				delete(a.subs, id)
			}
		})
	}
}

// Leave announces a voluntary leave, keeps the member running for
// LeaveTimeout so the announcement spreads, then stops. It returns when the
// agent has stopped or ctx is done.
func (a *Agent) Leave(ctx context.Context) error {
	a.leaveMu.Do(func() { close(a.leaving) })
	select {
	case <-a.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close leaves gracefully and waits for the agent to stop.
func (a *Agent) Close() error { return a.Leave(context.Background()) }

// Done is closed when the agent has stopped.
func (a *Agent) Done() <-chan struct{} { return a.stopped }

// Err returns why the agent stopped on its own (nil after Leave or
// cancellation).
func (a *Agent) Err() error {
	select {
	case <-a.stopped:
		return a.err
	default:
		return nil
	}
}

// Stats returns the packet counters.
func (a *Agent) Stats() Stats {
	st := Stats{
		PacketsSent: a.sent.Load(), BytesSent: a.sentBytes.Load(),
		PacketsReceived: a.recv.Load(), BytesReceived: a.recvBytes.Load(),
		AuthFailures: a.authFail.Load(), DecodeErrors: a.decodeErr.Load(), Rejected: a.rejected.Load(),
		EncodeErrors: a.encodeErr.Load(), SendErrors: a.sendErr.Load(),
		EventsDropped: a.evDrop.Load(), MessagesDropped: a.msgDrop.Load(), Replayed: a.replayed.Load(), UnknownKinds: a.unknownKind.Load(),

		StreamsIn: a.streamsIn.Load(), StreamsOut: a.streamsOut.Load(), StreamDialErrors: a.streamDialErr.Load(),
		StreamAuthFailures: a.streamAuth.Load(), StreamReplayed: a.streamReplayed.Load(),
		StreamDecodeErrors: a.streamGarbage.Load(), StreamOversize: a.streamOversize.Load(),
		StreamTimeouts: a.streamTimeouts.Load(), StreamSyncs: a.streamSyncs.Load(), StreamSyncFallbacks: a.streamFallbacks.Load(),
		StreamPingsSkipped: a.streamSkipped.Load(),
	}
	if a.sl != nil {
		ss := a.sl.Stats()
		st.StreamsRefused, st.StreamsEvicted = ss.Refused, ss.Evicted
	}
	cs := a.codec.Stats()
	st.UnknownFields, st.Format1Received = cs.UnknownFields, cs.Formats[1]
	a.protoMu.Lock()
	st.Protocol = a.proto
	a.protoMu.Unlock()
	if ts, ok := a.tr.(interface{ Stats() transport.Stats }); ok {
		t := ts.Stats()
		st.DroppedOversize, st.DroppedQueueFull = t.DroppedOversize, t.DroppedQueueFull
	}
	return st
}

func (a *Agent) members() []Member {
	ps := a.m.Members(a.now())
	out := make([]Member, len(ps))
	for i, p := range ps {
		out[i] = Member{PeerStatus: p, Self: i == 0}
	}
	slices.SortStableFunc(out[1:], func(x, y Member) int { return strings.Compare(string(x.Node.ID), string(y.Node.ID)) })
	return out
}

// machineRand is the state machine's random source: seed, mixed with a
// hash of the member's ID (FNV-1a), so that agents given the same
// Config.Seed (fixed for reproducibility in every process of a service)
// do not draw the same phase for their first probe, which would put them
// back on one common probe grid, nor the same sequence of targets.
func machineRand(seed uint64, id swim.ID) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(id)) // never fails
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15^h.Sum64()))
}
