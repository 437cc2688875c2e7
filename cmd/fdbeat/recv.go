package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/spec"
	"github.com/fdkit/fdkit/swim/wire"
	"github.com/fdkit/fdkit/trace"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// recvConfig configures "fdbeat recv".
type recvConfig struct {
	Listen string // UDP address to listen on
	Out    string // trace file ("" = do not record); .gz gzip, .xz xz
	// Force lets Out replace an existing non-empty regular file (an
	// earlier recording, which nothing could bring back).
	Force     bool
	Interval  time.Duration // nominal heartbeat interval Δ (trace header, φ bootstrap)
	Timeouts  []time.Duration
	Phis      []float64
	PhiWindow int
	PhiMinStd time.Duration // φ's σ_min; 0 = the phi package default (μ/100)
	// Detectors are further detectors given in the textual form of package
	// spec (phi-akka(threshold=10, pause=3s), cassandra, ...) and checked by
	// specDetector, each run side by side with the others under its own
	// text.
	Detectors  []detSpec
	MaxSenders int // bound on senders tracked (forged names cannot grow memory), 1 to maxSenders; 0 means defaultMaxSenders
	// Keys authenticates heartbeats: with a keyring, only version-2
	// packets whose HMAC-SHA256 verifies under one of its keys are
	// accepted (as the SWIM agent opens packets with its keyring); nil
	// accepts plain packets too, unchecked.
	Keys *wire.Keyring
	// MaxSeqJump and MaxIncarnationJump bound how far one heartbeat may
	// move a known sender's sequence number (same incarnation) or
	// incarnation forward. A heartbeat beyond the bound is rejected and
	// counted unless a second heartbeat confirms it: same incarnation, a
	// larger sequence number at most MaxSeqJump above it. So one forged
	// datagram cannot make every later genuine heartbeat stale.
	MaxSeqJump         uint64
	MaxIncarnationJump uint64
	// EvictAfter forgets a sender silent for longer (its rows, its
	// monitors' state); 0 = never.
	EvictAfter time.Duration
	// TableSenders bounds the senders the table shows: those with the
	// most heartbeats; one line counts the rest.
	TableSenders int
	Sweep        time.Duration // how often the monitors look for suspicions
	Refresh      time.Duration // table refresh period; 0 = no table
	Table        io.Writer     // where the table goes
	Terminal     bool          // redraw the table in place (ANSI) instead of printing lines
	Meta         map[string]string

	// Test hooks.
	ready        func(addr net.Addr, origin time.Duration) // origin: Unix ns of monitor clock 0
	onTransition func(det string, t monitor.Transition)
}

// Defaults of recv's flags (and of the recvConfigs tests build).
const (
	defaultMaxSeqJump         = 100                    // 10 s of losses at 100 ms; see docs/live.md for the trade-off
	defaultMaxIncarnationJump = uint64(24 * time.Hour) // fdbeat send's incarnation: start time in Unix ns
	defaultEvictAfter         = 10 * time.Minute
	defaultTableSenders       = 20
	maxTableSenders           = 100000
	// maxSenders bounds --max-senders: each sender keeps one detector
	// state per detector, so the table's memory is bounded by it.
	maxSenders        = 1_000_000
	defaultMaxSenders = 10_000
)

// detSpec is one of the detectors recv runs side by side.
type detSpec struct {
	Name    string
	Factory monitor.Factory
}

// fieldDetectors returns the [Field-vi] detectors (docs/algorithms.md,
// “Published field measurements”): fixed timeouts and normal-model φ with the
// given thresholds and window.
func fieldDetectors(timeouts []time.Duration, phis []float64, window int, minStd, interval time.Duration) ([]detSpec, error) {
	var ds []detSpec
	for _, t := range timeouts {
		if t <= 0 {
			return nil, fmt.Errorf("timeout %v must be positive", t)
		}
		ds = append(ds, detSpec{"timeout-" + t.String(), func() (detector.Detector, error) {
			return detector.NewFixed(detector.FixedConfig{Timeout: &t})
		}})
	}
	for _, th := range phis {
		// phi.NormalConfig takes 0 as "the default threshold (8)", which
		// would run φ 8 under the name phi-0.
		if !(th > 0) || math.IsInf(th, 1) {
			return nil, fmt.Errorf("φ threshold %v must be finite and positive", th)
		}
		cfg := phi.NormalConfig{WindowSize: window, Threshold: th, BootstrapInterval: interval}
		if minStd != 0 { // 0: the default floor μ/100
			cfg.MinStdDev = &minStd
		}
		if _, err := phi.NewNormal(cfg); err != nil {
			return nil, err
		}
		ds = append(ds, detSpec{"phi-" + strconv.FormatFloat(th, 'g', -1, 64), func() (detector.Detector, error) {
			return phi.NewNormal(cfg)
		}})
	}
	if len(ds) == 0 {
		return nil, errors.New("no detector: give --timeouts or --phi")
	}
	return ds, nil
}

