package main

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/fdkit/fdkit/lateness"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/swim/wire"
	"github.com/fdkit/fdkit/trace"
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
	// IgnoreHostLateness makes the monitors convict at the freshness point
	// whatever the host's measured lateness, so that the transitions are
	// exactly the mistakes replay finds on the recorded trace
	// (monitor.Config.IgnoreHostLateness).
	IgnoreHostLateness bool
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
	// counted unless a second heartbeat confirms it: from the same source
	// address, same incarnation, a larger sequence number at most
	// MaxSeqJump above it, arriving at a plausible interval (see
	// plausible). So forged datagrams from elsewhere, or sent back to back,
	// cannot make every later genuine heartbeat stale.
	MaxSeqJump         uint64
	MaxIncarnationJump uint64
	// MaxIncarnationAhead bounds an incarnation against the receiver's
	// wall clock: a heartbeat whose incarnation exceeds the clock (Unix ns)
	// by more is refused outright (fdbeat send's incarnation is its start
	// time in Unix ns). Covers clock skew between sender and receiver.
	MaxIncarnationAhead time.Duration
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
	// display redraws the table on a terminal with the log above it; nil
	// with Terminal: runRecv makes one on Table, the log not routed through
	// it (cmdRecv routes the log when stderr is the same terminal).
	display *liveRegion
	Meta    map[string]string

	// Test hooks.
	ready        func(addr net.Addr, origin time.Duration) // origin: Unix ns of monitor clock 0
	onTransition func(det string, t monitor.Transition)
	onPacket     func() // each datagram counted in recvStats.Packets, with r.eval held
}

// Defaults of recv's flags (and of the recvConfigs tests build).
const (
	defaultMaxSeqJump         = 100                    // 10 s of losses at 100 ms; see docs/live.md for the trade-off
	defaultMaxIncarnationJump = uint64(24 * time.Hour) // fdbeat send's incarnation: start time in Unix ns
	defaultEvictAfter         = 10 * time.Minute
	// defaultMaxIncarnationAhead is the sender clock's lead over the
	// receiver's that is tolerated: far above NTP-synchronised skews
	// (milliseconds), and it bounds how long an accepted forged
	// incarnation could outrank a restarted genuine sender.
	defaultMaxIncarnationAhead = time.Minute
	defaultTableSenders        = 20
	maxTableSenders            = 100000
	// maxSenders bounds --max-senders: each sender keeps one detector
	// state per detector, so the table's memory is bounded by it.
	maxSenders        = 1_000_000
	defaultMaxSenders = 10_000
)

// recvStats counts what the receiver saw.
type recvStats struct {
	Packets         uint64
	Bad             uint64 // undecodable datagrams
	Stale           uint64 // heartbeats of an older incarnation
	Duplicates      uint64 // copies of a heartbeat already recorded, or older than recordWindow (not recorded)
	Unauthenticated uint64 // plain packets refused because keys are set
	AuthFailed      uint64 // authenticated packets whose MAC verified under no key
	AheadOfClock    uint64 // heartbeats refused outright: incarnation beyond the receiver's clock plus MaxIncarnationAhead
	Implausible     uint64 // heartbeats rejected for an unconfirmed jump (MaxSeqJump, MaxIncarnationJump)
	Confirmed       uint64 // jumps confirmed by a second heartbeat
	OtherSource     uint64 // heartbeats that would have confirmed a jump but came from another source address
	BadInterval     uint64 // heartbeats that would have confirmed a jump but arrived at an implausible interval
	Displaced       uint64 // senders on probation forgotten to make room at MaxSenders
	Reverted        uint64 // senders followed again in an older incarnation that kept sending while the newer fell silent
	Refused         uint64 // heartbeats of new senders refused at MaxSenders (every tracked sender past probation)
	Evicted         uint64 // senders forgotten after EvictAfter of silence
	KernelDrops     uint64 // datagrams the kernel dropped (receive buffer full); see DropsCounted
	DropsCounted    bool   // the platform reports KernelDrops (Linux: SO_RXQ_OVFL)
	Recorded        uint64
	NoTraceID       uint64         // heartbeats not recorded because their sender used up its maxPeerIDs trace ids
	Transitions     map[string]int // per detector
	// Lateness is the host's lateness the monitors waited for (its
	// maxima per source since the start); Excused the late heartbeats
	// whose conviction it held back, summed over the detectors.
	Lateness lateness.Stats
	Excused  uint64
	Started  bool // the receiver was listening (false after a setup error)
}

type namedMon struct {
	name string
	m    *monitor.Monitor
}

