package swim

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/phi"
)

// Defaults of the per-peer φ detector (DefaultPeerDetectorFor), in protocol
// periods where they are times.
const (
	// DefaultPeerWindow is the window of the default per-peer φ detector. It
	// is small because a member hears from a given peer only a few times per
	// pass of the probe list and because a group of n members keeps n−1
	// detectors.
	DefaultPeerWindow = 32
	// DefaultPeerPausePeriods is the acceptable pause of the default per-peer
	// φ detector in protocol periods: Akka's acceptable-heartbeat-pause of
	// its cluster failure detector (3 s at a heartbeat interval of 1 s),
	// with the protocol period as the heartbeat interval.
	DefaultPeerPausePeriods = 3
	// DefaultPeerMinStdDevDivisor sets the σ floor of the default per-peer φ
	// detector to the protocol period divided by it: Akka's
	// min-std-deviation of its cluster failure detector (100 ms at a
	// heartbeat interval of 1 s).
	DefaultPeerMinStdDevDivisor = 10
	// DefaultPeerMinSamples is the number of inter-arrival times the
	// default per-peer detector needs before it stops WarmingUp and its
	// opinion counts (PeerStatus.Suspected, the ModeDetector gate). A
	// detector on its bootstrap or on a few intervals is past Θ for more
	// than half of the healthy peers of a group of 32 twenty seconds after
	// it formed; with phi's default of 2, warmed-up detectors still
	// suspected 16 of 992 healthy pairs a minute in, with 8 none did
	// (swim/sim TestPeerDetectorWarmUp; docs/experiments.md, “The detector
	// gate, warm-up and the retry”).
	DefaultPeerMinSamples = 8
)

// DefaultPeerDetector returns the per-peer detector a Member with the
// default ProbeInterval (1 s) uses: DefaultPeerDetectorFor(DefaultProbeInterval).
func DefaultPeerDetector() (detector.Detector, error) {
	return DefaultPeerDetectorFor(DefaultProbeInterval)()
}

// DefaultPeerDetectorFor returns a factory of the default per-peer detector
// for a protocol period (Config.ProbeInterval; a Member whose
// Config.PeerDetector is nil uses DefaultPeerDetectorFor(ProbeInterval)):
// φ accrual, normal model (phi.Normal, docs/algorithms.md, “φ accrual:
// normal model”), threshold Θ = 8, a window of DefaultPeerWindow
// inter-arrival times, and Akka's widening of the model (docs/algorithms.md,
// “φ accrual: Akka's variant”) scaled to the period P:
//
//   - σ_min = P/DefaultPeerMinStdDevDivisor (100 ms at P = 1 s) and an
//     acceptable pause of DefaultPeerPausePeriods·P (3 s at 1 s), Akka's
//     cluster defaults with P as the heartbeat interval, so that
//     τ = T_last + μ + 3P + max(σ, P/10)·z(8), z(8) = 5.612: after a
//     perfectly regular rhythm (σ = 0) a peer is suspected 4.56 P after it
//     was last heard at one heartbeat per period. A member hears a given
//     peer irregularly, from its own probes, the peer's and relays: in a
//     shuffled round-robin (Config.ShuffledProbes) two probes of one
//     target are 1 to 2(n−1)−1 periods apart, and on the ring once per
//     n−1 rounds until a member joins or leaves and the ring's length
//     changes, so a pair or a trio heard at an exact 1 s rhythm is then
//     heard after 2 or 3 s as soon as a member joins (or, shuffled, a
//     round reshuffles). With the phi package's defaults (σ_min = μ/100, no pause)
//     such a gap gave φ ≈ 2·10³ (z = 100 at 2 s): the detectors of a
//     small group at a steady rhythm suspected healthy peers, the
//     ModeDetector gate stopped forgiving their failed probes, and Level
//     and Members misled operators. The pause widens a learnt distribution whatever its
//     spread; in a larger group σ, learnt from the irregular rhythm, is the
//     larger term.
//   - SkipIfSuspected off: every interval is recorded. The rhythm at which
//     a member hears a peer changes with the group size (about every
//     (n−1)/2 periods), and with Akka's rule (meant for a sender at a fixed
//     rate) a rhythm that moved past τ was never learnt: a group that grew
//     left its detectors suspecting their live peers between any two
//     heartbeats. The price is that a peer's pause widens its distribution
//     until DefaultPeerWindow later intervals have pushed it out.
//   - BootstrapInterval P: before two intervals, μ = P, σ = P/4.
//   - MinSamples DefaultPeerMinSamples: WarmingUp until the window holds
//     that many intervals; a warming-up detector has no say in the gate.
//
// The factory returns an error only for a period that is not positive; the
// pause saturates at about 36.5 years (the bound on every timer of a
// Member). Each call returns a new detector; a detector is not safe for
// concurrent use.
func DefaultPeerDetectorFor(period time.Duration) func() (detector.Detector, error) {
	pause := mulTimer(period, DefaultPeerPausePeriods) // saturated at maxTimer
	return func() (detector.Detector, error) {
		if period <= 0 {
			return nil, fmt.Errorf("swim: peer detector period %v is not positive", period)
		}
		return phi.NewNormal(phi.NormalConfig{
			WindowSize:        DefaultPeerWindow,
			MinStdDev:         new(period / DefaultPeerMinStdDevDivisor),
			AcceptablePause:   &pause,
			BootstrapInterval: &period,
			SkipIfSuspected:   new(false),
			MinSamples:        new(DefaultPeerMinSamples),
		})
	}
}

