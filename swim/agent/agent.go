// Package agent runs one SWIM member on a real network: it owns a UDP
// transport and, on the same port number, a TCP stream listener (the
// stream fallback ping before suspecting, views larger than one datagram,
// reliable messages; Config.DisableStream turns it off), seals and opens
// packets with the wire package (keys, cluster label, turning encryption
// on while running: Config.AcceptPlain), and drives the pure swim state
// machine with ticks from the monotonic clock. It is the library API for
// Go services: Start, Join (ip:port or host names), Leave, Shutdown (stop
// without leaving), Members (with state, suspicion level, metadata and
// wire-format range), LocalHealthMultiplier, Subscribe for membership
// events, SetMeta for this member's metadata, Broadcast, SendTo,
// SendToAddress, SendReliable and Receive for application messages,
// Config.LocalState and Config.MergeRemoteState for application state
// exchanged with anti-entropy, the state machine's filters and ping
// callbacks in Config.Protocol (MergeFilter, AliveFilter, AckPayload,
// PingComplete), and Stats; package promswim exports them to Prometheus.
// docs/coming-from-memberlist.md maps memberlist's API onto it.
//
// One goroutine owns the state machine; every public method talks to it
// through a channel, so an Agent is safe for concurrent use. Time given to
// the state machine is the time elapsed since Start, read from Go's
// monotonic clock (time.Since), so wall-clock steps do not disturb it.
package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/lateness"
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