// specDetector checks one detector given in the textual form of package
// spec and returns it. A window larger than maxPhiWindow is refused: every
// sender keeps one per detector.
func specDetector(text string) (detSpec, error) {
	s, err := spec.Parse(text)
	if err != nil {
		return detSpec{}, fmt.Errorf("--detector: %w", err)
	}
	for _, w := range []string{"window", "short-window"} {
		if v, ok := s.Value(w); ok {
			if n, _ := strconv.Atoi(v); n > maxPhiWindow {
				return detSpec{}, fmt.Errorf("--detector %q: %s %d is above %d (each sender keeps that many samples per detector)", text, w, n, maxPhiWindow)
			}
		}
	}
	if _, err := s.New(); err != nil {
		return detSpec{}, fmt.Errorf("--detector: %w", err)
	}
	return detSpec{strings.TrimSpace(text), func() (detector.Detector, error) { return s.New() }}, nil
}

// recvStats counts what the receiver saw.
type recvStats struct {
	Packets         uint64
	Bad             uint64 // undecodable datagrams
	Stale           uint64 // heartbeats of an older incarnation
	Duplicates      uint64 // copies of a heartbeat already recorded, or older than recordWindow (not recorded)
	Unauthenticated uint64 // plain packets refused because keys are set
	AuthFailed      uint64 // authenticated packets whose MAC verified under no key
	Implausible     uint64 // heartbeats rejected for an unconfirmed jump (MaxSeqJump, MaxIncarnationJump)
	Confirmed       uint64 // jumps confirmed by a second heartbeat
	Refused         uint64 // heartbeats of new senders refused at MaxSenders
	Evicted         uint64 // senders forgotten after EvictAfter of silence
	KernelDrops     uint64 // datagrams the kernel dropped (receive buffer full); see DropsCounted
	DropsCounted    bool   // the platform reports KernelDrops (Linux: SO_RXQ_OVFL)
	Recorded        uint64
	NoTraceID       uint64         // heartbeats not recorded because their sender used up its maxPeerIDs trace ids
	Transitions     map[string]int // per detector
	Started         bool           // the receiver was listening (false after a setup error)
}

type namedMon struct {
	name string
	m    *monitor.Monitor
}

// streamID names a peer's current incarnation in the trace: the peer for its
// first incarnation seen, "peer#2", "peer#3", ... after restarts, so that
// replay treats each incarnation as its own stream.
type streamID struct {
	inc uint64
	n   int
	id  string
	ids []string // every trace id this peer was given (at most maxPeerIDs), freed when it is evicted
	seq uint64   // largest sequence number accepted in inc
	// recorded: bit i set = sequence number seq−i of inc was recorded
	// (i < recordWindow); see firstCopy.
	recorded uint64
	last     time.Duration // monitor clock of the last accepted heartbeat
	pending  *jump         // an unconfirmed jump, see plausible
	// staleWarned: 1 + the stale incarnation last warned about; 0: none.
	staleWarned uint64
}

// recordWindow is how many sequence numbers below the largest one recv
// remembers having recorded: a heartbeat arriving later than 64 newer ones
// (6.4 s at 100 ms) is not recorded. The window is the anti-replay window of
// IPsec (RFC 4303, section 3.4.3).
const recordWindow = 64

// firstCopy reports whether sequence number seq of the stream's incarnation
// is recorded for the first time, and marks it recorded: a heartbeat
// replayed by someone who captured it (its MAC verifies) or duplicated by
// the network is recorded once, whatever the number of copies.
func (s *streamID) firstCopy(seq uint64) bool {
	switch {
	case s.recorded == 0: // the incarnation's first heartbeat
		s.seq, s.recorded = seq, 1
		return true
	case seq > s.seq:
		if d := seq - s.seq; d < recordWindow {
			s.recorded = s.recorded<<d | 1
		} else {
			s.recorded = 1
		}
		s.seq = seq
		return true
	}
	d := s.seq - seq
	if d >= recordWindow || s.recorded&(1<<d) != 0 {
		return false
	}
	s.recorded |= 1 << d
	return true
}