// FixedPeerDetector returns a factory of fixed-timeout per-peer detectors
// (docs/algorithms.md, “Fixed timeout”): a peer is suspected by its detector
// when nothing was heard from it for longer than timeout.
func FixedPeerDetector(timeout time.Duration) func() (detector.Detector, error) {
	return func() (detector.Detector, error) {
		return detector.NewFixed(detector.FixedConfig{Timeout: &timeout})
	}
}

// jacobsonRTT is the default RTTEstimator: the Jacobson/Karels filter of
// RFC 6298 over ack round-trip times, timeout SRTT + K·RTTVAR
// (docs/algorithms.md, “Jacobson's estimator”).
type jacobsonRTT struct {
	est *jacobson.Estimator
	k   float64
}

func newJacobsonRTT(k float64) (RTTEstimator, error) {
	e, err := jacobson.NewEstimator(jacobson.EstimatorConfig{})
	if err != nil {
		return nil, err
	}
	return &jacobsonRTT{est: e, k: k}, nil
}

func (j *jacobsonRTT) Observe(rtt time.Duration) { j.est.Update(rtt) }

func (j *jacobsonRTT) Timeout() (time.Duration, bool) {
	if j.est.Samples() == 0 {
		return 0, false
	}
	return j.est.Timeout(j.k), true
}

// levelOf returns an accrual detector's level, or for a binary detector 0
// while it trusts and 1 once it suspects.
func levelOf(d detector.Detector, now time.Duration) float64 {
	if a, ok := d.(detector.Accrual); ok {
		return a.Level(now)
	}
	if d.Suspected(now) {
		return 1
	}
	return 0
}

// heard records evidence that p is alive at now: a heartbeat for its
// failure detector, and, within a protocol period of a stream ping p
// refused, that p lives without accepting streams (peer.noStream). Heard
// only later, p may have been down when it refused (restarting), and its
// refusals keep counting (TestGateRefusalBeforeRestartStillCounts).
func (m *Member) heard(now time.Duration, p *peer) {
	if p.streamRefused { // after refusing a stream ping (StreamFailed)
		p.streamRefused = false
		if now-p.refusedAt <= m.period() {
			p.noStream = true
		}
	}
	if p.det == nil {
		d, err := m.cfg.PeerDetector()
		if err != nil || d == nil {
			m.stats.DetectorErrors++
			return
		}
		p.det = d
	}
	p.det.Observe(detector.Heartbeat{Arrival: now})
}

func (m *Member) observeRTT(p *peer, rtt time.Duration) {
	if m.ensureRTT(&p.rtt) {
		p.rtt.Observe(rtt)
	}
	if m.ensureRTT(&m.probing.rttAll) {
		m.probing.rttAll.Observe(rtt)
	}
}

// ensureRTT makes *e with Config.RTTEstimator when it is nil; false when
// that fails (counted in Stats.DetectorErrors).
func (m *Member) ensureRTT(e *RTTEstimator) bool {
	if *e != nil {
		return true
	}
	x, err := m.cfg.RTTEstimator()
	if err != nil || x == nil {
		m.stats.DetectorErrors++
		return false
	}
	*e = x
	return true
}
