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
	"github.com/fdkit/fdkit/trace"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// recvConfig configures "fdbeat recv".
type recvConfig struct {
	Listen     string        // UDP address to listen on
	Out        string        // trace file ("" = do not record); .gz gzip, .xz xz
	Interval   time.Duration // nominal heartbeat interval Δ (trace header, φ bootstrap)
	Timeouts   []time.Duration
	Phis       []float64
	PhiWindow  int
	PhiMinStd  time.Duration // φ's σ_min; 0 = the phi package default (μ/100)
	MaxSenders int           // bound on senders tracked (forged names cannot grow memory); 0 = none
	Sweep      time.Duration // how often the monitors look for suspicions
	Refresh    time.Duration // table refresh period; 0 = no table
	Table      io.Writer     // where the table goes
	Terminal   bool          // redraw the table in place (ANSI) instead of printing lines
	Meta       map[string]string

	// Test hooks.
	ready        func(addr net.Addr, origin time.Duration) // origin: Unix ns of monitor clock 0
	onTransition func(det string, t monitor.Transition)
}

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

// recvStats counts what the receiver saw.
type recvStats struct {
	Packets     uint64
	Bad         uint64 // undecodable datagrams
	Stale       uint64 // heartbeats of an older incarnation
	Recorded    uint64
	Transitions map[string]int // per detector
	Started     bool           // the receiver was listening (false after a setup error)
}

type namedMon struct {
	name string
	m    *monitor.Monitor
}

// streamID names a peer's current incarnation in the trace: the peer for its
// first incarnation seen, "peer#2", "peer#3", ... after restarts, so that
// replay treats each incarnation as its own stream.
type streamID struct {
	inc         uint64
	n           int
	id          string
	staleWarned uint64 // 1 + the stale incarnation last warned about; 0: none
}

type receiver struct {
	cfg     recvConfig
	log     *slog.Logger
	clock   *monitor.Monotonic
	wall    time.Duration // wall clock of the clock's origin, Unix ns
	mons    []namedMon
	streams map[string]*streamID
	used    map[string]bool // trace sender ids given out
	tw      *trace.Writer
	file    *os.File

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
	if cfg.MaxSenders < 0 {
		return recvStats{}, fmt.Errorf("recv: --max-senders %d must be 0 (no limit) or positive", cfg.MaxSenders)
	}
	if cfg.Sweep <= 0 || cfg.Sweep >= monitor.DefaultPauseLimit {
		// Sweeps PauseLimit apart would each look like a local pause of
		// the receiver, and nobody would ever be convicted.
		return recvStats{}, fmt.Errorf("recv: --sweep %v must be positive and shorter than the local-pause limit %v", cfg.Sweep, monitor.DefaultPauseLimit)
	}
	specs, err := fieldDetectors(cfg.Timeouts, cfg.Phis, cfg.PhiWindow, cfg.PhiMinStd, cfg.Interval)
	if err != nil {
		return recvStats{}, fmt.Errorf("recv: %w", err)
	}
	r := &receiver{cfg: cfg, log: log, clock: monitor.NewMonotonic(), streams: map[string]*streamID{}}
	r.wall = time.Duration(r.clock.Start().UnixNano())
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
	r.mu.Lock()
	st := r.stats
	st.Transitions = maps.Clone(r.stats.Transitions)
	r.mu.Unlock()
	log.Info("receiver stopped", "packets", st.Packets, "bad", st.Bad, "recorded", st.Recorded)
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
	for {
		n, from, err := conn.ReadFrom(buf)
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

// handle processes one datagram that arrived at now (monitor clock).
func (r *receiver) handle(b []byte, from net.Addr, now time.Duration) {
	r.mu.Lock()
	r.stats.Packets++
	r.mu.Unlock()
	p, err := decodePacket(b)
	if err != nil {
		r.mu.Lock()
		r.stats.Bad++
		r.mu.Unlock()
		r.log.Debug("bad packet", "from", from.String(), "err", err)
		return
	}
	peer := p.Name
	if peer == "" {
		peer = from.String()
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
				r.log.Warn("heartbeat from a new sender ignored: --max-senders reached", "peer", peer)
				return
			}
			r.log.Error("monitor refused a heartbeat", "detector", nm.name, "peer", peer, "err", err)
		}
	}
	if stale {
		r.mu.Lock()
		r.stats.Stale++
		r.mu.Unlock()
		// Said once per sender and incarnation: a sender restarted with a
		// smaller --incarnation (or a wall clock stepped back) is otherwise
		// ignored for good with no word.
		if s := r.streams[peer]; s != nil && s.staleWarned != p.Incarnation+1 {
			s.staleWarned = p.Incarnation + 1
			r.log.Warn("heartbeats from an older incarnation ignored (restart the sender with a larger --incarnation)",
				"peer", peer, "incarnation", p.Incarnation, "current", s.inc)
		}
		return
	}
	id := r.stream(peer, p.Incarnation)
	rec := trace.Record{Sender: id, Seq: p.Seq, HasSeq: true, Sent: p.Sent, HasSent: true,
		Arrival: r.wall + now, HasArrival: true}
	if err := r.record(rec); err != nil {
		// A recorder that cannot record stops (the read loop returns it)
		// rather than go on losing heartbeats with a log line each.
		r.recErr = err
	}
}