// jump is a heartbeat rejected for jumping too far, kept until a second
// heartbeat confirms it.
type jump struct{ inc, seq uint64 }

type receiver struct {
	cfg     recvConfig
	log     *slog.Logger
	clock   monitor.Clock // *monitor.Monotonic (tests: a manual clock)
	wall    time.Duration // wall clock of the clock's origin, Unix ns
	mons    []namedMon
	streams map[string]*streamID
	used    map[string]bool // trace sender ids given out
	tw      *trace.Writer
	file    *os.File
	warn    *warnLimiter
	// transLog limits the transition log lines (the table and the
	// counts keep every transition).
	transLog *warnLimiter

	mu     sync.Mutex // guards stats and recent
	stats  recvStats
	recent []string // the last recentMax transitions, for the terminal table
	// eval serialises the monitors' evaluations (heartbeats, sweeps,
	// snapshots) with the clock reading of each arrival, so that no sweep
	// evaluates a peer at an instant later than an arrival not yet fed to
	// the monitors (see monitor.Monitor.HeartbeatAt).
	eval sync.Mutex
	// pauses is the number of local pauses already logged (sweep goroutine).
	pauses uint64
	// recErr is the first error writing the trace (guarded by eval).
	recErr error
}

// runRecv listens and monitors until ctx is done, then flushes the trace.
func runRecv(ctx context.Context, cfg recvConfig, log *slog.Logger) (recvStats, error) {
	if cfg.Interval <= 0 {
		return recvStats{}, fmt.Errorf("recv: interval %v must be positive", cfg.Interval)
	}
	if cfg.MaxSenders == 0 {
		cfg.MaxSenders = defaultMaxSenders
	}
	if cfg.MaxSenders < 1 || cfg.MaxSenders > maxSenders {
		return recvStats{}, fmt.Errorf("recv: --max-senders %d must be from 1 to %d", cfg.MaxSenders, maxSenders)
	}
	if cfg.Sweep <= 0 || cfg.Sweep >= monitor.DefaultPauseLimit {
		// Sweeps PauseLimit apart would each look like a local pause of
		// the receiver, and nobody would ever be convicted.
		return recvStats{}, fmt.Errorf("recv: --sweep %v must be positive and shorter than the local-pause limit %v", cfg.Sweep, monitor.DefaultPauseLimit)
	}
	var specs []detSpec
	if len(cfg.Timeouts)+len(cfg.Phis) > 0 || len(cfg.Detectors) == 0 {
		var err error
		if specs, err = fieldDetectors(cfg.Timeouts, cfg.Phis, cfg.PhiWindow, cfg.PhiMinStd, cfg.Interval); err != nil {
			return recvStats{}, fmt.Errorf("recv: %w", err)
		}
	}
	specs = append(specs, cfg.Detectors...)
	if cfg.TableSenders < 0 {
		return recvStats{}, fmt.Errorf("recv: --table-senders %d must not be negative", cfg.TableSenders)
	}
	if cfg.EvictAfter < 0 {
		return recvStats{}, fmt.Errorf("recv: --evict-after %v must be 0 (never) or positive", cfg.EvictAfter)
	}
	r := &receiver{cfg: cfg, log: log, clock: monitor.NewMonotonic(), streams: map[string]*streamID{}, warn: newWarnLimiter(log)}
	r.transLimiter()
	r.wall = time.Duration(r.clock.(*monitor.Monotonic).Start().UnixNano())
	r.stats.Transitions = map[string]int{}
	for _, s := range specs {
		name := s.Name
		m, err := monitor.New(monitor.Config{Factory: s.Factory, Clock: r.clock, MaxPeers: cfg.MaxSenders,
			OnTransition: func(t monitor.Transition) { r.transition(name, t) }})
		if err != nil {
			return recvStats{}, fmt.Errorf("recv: detector %s: %w", name, err)
		}
		r.mons = append(r.mons, namedMon{name, m})
	}
	conn, err := net.ListenPacket("udp", cfg.Listen)
	if err != nil {
		return recvStats{}, fmt.Errorf("recv: listen: %w", err)
	}
	if err := r.openTrace(specs); err != nil {
		conn.Close()
		return recvStats{}, err
	}
	r.stats.Started = true
	log.Info("receiving heartbeats", "listen", conn.LocalAddr().String(), "detectors", len(specs), "trace", cfg.Out)
	if cfg.ready != nil {
		cfg.ready(conn.LocalAddr(), r.wall)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		<-ctx.Done()
		conn.Close()
	})
	wg.Go(func() {
		every(ctx, cfg.Sweep, func() {
			r.eval.Lock()
			for _, nm := range r.mons {
				nm.m.Sweep()
			}
			r.eval.Unlock()
			r.notePauses()
		})
	})
	wg.Go(func() {
		every(ctx, time.Second, func() {
			r.evict()
			r.warn.Flush(r.clock.Now())
			r.transLimiter().Flush(r.clock.Now())
		})
	})
	if cfg.Refresh > 0 && cfg.Table != nil {
		wg.Go(func() { every(ctx, cfg.Refresh, r.printTable) })
	}
	if r.tw != nil {
		wg.Go(func() { every(ctx, flushPeriod, r.flushTrace) })
	}
	readErr := r.readLoop(ctx, conn)
	cancel()
	wg.Wait()
	for _, nm := range r.mons {
		nm.m.Sweep()
	}
	if cfg.Table != nil {
		r.printTable()
	}
	closeErr := r.closeTrace()
	r.warn.Flush(r.clock.Now() + warnWindow)
	r.transLimiter().Flush(r.clock.Now() + warnWindow)
	r.mu.Lock()
	st := r.stats
	st.Transitions = maps.Clone(r.stats.Transitions)
	r.mu.Unlock()
	log.Info("receiver stopped", "packets", st.Packets, "bad", st.Bad, "recorded", st.Recorded,
		"unauthenticated", st.Unauthenticated, "auth_failed", st.AuthFailed, "implausible", st.Implausible,
		"refused", st.Refused, "evicted", st.Evicted, "kernel_drops", dropsString(st))
	if readErr != nil && closeErr != nil {
		// Closing repeats the write error; one line says it.
		log.Debug("closing the trace after a failure", "err", closeErr)
		closeErr = nil
	}
	return st, errors.Join(readErr, closeErr)
}

