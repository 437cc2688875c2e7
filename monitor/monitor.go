package monitor

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/lateness"
)

// Defaults.
const (
	DefaultShards     = 256
	DefaultPauseLimit = 5 * time.Second
	DefaultPauseGrace = 5 * time.Second
	maxShards         = 1 << 16
)

// Factory makes a fresh detector for a new peer (or a restarted one). It is
// called with a monitor lock held (its shard's for a new peer, the peer's own
// for a restart), so it must not call the Monitor, and it must return a new,
// independent detector each time.
type Factory func() (detector.Detector, error)

// Config configures a Monitor. The zero value means the documented defaults;
// pointer fields follow fdkit's rule on zero (see package detector): nil is
// the default, new(v) says any value, zero included.
type Config struct {
	// Factory makes each peer's detector. Default: a fixed-timeout detector
	// with detector.DefaultTimeout (1 s).
	Factory Factory
	// Clock gives now. Default: NewMonotonic().
	Clock Clock
	// High is the level above which a trusted peer becomes suspected.
	// Default (0): the detector's threshold for an accrual detector, 1 (the
	// freshness point) for a binary one. Must not be negative or NaN.
	High float64
	// Low: with Low < High, a suspected peer is trusted again only at a
	// heartbeat that arrives while its level is below Low (see the package
	// doc). Default (0): High, no hysteresis (the first fresh heartbeat that
	// leaves the level below High trusts). Must not exceed High.
	Low float64
	// Shards is the number of map shards, rounded up to a power of two.
	// Default DefaultShards (256); at most 65536.
	Shards int
	// PauseLimit: a gap between two Sweep calls longer than this means the
	// monitor itself was paused (also noticed by a heartbeat or query that
	// would convict a peer more than PauseLimit after the last Sweep).
	// Default DefaultPauseLimit (5 s); new(0) disables the local-pause
	// guard; must not be negative. Sweep well within it (Run refuses an interval not shorter):
	// with sweeps further apart every sweep starts a grace period and
	// nobody is ever convicted.
	PauseLimit *time.Duration
	// PauseGrace: after a detected local pause nobody is convicted for this
	// long. Default DefaultPauseGrace (5 s); new(0) detects and counts
	// pauses without a grace period; must not be negative.
	PauseGrace *time.Duration
	// OnTransition, when set, is called for every transition, after the
	// peer's lock is released (it may call the monitor). Calls may come from
	// several goroutines at once; Transition.Number orders one peer's.
	OnTransition func(Transition)
	// Logger, when set, logs transitions (Info) and local pauses (Warn).
	Logger *slog.Logger
	// Lateness measures the host's own lateness (package lateness), whose
	// Bound the monitor waits past a freshness point before it convicts
	// (see the package doc, “Host lateness”). Default (nil): a meter of the
	// monitor's own with lateness's defaults, fed by Run (how late its sweeps
	// fire, and the Go runtime's pause and scheduling histograms once a
	// second). Share one meter among several monitors, or feed it from a
	// loop of your own (lateness.Meter.Tick, Probe) when you do not use Run.
	Lateness *lateness.Meter
	// IgnoreHostLateness convicts at the freshness point whatever the
	// host's measured lateness, so that the transitions are exactly the
	// mistakes of trace replay on the same arrivals. Default false.
	IgnoreHostLateness bool
	// MaxPeers bounds the number of peers, so that heartbeats with forged
	// names cannot grow the monitor without limit: a heartbeat (or Handle)
	// for a new peer beyond it gets ErrTooManyPeers. Default 0: no limit;
	// must not be negative.
	MaxPeers int
}

// Monitor keeps one failure detector per peer. All methods are safe for
// concurrent use. Create it with New.
type Monitor struct {
	factory  Factory
	clock    Clock
	high     float64 // 0: per-peer default
	low      float64 // 0: = high
	seed     maphash.Seed
	mask     uint64
	shards   []shard
	limit    time.Duration
	grace    time.Duration
	onTrans  func(Transition)
	log      *slog.Logger
	guardOn  bool
	sweeping sync.Mutex // serialises Sweep's guard bookkeeping
	// lastSweep is the clock reading of the previous Sweep, or -1.
	lastSweep atomic.Int64
	// pauseUntil is the end of the current (or last) grace period, or
	// math.MinInt64 when there was none.
	pauseUntil atomic.Int64
	pauses     atomic.Uint64
	backward   atomic.Uint64 // heartbeats dropped for arriving before their peer's last
	maxPeers   int64
	npeers     atomic.Int64
	late       *lateness.Meter
	useLate    bool
	excused    atomic.Uint64 // late heartbeats that arrived before a held conviction
}

