package monitor

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// peer is one monitored process. name never changes after the peer is
// created (lock-free lookups read it); the other fields are guarded by mu.
//
// Layout: a lookup and a heartbeat that neither convicts nor trusts touch the
// first 128 bytes only, two cache lines: the first holds what the lookup, the
// lock and the detector call need; the struct is padded to 192 bytes, a Go
// size class whose objects start on a cache line (with 160, the size without
// padding, the first 128 bytes often spanned three lines).
type peer struct {
	name    string
	mu      sync.Mutex
	status  Status
	seen    bool
	hasSeq  bool
	hasHigh bool
	hasTau  bool
	warm    bool          // detector warming up when tauHigh was computed
	hyst    bool          // low < high: hysteresis
	last    time.Duration // arrival of the newest accepted heartbeat
	tauHigh time.Duration // freshness point at level high
	det     detector.Detector

	tau        time.Duration // the detector's own freshness point
	seq        uint64
	inc        uint64
	heartbeats uint64
	high       float64
	m          *Monitor
	acc        detector.Accrual // det as Accrual, or nil for a binary detector

	low        float64
	suspicions uint64
	trans      uint64
	backward   uint64   // heartbeats dropped for arriving before last
	_          [32]byte // to 192 bytes
}

// reset gives the peer a fresh detector, keeping its name, incarnation and
// transition counters. On error the peer is unchanged.
func (p *peer) reset(m *Monitor) error {
	d, err := m.factory()
	if err != nil {
		return fmt.Errorf("monitor: factory for peer %q: %w", p.name, err)
	}
	if d == nil {
		return fmt.Errorf("monitor: factory for peer %q returned a nil detector", p.name)
	}
	p.det = d
	p.acc, _ = d.(detector.Accrual)
	p.high = m.high
	if p.high == 0 {
		p.high = defaultHigh(d)
	}
	p.low = m.low
	if p.low == 0 || p.low > p.high {
		p.low = p.high
	}
	p.hyst = p.low < p.high
	p.status = Trusted
	p.seen, p.last, p.seq, p.hasSeq = false, 0, 0, false
	p.tauHigh, p.hasHigh, p.tau, p.hasTau, p.warm = 0, false, 0, false, false
	p.heartbeats = 0
	return nil
}

func (p *peer) heartbeat(m *Monitor, b Beat, arrival time.Duration, out *transitions) error {
	if b.Incarnation < p.inc {
		return ErrStaleIncarnation
	}
	if p.seen && arrival <= p.last {
		// The caller's clock went backwards (or a batch shared one
		// reading): the heartbeat would be a sample of zero or negative
		// length. It is dropped and counted; the peer's next heartbeat
		// after last is taken as usual.
		p.backward++
		m.backward.Add(1)
		return nil
	}
	// A suspicion that became due before this arrival is found first.
	p.check(m, arrival, out)
	if b.Incarnation > p.inc {
		was := p.status
		if err := p.reset(m); err != nil {
			return err
		}
		p.inc = b.Incarnation
		if was == Suspected {
			p.emit(out, Suspected, Trusted, CauseRestart, 0, arrival, arrival)
		}
	}
	hb := detector.Heartbeat{Seq: b.Seq, HasSeq: b.HasSeq, Sent: b.Sent, HasSent: b.HasSent, Arrival: arrival}
	if b.HasSeq && p.hasSeq && b.Seq <= p.seq {
		// Stale or duplicate: the detector may use it as a sample, but it
		// neither moves the freshness point nor ends a suspicion
		// (docs/algorithms.md, “Replaying a trace”).
		p.det.Observe(hb)
		return nil
	}
	// With hysteresis (Low < High), the level this heartbeat arrived at,
	// before the detector takes it in: the level after it is about 0 for
	// every detector, so only this one can hold a suspicion.
	if p.status == Trusted && p.hasHigh && arrival > p.tauHigh {
		m.excused.Add(1) // late, but a conviction was held back
	}
	hyst, pre := p.hyst, 0.0
	if hyst && p.status == Suspected {
		pre = p.level(arrival)
	}
	p.det.Observe(hb)
	p.seen, p.last = true, arrival
	if b.HasSeq {
		p.seq, p.hasSeq = b.Seq, true
	}
	p.heartbeats++
	p.refresh()
	if p.status == Suspected {
		if lvl := p.level(arrival); lvl < p.low && (!hyst || pre < p.low) {
			p.emit(out, Suspected, Trusted, CauseHeartbeat, lvl, arrival, arrival)
		}
		return nil
	}
	// The new freshness point may already be past (τ < arrival).
	p.check(m, arrival, out)
	return nil
}