// every calls f every d until ctx is done.
func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// notePauses logs the local pauses the monitors' guard found since the last
// call (the receiver itself was stopped: SIGSTOP, a stall of the host), during
// whose grace period nobody is convicted.
func (r *receiver) notePauses() {
	n := r.mons[0].m.LocalPauses()
	if n <= r.pauses {
		return
	}
	r.pauses = n
	r.log.Warn("the receiver itself was paused; convicting nobody during the grace period",
		"local_pauses", n, "limit", monitor.DefaultPauseLimit, "grace", monitor.DefaultPauseGrace)
}

func (r *receiver) readLoop(ctx context.Context, conn net.PacketConn) error {
	buf := make([]byte, 2048)
	uc, _ := conn.(*net.UDPConn)
	var oob []byte
	if uc != nil && enableDropCount(uc) {
		oob = make([]byte, 64)
		r.mu.Lock()
		r.stats.DropsCounted = true
		r.mu.Unlock()
	}
	for {
		var n int
		var from net.Addr
		var err error
		if oob != nil {
			var oobn int
			var ua *net.UDPAddr
			n, oobn, _, ua, err = uc.ReadMsgUDP(buf, oob)
			from = ua
			if err == nil {
				if d, ok := dropCount(oob[:oobn]); ok {
					r.mu.Lock()
					r.stats.KernelDrops = uint64(d) // the socket's running total
					r.mu.Unlock()
				}
			}
		} else {
			n, from, err = conn.ReadFrom(buf)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("recv: read: %w", err)
		}
		r.eval.Lock()
		r.handle(buf[:n], from, r.clock.Now())
		failed := r.recErr
		r.eval.Unlock()
		if failed != nil {
			return fmt.Errorf("recv: recording to %s: %w", r.cfg.Out, failed)
		}
	}
}

// dropsString says the kernel drop count, or that the platform has none.
func dropsString(st recvStats) string {
	if !st.DropsCounted {
		return "not reported on this platform"
	}
	return strconv.FormatUint(st.KernelDrops, 10)
}