// Member is one entry of the membership view: the state machine's view
// entry (state, incarnation, per-peer suspicion level from the peer's
// detector, φ by default; instants are offsets from the agent's start) and
// whether it is this member.
type Member struct {
	swim.PeerStatus
	Self bool
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
	sec   *wire.Security
	// plainMu makes SetSendPlain and SetAcceptPlain check and change the
	// pair of switches at once (ErrPlainStage).
	plainMu sync.Mutex
	log     *slog.Logger
	self    swim.Node
	// selfAddr is self.Addr parsed (checkSelf made sure it parses).
	selfAddr netip.AddrPort
	src      netip.Addr // the address datagrams and dialled streams leave from (sendSource); invalid: the kernel's choice
	start    time.Time
	m        *swim.Member
	lhm      atomic.Int32    // the state machine's local health multiplier, published by flush
	late     *lateness.Meter // the host's lateness (hostTick)
	lateRead time.Duration   // when hostTick last read the runtime's histograms
	// wallNs is the wall clock in Unix nanoseconds read with the last now.
	wallNs atomic.Int64

	reqs    chan func()
	stopped chan struct{}
	leaving chan struct{}
	halt    chan struct{}   // closed by Shutdown: stop without leaving
	ctxDone <-chan struct{} // Start's context's Done: leave
	haltMu  sync.Once
	leaveMu sync.Once
	err     error

	subMu     sync.Mutex
	subs      subscriptions[swim.Event]
	msgSubs   subscriptions[swim.Message]
	subID     int
	subClosed bool // set when the agent stops; later subscriptions get a closed channel

	sent, sentBytes, recv, recvBytes                          atomic.Uint64
	authFail, decodeErr, rejected, encodeErr, sendErr, evDrop atomic.Uint64
	replayed, unknownKind, msgDrop                            atomic.Uint64
	streamsIn, streamsOut, streamDialErr, streamAuth          atomic.Uint64
	streamReplayed, streamGarbage, streamOversize             atomic.Uint64
	streamTimeouts, streamSyncs, streamFallbacks              atomic.Uint64
	streamSkipped, labelMismatch, reliableSent, reliableRecv  atomic.Uint64
	streamJoins                                               atomic.Uint64
	conflict                                                  atomic.Pointer[swim.Node] // another node claiming this member's ID

	// joinWaiters are closed, on the agent's goroutine, as soon as this
	// member knows another live member or its ID was refused (joined).
	joinWaiters map[chan struct{}]struct{}
	// joinedBy: the seed addresses this Join has sent a join datagram
	// to; the state machine's resends there go over a stream (flush).
	joinedBy map[string]bool

	// The stream path (stream.go); sl is nil when it is off.
	sl         *transport.StreamListener
	streamInCh chan streamIn
	streamRes  chan streamResult
	outSlots   chan struct{} // the protocol's dialled streams (pings, views)
	relSlots   chan struct{} // SendReliable's, apart: stuck messages must not starve the pings
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
	// mergeRefusal is the last error of Protocol.MergeFilter, for Join's
	// error (agent goroutine only).
	mergeRefusal error
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
	late, err := lateness.New(lateness.Config{})
	if err != nil {
		return nil, err
	}
	if cfg.Resolve == nil {
		cfg.Resolve = systemResolve
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	switch {
	case cfg.Plain && len(cfg.Keys) > 0:
		return nil, errors.New("agent: Config sets both Plain and Keys; choose one")
	case !cfg.Plain && len(cfg.Keys) == 0:
		return nil, errors.New("agent: Config needs Keys, or Plain: true to run unencrypted on purpose")
	}
	sec := &wire.Security{Plain: cfg.Plain, Label: cfg.Label}
	if (cfg.AcceptPlain || cfg.SendPlain) && len(cfg.Keys) == 0 {
		return nil, errors.New("agent: AcceptPlain and SendPlain are stages of turning encryption on: they need Keys")
	}
	if cfg.SendPlain && !cfg.AcceptPlain {
		return nil, fmt.Errorf("%w: Config.SendPlain needs Config.AcceptPlain", ErrPlainStage)
	}
	sec.SetAcceptPlain(cfg.AcceptPlain)
	sec.SetSendPlain(cfg.SendPlain)
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
		u, l, err := listenBoth(cmp.Or(cfg.Bind, "127.0.0.1:0"), src, codec.MaxPacketSize(), scfg, handle)
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
		scfg.Bind = cmp.Or(cfg.StreamBind, tr.LocalAddr().String())
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
	if codec.Version() < 2 && cfg.Protocol.AckPayload != nil {
		closeAll() // format 1 has no field for it: every ack would go without
		return nil, fmt.Errorf("%w: Protocol.AckPayload is set", ErrNeedsFormat2)
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
	if err := reliableDefaults(&cfg, codec, self); err != nil {
		closeAll()
		return nil, err
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	a := new(Agent)
	pc := cfg.Protocol
	if cfg.LocalState != nil {
		pc.LocalState = cfg.LocalState
	}
	pc.Self = self
	if f := pc.MergeFilter; f != nil {
		// Join reports the filter's last refusal (JoinError.MergeRefusal).
		pc.MergeFilter = func(from swim.Node, ups []swim.Update) error {
			err := f(from, ups)
			if err != nil {
				a.mergeRefusal = fmt.Errorf("view from %s at %s: %w", from.ID, from.Addr, err)
			}
			return err
		}
	}
	pc.MaxPacketSize = codec.MaxPayload()
	pc.StreamProbe = !cfg.DisableStream && !cfg.DisableStreamProbes
	*a = Agent{
		cfg: cfg, tr: tr, codec: codec, keys: sec.Keyring, sec: sec, log: cfg.Logger, self: self, src: src,
		selfAddr: netip.MustParseAddrPort(self.Addr),
		reqs:     make(chan func()),
		stopped:  make(chan struct{}),
		leaving:  make(chan struct{}),
		halt:     make(chan struct{}),
		ctxDone:  ctx.Done(),

		joinWaiters: map[chan struct{}]struct{}{},

		sl:         sl,
		streamInCh: make(chan streamIn, 64),
		streamRes:  make(chan streamResult, 64),
		outSlots:   make(chan struct{}, streamOutMax),
		relSlots:   make(chan struct{}, streamOutMax),
		quit:       make(chan struct{}),
		late:       late,
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

// Shutdown stops the agent at once without announcing a leave, as a
// crash would: the other members find it unresponsive, suspect it and
// declare it dead (memberlist's Shutdown without Leave). It returns when
// the agent has stopped; calling it after Leave or on a stopped agent
// does no harm. Use it when the member should count as failed (a node
// being taken away whose work others must take over), Leave when it
// departs in an orderly way.
func (a *Agent) Shutdown() error {
	a.haltMu.Do(func() { close(a.halt) })
	<-a.stopped
	return nil
}

// LocalHealthMultiplier returns Lifeguard's local health multiplier, LHM,
// in [0, Protocol.AwarenessMaxMultiplier−1] (memberlist's
// GetHealthScore): 0 while this member's probes get their acks and nacks
// on time, raised by each sign that this member itself is slow (missed
// nacks, refuting a suspicion of itself, a pause), lowered by each probe
// answered in time. The protocol period and probe timeouts are scaled by
// LHM+1. Always 0 in swim.ModeSWIM. It is the value as of the last packet
// or tick the agent processed (swim.Member.LocalHealthMultiplier).
func (a *Agent) LocalHealthMultiplier() int { return int(a.lhm.Load()) }

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
