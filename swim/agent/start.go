package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/lateness"
	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// Starting an agent: validate the configuration (newAgent, nothing opened
// yet), open the sockets (open), settle this member's identity, which may
// be the bound address (identify), then create the state machine
// (newMachine). One deferred cleanup in Start closes what was opened when
// a later step fails.

// Start opens the transport, creates the state machine and runs it until
// ctx is cancelled (then the member leaves gracefully, within LeaveTimeout)
// or Leave or Close is called. It checks cfg before opening anything, and
// closes what it opened, Config.Transport included, when a later step
// fails. Errors name the Config fields at fault: a Bind, StreamBind,
// Advertise or ID that cannot work, or a MaxPacketSize too small for the
// protocol, gives a *ConfigError; an identity too large for the packets,
// ErrSelfTooLarge.
func Start(ctx context.Context, cfg Config) (_ *Agent, err error) {
	a, err := newAgent(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			a.release()
		}
	}()
	// The stream listener's handler serves streams once the agent runs; a
	// stream arriving before is closed (its sender falls back).
	var ready atomic.Bool
	err = a.open(func(c *transport.Conn) {
		if ready.Load() {
			a.serveStream(c)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := a.identify(); err != nil {
		return nil, err
	}
	if err := a.newMachine(); err != nil {
		return nil, err
	}
	ready.Store(true)
	go a.run(ctx)
	return a, nil
}

// newAgent checks cfg, fills in its defaults and builds an agent that has
// opened nothing yet.
func newAgent(ctx context.Context, cfg Config) (*Agent, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	sec, err := newSecurity(cfg)
	if err != nil {
		return nil, err
	}
	codec, err := newCodec(cfg, sec, "") // again with the ID once it is settled and checked (identify)
	if err != nil {
		return nil, err
	}
	if err := checkFormat(cfg, codec); err != nil {
		return nil, err
	}
	late, err := lateness.New(lateness.Config{})
	if err != nil {
		return nil, err
	}
	a := &Agent{
		cfg: cfg, leaveTimeout: leaveTimeout(cfg), codec: codec, keys: sec.Keyring, sec: sec, log: cfg.Logger,
		clock: agentClock{late: late},
		life: lifecycle{
			reqs:    make(chan func()),
			stopped: make(chan struct{}),
			leaving: make(chan struct{}),
			halt:    make(chan struct{}),
			quit:    make(chan struct{}),
			ctxDone: ctx.Done(),
		},
		join: joinState{waiters: map[chan struct{}]struct{}{}, waiting: map[uint64][]string{}},
		stream: streamPath{
			in:        make(chan streamIn, 64),
			results:   make(chan streamResult, 64),
			joinTo:    make(map[netip.AddrPort]*joinStream),
			joinTurns: make(map[netip.AddrPort]int),
		},
	}
	a.stream.pings = newSlotPool(streamOutMax, streamOutPerAddr, &a.sctr.streamsAddrBusy)
	a.stream.views = newSlotPool(streamOutMax, streamOutPerAddr, &a.sctr.streamsAddrBusy)
	a.stream.reliable = newSlotPool(streamOutMax, streamOutPerAddr, nil)
	a.stream.ctx, a.stream.stop = context.WithCancel(context.Background())
	return a, nil
}

// leaveTimeout is cfg.LeaveTimeout resolved: DefaultLeaveTimeout when nil.
func leaveTimeout(cfg Config) time.Duration {
	return detector.OrDefault(cfg.LeaveTimeout, DefaultLeaveTimeout)
}

// withDefaults checks the settings that need nothing else and fills in
// their defaults.
func withDefaults(cfg Config) (Config, error) {
	if cfg.TickInterval == 0 {
		cfg.TickInterval = DefaultTickInterval
	}
	if cfg.TickInterval < 0 {
		return cfg, fmt.Errorf("agent: TickInterval %v is negative", cfg.TickInterval)
	}
	if leave := leaveTimeout(cfg); leave < 0 {
		return cfg, fmt.Errorf("agent: LeaveTimeout %v is negative", leave)
	}
	if cfg.Resolve == nil {
		cfg.Resolve = systemResolve
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Protocol.Versions.IsZero() {
		cfg.Protocol.Versions = wire.Versions()
	}
	if cfg.WireVersion == 1 {
		cfg.Protocol.JoinTokenless = true // format 1 has no field for a join's token
	}
	err := streamDefaults(&cfg)
	return cfg, err
}

// newSecurity checks the encryption settings (Keys, Plain and the stages
// of turning encryption on) and builds the packets' security.
func newSecurity(cfg Config) (*wire.Security, error) {
	switch {
	case cfg.Plain && len(cfg.Keys) > 0:
		return nil, errors.New("agent: Config sets both Plain and Keys; choose one")
	case !cfg.Plain && len(cfg.Keys) == 0:
		return nil, errors.New("agent: Config needs Keys, or Plain: true to run unencrypted on purpose")
	case (cfg.AcceptPlain || cfg.SendPlain) && len(cfg.Keys) == 0:
		return nil, errors.New("agent: AcceptPlain and SendPlain are stages of turning encryption on: they need Keys")
	case cfg.SendPlain && !cfg.AcceptPlain:
		return nil, fmt.Errorf("%w: Config.SendPlain needs Config.AcceptPlain", ErrPlainStage)
	case cfg.SkipInboundLabelCheck && cfg.Transport == nil:
		return nil, errors.New("agent: SkipInboundLabelCheck needs a Transport that strips the cluster label: the built-in UDP transport does not, so every labelled datagram would be dropped")
	case cfg.SkipInboundLabelCheck && !cfg.DisableStream && cfg.StreamWrap == nil:
		return nil, errors.New("agent: SkipInboundLabelCheck needs a StreamWrap that strips the cluster label from stream frames, or DisableStream: the built-in stream does not, so every labelled frame would be dropped")
	}
	sec := &wire.Security{Plain: cfg.Plain, Label: cfg.Label, SkipInboundLabelCheck: cfg.SkipInboundLabelCheck}
	sec.SetAcceptPlain(cfg.AcceptPlain)
	sec.SetSendPlain(cfg.SendPlain)
	if len(cfg.Keys) > 0 {
		kr, err := wire.NewKeyring(cfg.Keys[0], cfg.Keys[1:]...)
		if err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		sec.Keyring = kr
	}
	return sec, nil
}

// newCodec builds the packet codec for the member with ID self and checks
// that its datagrams leave the protocol room enough (minPayload).
func newCodec(cfg Config, sec *wire.Security, self swim.ID) (*wire.Codec, error) {
	if err := checkRoom(cfg, sec); err != nil {
		return nil, err
	}
	codec, err := wire.NewCodec(wire.CodecConfig{Security: sec, MaxPacketSize: cfg.MaxPacketSize,
		Version: cfg.WireVersion, ExtraTag: cfg.WireExtraTag, LocalID: self})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return codec, nil
}

// checkRoom checks that MaxPacketSize leaves the protocol its payload
// after the envelope: minPayload bytes, and more than the envelope itself
// (swim.Config.WireOverhead must be below the payload size), which binds
// with a long Label. The error names the least MaxPacketSize that works
// (usr29 F1: the message named one that the state machine then refused).
func checkRoom(cfg Config, sec *wire.Security) error {
	size := cfg.MaxPacketSize
	if size == 0 {
		size = wire.DefaultMaxPacketSize
	}
	room := wire.PayloadRoom(sec, size)
	envelope := size - room
	need := max(minPayload, envelope+1)
	if room >= need {
		return nil
	}
	why := fmt.Sprintf("the protocol needs %d bytes of payload", minPayload)
	if need > minPayload {
		why = fmt.Sprintf("the protocol needs %d bytes of payload and more than the envelope's %d", minPayload, envelope)
	}
	env := ""
	if cfg.Label != "" {
		env = fmt.Sprintf(" (%d bytes, the %d-byte Label included; or a shorter Label)", envelope, len(cfg.Label))
	}
	return &ConfigError{Field: "MaxPacketSize", Value: strconv.Itoa(size),
		Err: fmt.Errorf("too small: %s, so at least %d with this envelope%s", why, envelope+need, env)}
}

// checkFormat checks the metadata and the application state against the
// wire format written.
func checkFormat(cfg Config, codec *wire.Codec) error {
	if len(cfg.Protocol.Meta) > swim.MaxMetaLen {
		return fmt.Errorf("agent: Protocol.Meta: %w: %d bytes", swim.ErrMetaTooLarge, len(cfg.Protocol.Meta))
	}
	if codec.Version() < 2 && (len(cfg.Protocol.Meta) > 0 || cfg.LocalState != nil) {
		// Format 1 would drop them from every packet: only this member
		// would ever see its metadata, and no state would be sent.
		return fmt.Errorf("%w: Protocol.Meta or LocalState is set", ErrNeedsFormat2)
	}
	if codec.Version() < 2 && cfg.Protocol.AckPayload != nil {
		// Format 1 has no field for it: every ack would go without.
		return fmt.Errorf("%w: Protocol.AckPayload is set", ErrNeedsFormat2)
	}
	return nil
}

// open opens the UDP socket, unless Config.Transport replaces it, and the
// stream listener, unless DisableStream: on one port number when neither
// Bind nor StreamBind fixes it (listenBoth). What it opened is in a.tr and
// a.stream.listener when it fails.
func (a *Agent) open(handle func(*transport.Conn)) error {
	a.tr = a.cfg.Transport
	if a.tr == nil {
		a.src = sendSource(a.cfg.Bind, a.cfg.Advertise)
		a.streamSrc = streamSource(cmp.Or(a.cfg.Bind, "127.0.0.1:0"), a.src)
	}
	scfg := a.streamConfig()
	switch {
	case a.tr == nil && !a.cfg.DisableStream && a.cfg.StreamBind == "":
		u, l, err := listenBoth(cmp.Or(a.cfg.Bind, "127.0.0.1:0"), a.src, a.codec.MaxPacketSize(), scfg, handle)
		if err != nil {
			return err
		}
		a.tr, a.stream.listener = u, l
		return nil
	case a.tr == nil:
		u, err := transport.Listen(transport.Config{Bind: a.cfg.Bind, MaxPacketSize: a.codec.MaxPacketSize(), Source: a.src})
		if err != nil {
			return &ConfigError{Field: "Bind", Value: cmp.Or(a.cfg.Bind, "127.0.0.1:0"), Err: err}
		}
		a.tr = u
	}
	if a.cfg.DisableStream {
		return nil
	}
	scfg.Bind = cmp.Or(a.cfg.StreamBind, a.tr.LocalAddr().String())
	l, err := transport.ListenStream(scfg, handle)
	if err != nil {
		ce := &ConfigError{Field: "StreamBind", Value: scfg.Bind, Err: fmt.Errorf("stream listener: %w", err), Or: []string{"DisableStream"}}
		if a.cfg.StreamBind == "" {
			ce.From = "Transport" // listenBoth's otherwise
		}
		return ce
	}
	a.stream.listener = l
	return nil
}

// release closes what the agent opened: the dialled streams, once the
// goroutines dialling them have ended, the stream listener and the
// transport.
func (a *Agent) release() {
	a.stream.stop()
	if a.stream.listener != nil {
		_ = a.stream.listener.Close()
	}
	a.stream.wg.Wait()
	if a.tr != nil {
		_ = a.tr.Close()
	}
}

// identify settles this member's identity, ID and advertised address
// (defaults: the bound address), checks it as the other members will use
// it, and checks that its join and reliable messages fit the packets.
func (a *Agent) identify() error {
	self := swim.Node{ID: a.cfg.ID, Addr: a.cfg.Advertise}
	if self.Addr == "" {
		self.Addr = a.tr.LocalAddr().String()
	}
	if self.ID == "" {
		self.ID = swim.ID(self.Addr)
	}
	if ce := checkSelf(self); ce != nil {
		a.selfDefault(ce)
		return ce
	}
	// The codec reads packets bound to this member's ID
	// (wire.CodecConfig.LocalID), which may be the bound address.
	codec, err := newCodec(a.cfg, a.sec, self.ID)
	if err != nil {
		return err
	}
	a.codec = codec
	join := swim.Packet{Kind: swim.MsgJoin, From: self, To: swim.Node{Addr: self.Addr},
		Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: self, From: self.ID,
			Meta: string(a.cfg.Protocol.Meta), Versions: a.cfg.Protocol.Versions}}}
	if a.cfg.Protocol.SigningKey != nil {
		join.Updates[0].Proof = swim.Proof(make([]byte, swim.ProofSize)) // its size: a join carries the signed Alive
	}
	if n := join.Size(); n > a.codec.MaxPayload() {
		return fmt.Errorf("%w: ID of %d bytes, address %q, Meta of %d bytes: a join carries ID and address three times each and needs up to %d bytes plus %d of envelope, over MaxPacketSize %d: "+
			"shorten the ID or Meta, or set MaxPacketSize %d or more",
			ErrSelfTooLarge, len(self.ID), self.Addr, len(a.cfg.Protocol.Meta), n, a.codec.MaxPacketSize()-a.codec.MaxPayload(), a.codec.MaxPacketSize(),
			a.leastPacketSize(join))
	}
	if err := a.checkPeerPackets(join); err != nil {
		return err
	}
	if err := a.checkStateSize(join); err != nil {
		return err
	}
	if err := reliableDefaults(&a.cfg, a.codec, self); err != nil {
		return err
	}
	a.self, a.selfAddr = self, netip.MustParseAddrPort(self.Addr)
	return nil
}

// selfDefault names in ce where the value at fault came from when its
// field was left empty: the advertised address is Bind's (as given, not
// as the socket reports it) or Config.Transport's, the ID the advertised
// address.
func (a *Agent) selfDefault(ce *ConfigError) {
	switch {
	case ce.Field == "Advertise" && a.cfg.Advertise == "" && a.cfg.Transport != nil:
		ce.From = "Transport"
	case ce.Field == "Advertise" && a.cfg.Advertise == "":
		ce.From, ce.Value = "Bind", cmp.Or(a.cfg.Bind, "127.0.0.1:0")
	case ce.Field == "ID" && a.cfg.ID == "":
		ce.From = "Advertise"
	}
}

// newMachine starts the clock and creates the state machine from
// Config.Protocol, with what the agent fills in: this member, the check of
// member addresses (memberAddr, before the application's ValidAddr), the
// payload room, the stream probe switch, the application state, and the
// broadcast numbering from the wall clock.
func (a *Agent) newMachine() error {
	pc := a.cfg.Protocol
	if a.cfg.LocalState != nil {
		pc.LocalState = a.cfg.LocalState
	}
	a.wrapCallbacks(&pc)
	pc.Self = a.self
	if f := pc.ValidAddr; f != nil {
		pc.ValidAddr = func(addr string) error {
			if err := memberAddr(addr); err != nil {
				return err
			}
			return f(addr)
		}
	} else {
		pc.ValidAddr = memberAddr
	}
	if f := pc.MergeFilter; f != nil {
		// Join reports the filter's last refusal (JoinError.MergeRefusal).
		pc.MergeFilter = func(from swim.Node, ups []swim.Update) error {
			err := f(from, ups)
			if err != nil {
				a.join.mergeRefusal = fmt.Errorf("view from %s at %s: %w", from.ID, from.Addr, err)
			}
			return err
		}
	}
	pc.MaxPacketSize = a.codec.MaxPayload()
	pc.WireOverhead = a.codec.MaxPacketSize() - a.codec.MaxPayload() // envelope, seal, timestamp
	pc.StreamProbe = !a.cfg.DisableStream && !a.cfg.DisableStreamProbes
	a.clock.start = time.Now()
	a.clock.wallNs.Store(a.wallAt(a.clock.start))
	if pc.FirstBroadcastSeq == 0 {
		// Above every number of a previous life of this member: receivers
		// drop broadcasts numbered at or below what they delivered.
		pc.FirstBroadcastSeq = uint64(max(a.clock.wallNs.Load(), 0))
	}
	if pc.BroadcastSeqCeiling == nil {
		a.clock.clockSeq = true
		// Every member numbers from its clock, so a number above this
		// member's clock by more than the skew allowed is forged. The
		// clock is the wall clock read with the Step's now (a.now), not
		// the start time plus the monotonic time since: a clock that NTP
		// corrects after the start is followed, and a member started
		// behind does not refuse honest numbers until it restarts.
		pc.BroadcastSeqCeiling = func(time.Duration) uint64 {
			return uint64(max(a.clock.wallNs.Load(), 0)) + uint64(MaxBroadcastLead)
		}
	}
	if pc.JoinTokens == nil {
		// Unpredictable whatever Config.Seed (swim.Config.JoinTokens).
		pc.JoinTokens = cryptoRand().Uint64
	}
	m, err := swim.New(pc, stateRand(a.cfg.Seed, pc.Self.ID))
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	a.m = m
	a.stream.answerIdle = answerIdle(m.Config().ProbeInterval)
	a.stream.answerWhole = answerWhole(a.stream.answerIdle)
	a.stream.joinStall = joinStall(m.Config().ProbeInterval)
	if a.cfg.MaxStreamMembers == 0 {
		a.cfg.MaxStreamMembers = m.Config().MaxMembers + 1 // a whole view and the Alive of a join
	}
	return nil
}

// checkPeerPackets refuses an identity whose packets to a member like
// itself (an ID and address as long as its own) cannot carry what they
// must: its own Alive in a part of a view transfer, which a seed sends a
// joiner, echoing the joiner's token (swim.Packet.JoinToken) (else the joiner's Join completes on a view without the seed,
// whose entry is left out, Stats.Protocol.ViewEntriesSkipped). The join
// packet (ErrSelfTooLarge) names no receiver, so it fits where these may
// not. join is this member's join. An ack is smaller than that view part
// (it carries no Alive); a Protocol.AckPayload that would make one too
// large is left out of that ack when it is sent, and counted
// (Stats.Protocol.AckPayloadsTooLarge): its size is only known then, and
// a setup whose payloads fit (memberlist's ping delegates send a few
// bytes of coordinates) must not be refused for a size it never uses.
func (a *Agent) checkPeerPackets(join swim.Packet) error {
	self := join.From
	view := viewOf(join)
	if n := view.Size(); n > a.codec.MaxPayload() {
		return fmt.Errorf("%w: ID of %d bytes, address %q, Meta of %d bytes: this member's Alive in a view transfer to a member "+
			"with an ID as long needs %d bytes of payload, and MaxPacketSize %d leaves %d: shorten the ID or Meta, or set MaxPacketSize %d or more",
			ErrSelfTooLarge, len(self.ID), self.Addr, len(a.cfg.Protocol.Meta), n, a.codec.MaxPacketSize(), a.codec.MaxPayload(), a.leastPacketSize(join))
	}
	return nil
}

// viewOf returns a view transfer carrying join's Alive to a member whose
// ID and address are as long as the joiner's, with a part and a token:
// the largest packet a member must send with its own node in it.
func viewOf(join swim.Packet) swim.Packet {
	return swim.Packet{Kind: swim.MsgSync, From: join.From, To: join.From, Part: swim.Part{Offset: math.MaxUint32, Total: math.MaxUint32},
		Updates: join.Updates, JoinToken: math.MaxUint64} // echoing the joiner's token
}

// leastPacketSize returns the least MaxPacketSize that carries both join
// and this member's Alive in a view transfer (viewOf) with this codec's
// envelope, so that an error names it at once, not one limit at a time
// (usr30: 589, then 1142, then more, for a 255-byte ID and label).
func (a *Agent) leastPacketSize(join swim.Packet) int {
	view := viewOf(join)
	return max(join.Size(), view.Size()) + a.codec.MaxPacketSize() - a.codec.MaxPayload()
}

// checkStateSize refuses a Protocol.MaxStateSize set larger than the state
// a packet can carry: a state travels in one datagram with this member's
// Alive and its view's digest (swim's sendState), so a larger one is never
// sent, only counted (Stats.Protocol.StatesTooLarge), and a service that
// raised the bound would lose its state exchange without an error. join is
// this member's join, whose Alive the state packet carries too; the room
// is reckoned for a receiver whose ID and address are as long as this
// member's.
func (a *Agent) checkStateSize(join swim.Packet) error {
	if a.cfg.LocalState == nil || a.cfg.Protocol.MaxStateSize == 0 {
		return nil
	}
	pk := swim.Packet{Kind: swim.MsgSync, From: join.From, To: join.From, Updates: join.Updates,
		Digest: swim.ViewDigest{Members: math.MaxUint32, Hash: math.MaxUint64}, JoinToken: math.MaxUint64}
	if fit := a.codec.MaxPayload() - pk.Size() - 4; a.cfg.Protocol.MaxStateSize > fit {
		return fmt.Errorf("agent: Protocol.MaxStateSize %d: a state goes in one datagram with this member's Alive, "+
			"and at most %d bytes fit MaxPacketSize %d: send a larger state with SendReliable (on a join event)",
			a.cfg.Protocol.MaxStateSize, max(fit, 0), a.codec.MaxPacketSize())
	}
	return nil
}