// handle processes one datagram that arrived at now (monitor clock). Called
// with r.eval held, so arrivals reach the monitors in clock order: the
// monotonic clock is read under the lock, and no arrival is earlier than the
// one before (no backward sample can come from this path).
func (r *receiver) handle(b []byte, from net.Addr, now time.Duration) {
	r.mu.Lock()
	r.stats.Packets++
	r.mu.Unlock()
	p, err := decodePacket(b)
	if err != nil {
		r.count(&r.stats.Bad)
		r.log.Debug("bad packet", "from", from.String(), "err", err)
		return
	}
	if kr := r.cfg.Keys; kr != nil {
		if !p.Signed {
			r.count(&r.stats.Unauthenticated)
			r.warner().Warn(now, "plain heartbeat refused: keys are set, heartbeats must be authenticated", "from", from.String(), "name", p.Name)
			return
		}
		if !verifyPacket(b, kr.Keys()) {
			r.count(&r.stats.AuthFailed)
			r.warner().Warn(now, "heartbeat failed authentication with every key", "from", from.String(), "name", p.Name)
			return
		}
	}
	peer := p.Name
	if peer == "" {
		peer = from.String()
	}
	if s := r.streams[peer]; s != nil && !r.plausible(s, p, peer, now) {
		return
	}
	beat := monitor.Beat{Incarnation: p.Incarnation, Seq: p.Seq, HasSeq: true, Sent: p.Sent, HasSent: true}
	stale := false
	for _, nm := range r.mons {
		if err := nm.m.HeartbeatAt(peer, beat, now); err != nil {
			if errors.Is(err, monitor.ErrStaleIncarnation) {
				stale = true
				continue
			}
			if errors.Is(err, monitor.ErrTooManyPeers) {
				r.count(&r.stats.Refused)
				r.warner().Warn(now, "heartbeat from a new sender ignored: --max-senders reached", "peer", peer, "max_senders", r.cfg.MaxSenders)
				return
			}
			r.log.Error("monitor refused a heartbeat", "detector", nm.name, "peer", peer, "err", err)
		}
	}
	if stale {
		r.count(&r.stats.Stale)
		// A sender restarted with a smaller --incarnation (or a wall
		// clock stepped back) is otherwise ignored for good with no word.
		if s := r.streams[peer]; s != nil && s.staleWarned != p.Incarnation+1 {
			s.staleWarned = p.Incarnation + 1
			r.warner().Warn(now, "heartbeats from an older incarnation ignored (restart the sender with a larger --incarnation)",
				"peer", peer, "incarnation", p.Incarnation, "current", s.inc)
		}
		return
	}
	id := r.stream(peer, p.Incarnation)
	s := r.streams[peer]
	if !s.firstCopy(p.Seq) {
		// A replayed capture (it verifies under the key) or a copy made
		// by the network: the monitors ignored it, the trace must not
		// grow with it, and it must not keep a silent sender from
		// eviction.
		r.count(&r.stats.Duplicates)
		r.warner().Warn(now, "heartbeat not recorded: a copy of a heartbeat already recorded (replayed or duplicated) or older than the last 64",
			"peer", peer, "incarnation", p.Incarnation, "seq", p.Seq, "current_seq", s.seq)
		return
	}
	s.last = now
	if id == "" {
		// The sender used up its trace ids (maxPeerIDs): the monitors have the
		// heartbeat, the trace cannot name its stream without merging two
		// incarnations, so it is counted and left out, not mixed in.
		r.count(&r.stats.NoTraceID)
		r.warner().Warn(now, "heartbeat not recorded: the sender restarted more than 16 times while tracked (trace sender ids used up)",
			"peer", peer, "incarnation", p.Incarnation, "ids", len(r.used))
		return
	}
	rec := trace.Record{Sender: id, Seq: p.Seq, HasSeq: true, Sent: p.Sent, HasSent: true,
		Arrival: r.wall + now, HasArrival: true}
	if err := r.record(rec); err != nil {
		// A recorder that cannot record stops (the read loop returns it)
		// rather than go on losing heartbeats with a log line each.
		r.recErr = err
	}
}

// count adds one to a counter of r.stats.
func (r *receiver) count(c *uint64) {
	r.mu.Lock()
	*c++
	r.mu.Unlock()
}