func (r *receiver) stream(peer string, inc uint64) string {
	s := r.streams[peer]
	switch {
	case s == nil:
		s = &streamID{inc: inc, n: 1, id: r.freeID(peer)}
		r.streams[peer] = s
	case inc > s.inc:
		s.inc, s.n = inc, s.n+1
		s.id = r.freeID(peer + "#" + strconv.Itoa(s.n))
		r.log.Info("sender restarted", "peer", peer, "incarnation", inc, "trace_sender", s.id)
	}
	return s.id
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
	r.log.Info("transition", "detector", det, "peer", t.Peer, "old", t.Old.String(), "new", t.New.String(),
		"cause", t.Cause.String(), "level", t.Level, "at", t.At, "found", t.Found, "warming_up", t.WarmingUp)
	if r.cfg.onTransition != nil {
		r.cfg.onTransition(det, t)
	}
}

func (r *receiver) openTrace(specs []detSpec) error {
	if r.cfg.Out == "" {
		return nil
	}
	comp := trace.CompressionFor(r.cfg.Out)
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

func (r *receiver) rows() []row {
	var rows []row
	r.eval.Lock()
	for i, nm := range r.mons {
		for _, s := range nm.m.Snapshot() {
			rows = append(rows, row{s.Peer, i, s})
		}
	}
	r.eval.Unlock()
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(strings.Compare(a.peer, b.peer), cmp.Compare(a.det, b.det))
	})
	return rows
}

func fmtLevel(x float64) string {
	if x > 1e6 {
		return "inf"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

func (r *receiver) printTable() {
	rows := r.rows()
	w := r.cfg.Table
	elapsed := r.clock.Now().Round(100 * time.Millisecond)
	if !r.cfg.Terminal {
		for _, x := range rows {
			fmt.Fprintf(w, "t=%v sender=%s detector=%s status=%s level=%s heartbeats=%d suspicions=%d\n",
				elapsed, x.peer, r.mons[x.det].name, x.st.Status, fmtLevel(x.st.Level), x.st.Heartbeats, x.st.Suspicions)
		}
		return
	}
	fmt.Fprint(w, "\x1b[H\x1b[2J")
	fmt.Fprintf(w, "fdbeat recv: %v, %d sender(s)   level: φ for phi-*, elapsed/timeout for timeout-*\n",
		elapsed, len(rows)/max(1, len(r.mons)))
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
	r.mu.Lock()
	recent := slices.Clone(r.recent)
	r.mu.Unlock()
	if len(recent) > 0 {
		fmt.Fprintf(w, "last transitions (monitor clock):\n  %s\n", strings.Join(recent, "\n  "))
	}
}