// New returns a Monitor, or an error for an invalid Config or a Factory that
// fails (New calls it once to check it and to learn the detector's kind).
func New(cfg Config) (*Monitor, error) {
	if math.IsNaN(cfg.High) || cfg.High < 0 {
		return nil, fmt.Errorf("monitor: High %v must be a non-negative number", cfg.High)
	}
	if math.IsNaN(cfg.Low) || cfg.Low < 0 {
		return nil, fmt.Errorf("monitor: Low %v must be a non-negative number", cfg.Low)
	}
	if cfg.Shards < 0 || cfg.Shards > maxShards {
		return nil, fmt.Errorf("monitor: Shards %d must be in [0, %d]", cfg.Shards, maxShards)
	}
	if cfg.MaxPeers < 0 {
		return nil, fmt.Errorf("monitor: MaxPeers %d is negative", cfg.MaxPeers)
	}
	limit := detector.OrDefault(cfg.PauseLimit, DefaultPauseLimit)
	if limit < 0 {
		return nil, fmt.Errorf("monitor: PauseLimit %v is negative", limit)
	}
	grace := detector.OrDefault(cfg.PauseGrace, DefaultPauseGrace)
	if grace < 0 {
		return nil, fmt.Errorf("monitor: PauseGrace %v is negative", grace)
	}
	if cfg.Factory == nil {
		cfg.Factory = func() (detector.Detector, error) { return detector.NewFixed(detector.FixedConfig{}) }
	}
	probe, err := cfg.Factory()
	if err != nil {
		return nil, fmt.Errorf("monitor: factory: %w", err)
	}
	if probe == nil {
		return nil, fmt.Errorf("monitor: factory returned a nil detector")
	}
	high := cfg.High
	if high == 0 {
		high = defaultHigh(probe)
	}
	if cfg.Low > high {
		return nil, fmt.Errorf("monitor: Low %v exceeds High %v", cfg.Low, high)
	}
	if cfg.Clock == nil {
		cfg.Clock = NewMonotonic()
	}
	cfg.Shards = cmp.Or(cfg.Shards, DefaultShards)
	if cfg.Lateness == nil {
		if cfg.Lateness, err = lateness.New(lateness.Config{}); err != nil {
			return nil, err
		}
	}
	n := 1
	for n < cfg.Shards {
		n <<= 1
	}
	m := &Monitor{
		factory:  cfg.Factory,
		clock:    cfg.Clock,
		high:     cfg.High,
		low:      cfg.Low,
		seed:     maphash.MakeSeed(),
		mask:     uint64(n - 1),
		shards:   make([]shard, n),
		limit:    limit,
		grace:    grace,
		onTrans:  cfg.OnTransition,
		log:      cfg.Logger,
		guardOn:  limit > 0,
		maxPeers: int64(cfg.MaxPeers),
		late:     cfg.Lateness,
		useLate:  !cfg.IgnoreHostLateness,
	}
	m.lastSweep.Store(-1)
	m.pauseUntil.Store(math.MinInt64)
	return m, nil
}

func defaultHigh(d detector.Detector) float64 {
	if a, ok := d.(detector.Accrual); ok {
		return a.Threshold()
	}
	return 1
}

// Beat describes one received heartbeat. Its arrival instant is read from
// the monitor's clock (Heartbeat) or given (HeartbeatAt).
type Beat struct {
	// Incarnation (generation) of the sender: a larger value than the
	// peer's current one resets its history; a smaller one is rejected.
	Incarnation uint64
	Seq         uint64 // valid only if HasSeq (0 is valid)
	HasSeq      bool
	Sent        time.Duration // send instant on the sender's clock, if HasSent
	HasSent     bool
}

// shardOf returns the name's hash and its shard (chosen by the hash's low
// bits; the shard's table uses the bits above them).
func (m *Monitor) shardOf(name string) (uint64, *shard) {
	h := maphash.String(m.seed, name)
	return h, &m.shards[h&m.mask]
}

// lookup returns the peer or nil. It takes no lock: a peer added at the same
// moment may be missed, and create, which looks again under the shard's
// lock, finds it.
func (m *Monitor) lookup(name string) *peer {
	if name == "" {
		return nil
	}
	h, s := m.shardOf(name)
	return s.find(h, name)
}

// Heartbeat records a heartbeat from peer, arriving now on the monitor's
// clock. The peer is created on its first heartbeat. It returns
// ErrEmptyPeer, ErrStaleIncarnation, ErrTooManyPeers, or the factory's error
// (wrapped) when a new detector cannot be made; the heartbeat is then
// ignored. The monitor keeps its own copy of a new peer's name, so name may
// alias a buffer the caller reuses.
func (m *Monitor) Heartbeat(name string, b Beat) error {
	p, err := m.get(name, b.Incarnation)
	if err != nil {
		return err
	}
	return m.beat(p, b, 0, false)
}