// plausible reports whether heartbeat p of the known sender s may reach the
// monitors. A heartbeat that moves the incarnation forward by more than
// MaxIncarnationJump, or the sequence number of the current incarnation by
// more than MaxSeqJump, is rejected and remembered; a later heartbeat of the
// same incarnation whose sequence number lies above the remembered one by at
// most MaxSeqJump confirms the jump and is accepted. A genuine restart or
// a long loss costs one heartbeat; one forged datagram (incarnation 2^64−1,
// or sequence number 10^12) costs nothing, since the monitors would
// otherwise treat every later genuine heartbeat as stale. A plausible
// heartbeat clears the remembered jump (see docs/algorithms.md, “fdbeat:
// authenticated heartbeats and plausibility bounds”). Called with r.eval
// held.
func (r *receiver) plausible(s *streamID, p packet, peer string, now time.Duration) bool {
	var far bool
	switch {
	case p.Incarnation > s.inc:
		far = p.Incarnation-s.inc > r.cfg.MaxIncarnationJump
	case p.Incarnation == s.inc && p.Seq > s.seq:
		far = p.Seq-s.seq > r.cfg.MaxSeqJump
	}
	if !far {
		s.pending = nil
		return true
	}
	if j := s.pending; j != nil && j.inc == p.Incarnation && p.Seq > j.seq && p.Seq-j.seq <= r.cfg.MaxSeqJump {
		s.pending = nil
		r.count(&r.stats.Confirmed)
		r.log.Info("jump confirmed by a second heartbeat", "peer", peer, "incarnation", p.Incarnation, "seq", p.Seq,
			"was_incarnation", s.inc, "was_seq", s.seq)
		return true
	}
	s.pending = &jump{p.Incarnation, p.Seq}
	r.count(&r.stats.Implausible)
	r.warner().Warn(now, "heartbeat rejected: incarnation or sequence number jumps beyond the limit; a second heartbeat must confirm it",
		"peer", peer, "incarnation", p.Incarnation, "seq", p.Seq, "current_incarnation", s.inc, "current_seq", s.seq,
		"max_seq_jump", r.cfg.MaxSeqJump, "max_incarnation_jump", r.cfg.MaxIncarnationJump)
	return false
}

// warner returns the receiver's warning limiter (made on first use for the
// receivers tests build by hand; runRecv makes it before any goroutine).
func (r *receiver) warner() *warnLimiter {
	if r.warn == nil {
		r.warn = newWarnLimiter(r.log)
	}
	return r.warn
}

// transLimiter returns the limiter of transition log lines (made on first
// use, as warner).
func (r *receiver) transLimiter() *warnLimiter {
	if r.transLog == nil {
		r.transLog = &warnLimiter{log: r.log, window: warnWindow, burst: transitionBurst, kinds: map[string]*warnState{}}
	}
	return r.transLog
}

// stream returns the trace sender id of peer's incarnation inc, a new one
// for a new peer or a larger incarnation.
func (r *receiver) stream(peer string, inc uint64) string {
	s := r.streams[peer]
	switch {
	case s == nil:
		s = &streamID{inc: inc, n: 1, id: r.freeID(peer)}
		s.ids = []string{s.id}
		r.streams[peer] = s
	case inc > s.inc:
		s.inc, s.n, s.seq, s.recorded = inc, s.n+1, 0, 0
		s.id = ""
		if len(s.ids) < maxPeerIDs {
			s.id = r.freeID(peer + "#" + strconv.Itoa(s.n))
			s.ids = append(s.ids, s.id)
		}
		r.log.Info("sender restarted", "peer", peer, "incarnation", inc, "trace_sender", s.id)
	}
	return s.id
}

// maxPeerIDs bounds the trace sender ids one tracked sender is given, one
// per incarnation: a sender that restarts more often while tracked is
// still monitored, but its further incarnations are counted and not
// recorded. An id is not reused while its sender is tracked (a reused id
// would merge two incarnations' records in the trace), and all of a
// sender's ids are freed when it is evicted, so at most maxPeerIDs ×
// --max-senders ids are held, and a forger stepping one name through
// incarnations blinds the trace to that name only.
const maxPeerIDs = 16

// evict forgets the senders silent for longer than EvictAfter: their
// monitors' state and stream; a later heartbeat starts them afresh. Their
// trace ids are freed too (so that forged names cannot grow the receiver's
// memory), so a returning sender continues under its old id.
func (r *receiver) evict() {
	if r.cfg.EvictAfter <= 0 {
		return
	}
	r.eval.Lock()
	defer r.eval.Unlock()
	now := r.clock.Now()
	var n uint64
	for peer, s := range r.streams {
		if now-s.last <= r.cfg.EvictAfter {
			continue
		}
		for _, nm := range r.mons {
			nm.m.Remove(peer)
		}
		delete(r.streams, peer)
		for _, id := range s.ids {
			delete(r.used, id)
		}
		n++
	}
	if n > 0 {
		r.mu.Lock()
		r.stats.Evicted += n
		total := r.stats.Evicted
		r.mu.Unlock()
		r.log.Info("silent senders evicted", "count", n, "silent_for", r.cfg.EvictAfter, "evicted_total", total, "senders", len(r.streams))
	}
}

