package swim

import (
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/phi"
)

// DefaultPeerWindow is the window of the default per-peer φ detector. It is
// small because a member hears from a given peer only a few times per pass
// of the probe list and because a group of n members keeps n−1 detectors.
const DefaultPeerWindow = 32

// DefaultPeerDetector returns the default per-peer detector: φ accrual, normal
// model (phi.Normal, docs/algorithms.md, “φ accrual: normal model”), threshold
// 8, a window of DefaultPeerWindow inter-arrival times, the package phi
// defaults otherwise.
func DefaultPeerDetector() (detector.Detector, error) {
	return phi.NewNormal(phi.NormalConfig{WindowSize: DefaultPeerWindow})
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

// heard feeds p's failure detector with a heartbeat at now.
func (m *Member) heard(now time.Duration, p *peer) {
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
	if p.rtt == nil {
		e, err := m.cfg.RTTEstimator()
		if err != nil || e == nil {
			m.stats.DetectorErrors++
			return
		}
		p.rtt = e
	}
	p.rtt.Observe(rtt)
}