// HeartbeatAt is Heartbeat with the arrival instant given, on the monitor's
// clock, for a caller that shares one clock reading among several monitors
// or feeds recorded arrivals. An arrival not later than the peer's newest
// accepted one (the caller's clock went backwards, or several heartbeats of
// one peer share a clock reading) never reaches the detector, so it never
// becomes a sample of zero or negative length: the heartbeat is dropped,
// counted (BackwardArrivals, PeerState.BackwardArrivals) and nil is
// returned. Until the clock is past that arrival again the peer gets no
// fresh heartbeat, so pass readings of a monotonic clock.
//
// The by-name methods read the clock while holding the peer's lock, so one
// peer's evaluations see non-decreasing instants. HeartbeatAt cannot: the
// caller must not let a query, Sweep or Snapshot evaluate the peer at an
// instant later than an arrival it has yet to pass in (fdbeat recv
// serialises them), or a suspicion found at that later instant may be ended
// by a heartbeat that arrived before it began.
func (m *Monitor) HeartbeatAt(name string, b Beat, arrival time.Duration) error {
	p, err := m.get(name, b.Incarnation)
	if err != nil {
		return err
	}
	return m.beat(p, b, arrival, true)
}

func (m *Monitor) get(name string, inc uint64) (*peer, error) {
	if name == "" {
		return nil, ErrEmptyPeer
	}
	if p := m.lookup(name); p != nil {
		return p, nil
	}
	return m.create(name, inc)
}

// beat records a heartbeat; without an arrival it reads the clock under the
// peer's lock.
func (m *Monitor) beat(p *peer, b Beat, arrival time.Duration, hasArrival bool) error {
	var out transitions
	p.mu.Lock()
	if !hasArrival {
		arrival = m.clock.Now()
	}
	err := p.heartbeat(m, b, arrival, &out)
	p.mu.Unlock()
	m.deliver(&out)
	return err
}

// status evaluates p now (read under its lock) and returns its status.
func (m *Monitor) status(p *peer) Status {
	var out transitions
	p.mu.Lock()
	p.check(m, m.clock.Now(), &out)
	st := p.status
	p.mu.Unlock()
	m.deliver(&out)
	return st
}

// state evaluates p now (read under its lock) and returns its state.
func (m *Monitor) state(p *peer) PeerState {
	var out transitions
	p.mu.Lock()
	now := m.clock.Now()
	p.check(m, now, &out)
	st := p.state(now)
	p.mu.Unlock()
	m.deliver(&out)
	return st
}