type receiver struct {
	cfg     recvConfig
	log     *slog.Logger
	clock   monitor.Clock // *monitor.Monotonic (tests: a manual clock)
	wall    time.Duration // wall clock of the clock's origin, Unix ns
	mons    []namedMon
	streams map[string]*streamID
	used    map[string]bool // trace sender ids given out
	// probation lists the senders on probation (*streamID, fewer than
	// probationBeats heartbeats), least recently heard first.
	probation *list.List
	tw        *trace.Writer
	file      *os.File
	warn      *warnLimiter
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
	// late measures the host's lateness for every monitor (fed by the
	// sweep loop); lateMax is the largest Bound since the last "host
	// lateness" line, lateNext when the next is due (sweep goroutine).
	late     *lateness.Meter
	lateMax  time.Duration
	lateNext time.Duration
	// recErr is the first error writing the trace (guarded by eval).
	recErr error
}

// runRecv listens and monitors until ctx is done, then flushes the trace.
// It checks cfg before it opens anything.
func runRecv(ctx context.Context, cfg recvConfig, log *slog.Logger) (recvStats, error) {
	specs, err := checkRecv(&cfg)
	if err != nil {
		return recvStats{}, err
	}
	if cfg.Terminal && cfg.display == nil {
		cfg.display = newLiveRegion(cfg.Table, nil, nil)
	}
	if cfg.display != nil {
		defer cfg.display.Close() // shows log lines still held, on every return
	}
	r, err := newReceiver(cfg, log, specs)
	if err != nil {
		return recvStats{}, err
	}
	conn, err := net.ListenPacket("udp", cfg.Listen)
	if err != nil {
		return recvStats{}, fmt.Errorf("recv: listen: %w", err)
	}
	defer conn.Close()
	if err := r.openTrace(specs); err != nil {
		return recvStats{}, err
	}
	r.stats.Started = true
	log.Info("receiving heartbeats", "listen", conn.LocalAddr().String(), "detectors", len(specs), "trace", cfg.Out,
		"phi_min_std", cfg.PhiMinStd, "clock_origin_unix_ns", int64(r.wall))
	if cfg.ready != nil {
		cfg.ready(conn.LocalAddr(), r.wall)
	}
	readErr := r.serve(ctx, conn)
	return r.finish(readErr)
}

// checkRecv checks cfg, fills in its defaults and returns the detectors
// to run: those of the Timeouts and Phis fields (the default set when no
// detector is given at all), then cfg.Detectors.
func checkRecv(cfg *recvConfig) ([]detSpec, error) {
	if cfg.Interval <= 0 {
		return nil, fmt.Errorf("recv: interval %v must be positive", cfg.Interval)
	}
	if cfg.MaxSenders == 0 {
		cfg.MaxSenders = defaultMaxSenders
	}
	if cfg.MaxSenders < 1 || cfg.MaxSenders > maxSenders {
		return nil, fmt.Errorf("recv: --max-senders %d must be from 1 to %d", cfg.MaxSenders, maxSenders)
	}
	if cfg.Sweep <= 0 || cfg.Sweep >= monitor.DefaultPauseLimit {
		// Sweeps PauseLimit apart would each look like a local pause of
		// the receiver, and nobody would ever be convicted.
		return nil, fmt.Errorf("recv: --sweep %v must be positive and shorter than the local-pause limit %v", cfg.Sweep, monitor.DefaultPauseLimit)
	}
	var specs []detSpec
	if len(cfg.Timeouts)+len(cfg.Phis) > 0 || len(cfg.Detectors) == 0 {
		var err error
		if specs, err = fieldDetectors(cfg.Timeouts, cfg.Phis, cfg.PhiWindow, cfg.PhiMinStd, cfg.Interval); err != nil {
			return nil, fmt.Errorf("recv: %w", err)
		}
	}
	specs = append(specs, cfg.Detectors...)
	switch {
	case cfg.TableSenders < 0:
		return nil, fmt.Errorf("recv: --table-senders %d must not be negative", cfg.TableSenders)
	case cfg.MaxIncarnationAhead < 0:
		return nil, fmt.Errorf("recv: --max-incarnation-ahead %v must not be negative", cfg.MaxIncarnationAhead)
	case cfg.EvictAfter < 0:
		return nil, fmt.Errorf("recv: --evict-after %v must be 0 (never) or positive", cfg.EvictAfter)
	}
	return specs, nil
}