// refresh recomputes the freshness points after an accepted heartbeat.
func (p *peer) refresh() {
	p.tau, p.hasTau = p.det.FreshnessPoint()
	p.warm = p.det.WarmingUp()
	switch {
	case p.acc != nil && p.high == p.acc.Threshold():
		p.tauHigh, p.hasHigh = p.tau, p.hasTau
	case p.acc != nil:
		e, ok := p.acc.ElapsedFor(p.high)
		p.tauHigh, p.hasHigh = detector.AddSat(p.last, e), ok
	case !p.hasTau:
		p.hasHigh = false
	case p.high == 1 || p.tau <= p.last:
		p.tauHigh, p.hasHigh = p.tau, true
	default:
		span := float64(p.tau-p.last) * p.high
		if span >= math.MaxInt64 {
			p.tauHigh = math.MaxInt64
		} else {
			p.tauHigh = detector.AddSat(p.last, time.Duration(span))
		}
		p.hasHigh = true
	}
}

// check convicts a trusted peer whose freshness point at High has passed
// by more than the host's lateness bound, unless the monitor is in a
// local-pause grace period.
func (p *peer) check(m *Monitor, now time.Duration, out *transitions) {
	if p.status != Trusted || !p.hasHigh || now <= p.tauHigh || m.excuses(p.tauHigh, now) || m.held(now) {
		return
	}
	at := max(p.tauHigh, p.last)
	// A conviction held back by a grace period takes effect at its end.
	if pu := time.Duration(m.pauseUntil.Load()); at < pu {
		at = pu
	}
	p.emit(out, Trusted, Suspected, CauseFreshness, p.level(now), at, now)
}

func (p *peer) emit(out *transitions, from, to Status, c Cause, lvl float64, at, found time.Duration) {
	p.status = to
	p.trans++
	if to == Suspected {
		p.suspicions++
	}
	out.add(Transition{
		Peer: p.name, Incarnation: p.inc, Old: from, New: to, Cause: c,
		Level: lvl, At: at, Found: found, Number: p.trans,
		WarmingUp: to == Suspected && p.warm,
	})
}

// level is the suspicion level at now (package doc): never NaN or negative.
func (p *peer) level(now time.Duration) float64 {
	if !p.seen {
		return 0
	}
	if p.acc != nil {
		l := p.acc.Level(now)
		if math.IsNaN(l) || l < 0 {
			return 0
		}
		return l
	}
	if !p.hasTau {
		return 0
	}
	span := p.tau - p.last
	if span <= 0 {
		if now > p.tau {
			return math.Inf(1)
		}
		return 0
	}
	e := now - p.last
	if e <= 0 {
		return 0
	}
	return float64(e) / float64(span)
}

func (p *peer) state(now time.Duration) PeerState {
	return PeerState{
		Peer: p.name, Incarnation: p.inc, Status: p.status, Level: p.level(now),
		FreshnessPoint: p.tauHigh, HasFreshnessPoint: p.hasHigh,
		LastArrival: p.last, Heartbeats: p.heartbeats, Suspicions: p.suspicions,
		Transitions: p.trans, WarmingUp: p.warm, BackwardArrivals: p.backward, Now: now,
	}
}