func (m *Monitor) create(name string, inc uint64) (*peer, error) {
	h, s := m.shardOf(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.find(h, name); p != nil {
		return p, nil
	}
	if !m.reserve() {
		return nil, ErrTooManyPeers
	}
	inserted := false
	defer func() {
		if !inserted { // a factory error or panic: give the reservation back
			m.npeers.Add(-1)
		}
	}()
	// The name is copied: a caller may pass a string that aliases a reused
	// receive buffer, or a substring of a large one, and the table keeps it.
	p := &peer{name: strings.Clone(name), inc: inc, m: m}
	if err := p.reset(m); err != nil {
		return nil, err
	}
	s.insert(h, p)
	inserted = true
	return p, nil
}

// reserve counts one more peer unless that would exceed MaxPeers. It never
// lets the count pass the bound, even for an instant: Len reads it.
func (m *Monitor) reserve() bool {
	for {
		n := m.npeers.Load()
		if m.maxPeers > 0 && n >= m.maxPeers {
			return false
		}
		if m.npeers.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Status returns the peer's status now (Unknown and false for an unknown
// peer). It finds a pending transition, as every query does.
func (m *Monitor) Status(name string) (Status, bool) {
	p := m.lookup(name)
	if p == nil {
		return Unknown, false
	}
	return m.status(p), true
}

// Level returns the peer's suspicion level now (0 and false for an unknown
// peer).
func (m *Monitor) Level(name string) (float64, bool) {
	s, ok := m.State(name)
	return s.Level, ok
}

// State returns a snapshot of the peer evaluated now.
func (m *Monitor) State(name string) (PeerState, bool) {
	p := m.lookup(name)
	if p == nil {
		return PeerState{}, false
	}
	return m.state(p), true
}

// Remove forgets a peer; it reports whether the peer existed. A later
// heartbeat creates it anew (a heartbeat racing with Remove may still be
// recorded on the removed peer and lost with it).
func (m *Monitor) Remove(name string) bool {
	if name == "" {
		return false
	}
	h, s := m.shardOf(name)
	s.mu.Lock()
	ok := s.remove(h, name)
	if ok {
		m.npeers.Add(-1)
	}
	s.mu.Unlock()
	return ok
}

// Len returns the number of peers.
func (m *Monitor) Len() int { return int(m.npeers.Load()) }

// Sweep evaluates every peer now, delivering the transitions it finds, and
// returns how many it found. It also drives the local-pause guard: a gap
// longer than Config.PauseLimit since the previous Sweep starts a grace
// period of Config.PauseGrace during which nobody is convicted.
func (m *Monitor) Sweep() int {
	now := m.clock.Now()
	m.guard(now)
	return m.evaluateAll(now, nil)
}

// Snapshot evaluates every peer now, like Sweep without the guard
// bookkeeping, and returns their states in no particular order.
func (m *Monitor) Snapshot() []PeerState {
	now := m.clock.Now()
	var states []PeerState
	m.evaluateAll(now, func(p *peer) { states = append(states, p.state(now)) })
	return states
}

// evaluateAll checks every peer at now, calling visit (when not nil) with
// the peer still locked, then delivers the transitions found, outside every
// lock, and returns their number. A shard's peers are copied out under its
// lock so that no shard lock is held while a peer is evaluated.
func (m *Monitor) evaluateAll(now time.Duration, visit func(p *peer)) int {
	var buf []transitions
	var ps []*peer
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		ps = s.appendPeers(ps[:0])
		s.mu.Unlock()
		for _, p := range ps {
			var out transitions
			p.mu.Lock()
			p.check(m, now, &out)
			if visit != nil {
				visit(p)
			}
			p.mu.Unlock()
			if out.n > 0 {
				buf = append(buf, out)
			}
		}
	}
	found := 0
	for i := range buf {
		found += buf[i].n
		m.deliver(&buf[i])
	}
	return found
}

// BackwardArrivals returns how many heartbeats, over all peers, were dropped
// because they arrived earlier than their peer's newest heartbeat (see
// HeartbeatAt); PeerState.BackwardArrivals counts them per peer.
func (m *Monitor) BackwardArrivals() uint64 { return m.backward.Load() }

// LocalPauses returns how many local pauses the guard has detected.
func (m *Monitor) LocalPauses() uint64 { return m.pauses.Load() }

// InGrace reports whether now is inside a local-pause grace period.
func (m *Monitor) InGrace() bool { return m.inGrace(m.clock.Now()) }

func (m *Monitor) inGrace(now time.Duration) bool {
	return int64(now) < m.pauseUntil.Load()
}

// held reports whether convictions are held back at now: inside a grace
// period, or when the monitor has not swept for longer than PauseLimit. The
// latter is a local pause that the next Sweep has yet to see (after a stall
// the goroutine handling heartbeats often runs before the sweeping one): the
// guard starts the grace period here, so that the first heartbeat or query
// after the stall does not convict its peer. It costs one atomic load unless
// the monitor is late.
func (m *Monitor) held(now time.Duration) bool {
	if m.inGrace(now) {
		return true
	}
	if !m.guardOn {
		return false
	}
	if prev := m.lastSweep.Load(); prev >= 0 && int64(now)-prev > int64(m.limit) {
		m.guard(now)
		return m.inGrace(now)
	}
	return false
}

func (m *Monitor) guard(now time.Duration) {
	if !m.guardOn {
		return
	}
	m.sweeping.Lock()
	prev := m.lastSweep.Load()
	if prev >= 0 && int64(now)-prev > int64(m.limit) {
		m.pauseUntil.Store(int64(now + m.grace))
		m.pauses.Add(1)
		if m.log != nil {
			m.log.Warn("monitor paused locally; convicting nobody during the grace period",
				"gap", now-time.Duration(prev), "limit", m.limit, "grace", m.grace)
		}
	}
	if int64(now) > prev {
		m.lastSweep.Store(int64(now))
	}
	m.sweeping.Unlock()
}

// transitions holds the at most two transitions one evaluation can find
// (a suspicion found late, then the trust brought by the heartbeat).
type transitions struct {
	t [2]Transition
	n int
}

func (o *transitions) add(t Transition) {
	if o.n < len(o.t) {
		o.t[o.n] = t
		o.n++
	}
}

func (m *Monitor) deliver(o *transitions) {
	for i := 0; i < o.n; i++ {
		t := o.t[i]
		if m.log != nil {
			m.log.Info("peer status changed", "peer", t.Peer, "incarnation", t.Incarnation,
				"old", t.Old.String(), "new", t.New.String(), "cause", t.Cause.String(),
				"level", t.Level, "at", t.At, "found", t.Found)
		}
		if m.onTrans != nil {
			m.onTrans(t)
		}
	}
}