// newReceiver makes the receiver and one monitor per detector, all on
// the monotonic clock and waiting for one meter of the host's lateness.
func newReceiver(cfg recvConfig, log *slog.Logger, specs []detSpec) (*receiver, error) {
	r := &receiver{cfg: cfg, log: log, clock: monitor.NewMonotonic(), streams: map[string]*streamID{}, warn: newWarnLimiter(log)}
	r.transLimiter()
	r.wall = time.Duration(r.clock.(*monitor.Monotonic).Start().UnixNano())
	r.stats.Transitions = map[string]int{}
	// One meter of the host's lateness for every monitor, fed by the sweep
	// loop: each waits its Bound past a freshness point before convicting.
	var err error
	if r.late, err = lateness.New(lateness.Config{}); err != nil {
		return nil, fmt.Errorf("recv: %w", err)
	}
	for _, s := range specs {
		name := s.Name
		m, err := monitor.New(monitor.Config{Factory: s.Factory, Clock: r.clock, MaxPeers: cfg.MaxSenders, Lateness: r.late,
			IgnoreHostLateness: cfg.IgnoreHostLateness,
			OnTransition:       func(t monitor.Transition) { r.transition(name, t) }})
		if err != nil {
			return nil, fmt.Errorf("recv: detector %s: %w", name, err)
		}
		r.mons = append(r.mons, namedMon{name, m})
	}
	return r, nil
}

// serve reads heartbeats from conn until ctx is done or reading fails,
// with the periodic work beside it: sweeps, evictions and flushes of the
// warnings, the table, the trace. It returns when all of it has ended.
func (r *receiver) serve(ctx context.Context, conn net.PacketConn) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		<-ctx.Done()
		conn.Close()
	})
	wg.Go(func() { r.sweepLoop(ctx) })
	wg.Go(func() {
		every(ctx, time.Second, func(time.Time) {
			r.evict()
			r.warn.Flush(r.clock.Now())
			r.transLimiter().Flush(r.clock.Now())
		})
	})
	if r.cfg.Refresh > 0 && r.cfg.Table != nil {
		wg.Go(func() { every(ctx, r.cfg.Refresh, func(time.Time) { r.printTable() }) })
	}
	if r.tw != nil {
		wg.Go(func() { every(ctx, flushPeriod, func(time.Time) { r.flushTrace() }) })
	}
	err := r.readLoop(ctx, conn)
	cancel()
	wg.Wait()
	return err
}

// sweepLoop has the monitors look for suspicions every Sweep until ctx is
// done, and feeds the lateness meter with each tick and, about once a
// second, the runtime's histograms.
func (r *receiver) sweepLoop(ctx context.Context) {
	r.late.ReadRuntime(r.clock.Now())
	lastRead := r.clock.Now()
	every(ctx, r.cfg.Sweep, func(due time.Time) {
		now := r.clock.Now()
		r.late.TickSince(due, now)
		if now-lastRead >= time.Second {
			r.late.ReadRuntime(now)
			lastRead = now
		}
		r.eval.Lock()
		for _, nm := range r.mons {
			nm.m.Sweep()
		}
		r.eval.Unlock()
		r.notePauses()
		r.noteLateness(now)
	})
}

// finish ends a run whose reading ended with readErr: a last sweep and
// table, the trace closed, the warnings held flushed, and the counts
// logged and returned.
func (r *receiver) finish(readErr error) (recvStats, error) {
	for _, nm := range r.mons {
		nm.m.Sweep()
	}
	if r.cfg.Table != nil {
		r.printTable()
	}
	if r.cfg.display != nil {
		r.cfg.display.Close()
	}
	closeErr := r.closeTrace()
	r.warn.Flush(r.clock.Now() + warnWindow)
	r.transLimiter().Flush(r.clock.Now() + warnWindow)
	r.mu.Lock()
	st := r.stats
	st.Transitions = maps.Clone(r.stats.Transitions)
	r.mu.Unlock()
	st.Lateness = r.late.Stats()
	for _, nm := range r.mons {
		st.Excused += nm.m.Excused()
	}
	r.log.Info("receiver stopped", "packets", st.Packets, "bad", st.Bad, "recorded", st.Recorded,
		"unauthenticated", st.Unauthenticated, "auth_failed", st.AuthFailed, "ahead_of_clock", st.AheadOfClock, "implausible", st.Implausible,
		"confirmed", st.Confirmed, "other_source", st.OtherSource, "bad_interval", st.BadInterval, "displaced", st.Displaced, "reverted", st.Reverted,
		"refused", st.Refused, "evicted", st.Evicted, "kernel_drops", dropsString(st), "excused", st.Excused)
	r.logLateness("host lateness at the end", st.Lateness, 0)
	if readErr != nil && closeErr != nil {
		// Closing repeats the write error; one line says it.
		r.log.Debug("closing the trace after a failure", "err", closeErr)
		closeErr = nil
	}
	return st, errors.Join(readErr, closeErr)
}

// every calls f every d until ctx is done, with the instant each call was
// due.
func every(ctx context.Context, d time.Duration, f func(due time.Time)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case due := <-t.C:
			f(due)
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

// count adds one to a counter of r.stats.
func (r *receiver) count(c *uint64) {
	r.mu.Lock()
	*c++
	r.mu.Unlock()
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