// freeID returns id, or id+"#k" for the smallest free k ≥ 2, whichever is
// not yet a trace sender id, and marks it used: a sender really named "a#2"
// and the second incarnation of "a" must not share a stream in the trace
// (replay would merge them while the live monitors keep them apart).
func (r *receiver) freeID(id string) string {
	if r.used == nil {
		r.used = map[string]bool{}
	}
	for k, base := 2, id; r.used[id]; k++ {
		id = base + "#" + strconv.Itoa(k)
	}
	r.used[id] = true
	return id
}

// recentMax is the number of recent transitions shown under the table on a
// terminal, where the redraw would wipe the log lines.
const recentMax = 8

func (r *receiver) transition(det string, t monitor.Transition) {
	line := fmt.Sprintf("%v  %s  %s: %s → %s (%s)", t.At.Round(time.Millisecond), t.Peer, det, t.Old, t.New, t.Cause)
	r.mu.Lock()
	r.stats.Transitions[det]++
	r.recent = append(r.recent, line)
	if len(r.recent) > recentMax {
		r.recent = r.recent[len(r.recent)-recentMax:]
	}
	r.mu.Unlock()
	if r.transLimiter().Allow(t.Found, "transition") {
		r.log.Info("transition", "detector", det, "peer", t.Peer, "old", t.Old.String(), "new", t.New.String(),
			"cause", t.Cause.String(), "level", t.Level, "at", t.At, "found", t.Found, "warming_up", t.WarmingUp)
	}
	if r.cfg.onTransition != nil {
		r.cfg.onTransition(det, t)
	}
}

func (r *receiver) openTrace(specs []detSpec) error {
	if r.cfg.Out == "" {
		return nil
	}
	comp := trace.CompressionFor(r.cfg.Out)
	if fi, err := os.Stat(r.cfg.Out); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 && !r.cfg.Force {
		return fmt.Errorf("recv: --out %s already exists (%d bytes, an earlier recording?): give --force to overwrite it, or another name", r.cfg.Out, fi.Size())
	}
	f, err := os.Create(r.cfg.Out)
	if err != nil {
		return fmt.Errorf("recv: %w", err)
	}
	meta := map[string]string{"source": "fdbeat-recv", "clock": "unix-ns"}
	for k, v := range r.cfg.Meta {
		meta[k] = v
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	h := trace.Header{Interval: r.cfg.Interval, Meta: meta, Comments: []string{
		"recorded by fdbeat recv: sent = sender's clock, arrival = receiver's monotonic clock + wall time at start, both Unix ns",
		"live detectors: " + strings.Join(names, ", "),
	}}
	tw, err := trace.NewWriter(f, h, comp)
	if err != nil {
		f.Close()
		return fmt.Errorf("recv: %w", err)
	}
	if err := tw.Flush(); err != nil { // the header, at once
		f.Close()
		return fmt.Errorf("recv: %w", err)
	}
	r.file, r.tw = f, tw
	return nil
}

// flushPeriod is how often the trace is flushed to the file (a gzip sync
// flush, a new xz stream, or the buffer of a plain file; trace.Writer.Flush),
// so that a receiver killed at any instant leaves every heartbeat it recorded
// more than a second before, readable with --lenient (or fdreplay
// --lenient). Half a second leaves half a second for the flush itself on a
// loaded machine. The file is not fsynced: the guarantee is for a crash of
// the process, not of the operating system.
const flushPeriod = 500 * time.Millisecond

// flushTrace flushes the trace; a failure stops the receiver as a failed
// write does.
func (r *receiver) flushTrace() {
	r.eval.Lock()
	defer r.eval.Unlock()
	if err := r.tw.Flush(); err != nil && r.recErr == nil {
		r.recErr = err
	}
}

// record writes one heartbeat to the trace (if any).
func (r *receiver) record(rec trace.Record) error {
	if r.tw == nil {
		return nil
	}
	if err := r.tw.Write(rec); err != nil {
		return err
	}
	r.mu.Lock()
	r.stats.Recorded++
	r.mu.Unlock()
	return nil
}

func (r *receiver) closeTrace() error {
	if r.tw == nil {
		return nil
	}
	err := r.tw.Close()
	if cerr := r.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("recv: closing trace: %w", err)
	}
	return nil
}

type row struct {
	peer string
	det  int
	st   monitor.PeerState
}

// tableRows returns the rows of the TableSenders senders with the most
// heartbeats (then by name), all their detectors, sorted by sender and
// detector; and how many senders were left out, and how many of those have a
// detector suspecting them. Forged names, with a heartbeat or two each, sink
// below the real senders, and the table's size stays bounded in a flood.
func (r *receiver) tableRows() (rows []row, more, moreSuspected int) {
	type agg struct {
		beats     uint64
		suspected bool
		rows      []row
	}
	by := map[string]*agg{}
	r.eval.Lock()
	for i, nm := range r.mons {
		for _, s := range nm.m.Snapshot() {
			a := by[s.Peer]
			if a == nil {
				a = &agg{}
				by[s.Peer] = a
			}
			a.beats = max(a.beats, s.Heartbeats)
			a.suspected = a.suspected || s.Status == monitor.Suspected
			a.rows = append(a.rows, row{s.Peer, i, s})
		}
	}
	r.eval.Unlock()
	peers := slices.Collect(maps.Keys(by))
	k := min(r.cfg.TableSenders, len(peers))
	slices.SortFunc(peers, func(a, b string) int {
		return cmp.Or(cmp.Compare(by[b].beats, by[a].beats), strings.Compare(a, b))
	})
	for _, p := range peers[k:] {
		more++
		if by[p].suspected {
			moreSuspected++
		}
	}
	peers = peers[:k]
	slices.Sort(peers)
	for _, p := range peers {
		rs := by[p].rows
		slices.SortFunc(rs, func(a, b row) int { return cmp.Compare(a.det, b.det) })
		rows = append(rows, rs...)
	}
	return rows, more, moreSuspected
}

func fmtLevel(x float64) string {
	if x > 1e6 {
		return "inf"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

func (r *receiver) printTable() {
	rows, more, moreSusp := r.tableRows()
	w := r.cfg.Table
	elapsed := r.clock.Now().Round(100 * time.Millisecond)
	if !r.cfg.Terminal {
		for _, x := range rows {
			fmt.Fprintf(w, "t=%v sender=%s detector=%s status=%s level=%s heartbeats=%d suspicions=%d\n",
				elapsed, x.peer, r.mons[x.det].name, x.st.Status, fmtLevel(x.st.Level), x.st.Heartbeats, x.st.Suspicions)
		}
		if more > 0 {
			fmt.Fprintf(w, "t=%v more_senders=%d suspected=%d (not shown: --table-senders %d)\n", elapsed, more, moreSusp, r.cfg.TableSenders)
		}
		return
	}
	fmt.Fprint(w, "\x1b[H\x1b[2J")
	fmt.Fprintf(w, "fdbeat recv: %v, %d sender(s)   level: φ for phi-*, elapsed/timeout for timeout-*\n",
		elapsed, len(rows)/max(1, len(r.mons))+more)
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("sender", "detector", "status", "level", "to τ", "since last", "heartbeats", "suspicions")
	for _, x := range rows {
		toTau := "-"
		if x.st.HasFreshnessPoint {
			toTau = (x.st.FreshnessPoint - x.st.Now).Round(time.Millisecond).String()
		}
		_ = t.Append(x.peer, r.mons[x.det].name, x.st.Status.String(), fmtLevel(x.st.Level), toTau,
			(x.st.Now - x.st.LastArrival).Round(time.Millisecond).String(),
			strconv.FormatUint(x.st.Heartbeats, 10), strconv.FormatUint(x.st.Suspicions, 10))
	}
	_ = t.Render()
	if more > 0 {
		fmt.Fprintf(w, "… and %d more sender(s), %d of them suspected (the table shows the %d with the most heartbeats)\n", more, moreSusp, r.cfg.TableSenders)
	}
	r.mu.Lock()
	recent := slices.Clone(r.recent)
	r.mu.Unlock()
	if len(recent) > 0 {
		fmt.Fprintf(w, "last transitions (monitor clock):\n  %s\n", strings.Join(recent, "\n  "))
	}
}
