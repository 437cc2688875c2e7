package qos

import (
	"fmt"
	"math"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/phi"
)

// Range returns n parameter values from lo to hi inclusive, evenly spaced,
// or geometrically spaced when logScale is set (then lo must be > 0). n = 1
// gives lo.
func Range(lo, hi float64, n int, logScale bool) ([]float64, error) {
	switch {
	case n < 1:
		return nil, fmt.Errorf("qos: range needs at least 1 point, got %d", n)
	case math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0):
		return nil, fmt.Errorf("qos: range bounds %g..%g are not finite", lo, hi)
	case hi < lo:
		return nil, fmt.Errorf("qos: range upper bound %g is below lower bound %g", hi, lo)
	case logScale && lo <= 0:
		return nil, fmt.Errorf("qos: log-spaced range needs a lower bound > 0, got %g", lo)
	}
	v := make([]float64, n)
	if n == 1 {
		v[0] = lo
		return v, nil
	}
	for i := range v {
		f := float64(i) / float64(n-1)
		switch r, d := hi/lo, hi-lo; {
		case logScale && math.IsInf(r, 0):
			// hi/lo overflows (1e-300..1e300): interpolate the logarithms.
			v[i] = math.Exp(math.Log(lo) + (math.Log(hi)-math.Log(lo))*f)
		case logScale:
			v[i] = lo * math.Pow(r, f)
		case math.IsInf(d, 0):
			v[i] = lo*(1-f) + hi*f // hi − lo overflows
		default:
			v[i] = lo + d*f
		}
	}
	v[0], v[n-1] = lo, hi
	return v, nil
}

// DurationRange is Range for durations: n values from lo to hi inclusive,
// evenly or geometrically spaced, rounded to the nanosecond.
func DurationRange(lo, hi time.Duration, n int, logScale bool) ([]time.Duration, error) {
	v, err := Range(float64(lo), float64(hi), n, logScale)
	if err != nil {
		return nil, err
	}
	d := make([]time.Duration, n)
	for i, x := range v {
		d[i] = time.Duration(math.Round(x))
	}
	return d, nil
}

func durMS(v float64) time.Duration { return detector.RoundNanos(v * float64(time.Millisecond)) }

// msValues returns durations as parameter values in milliseconds.
func msValues(ds []time.Duration) []float64 {
	v := make([]float64, len(ds))
	for i, d := range ds {
		v[i] = float64(d) / float64(time.Millisecond)
	}
	return v
}

// FixedFamily sweeps the fixed timeout T over timeouts: τ = T_last + T
// (docs/algorithms.md, “Fixed timeout”), linear in T. Point values are in
// milliseconds.
func FixedFamily(timeouts []time.Duration) Family {
	return FixedFamilyWith(detector.FixedConfig{}, timeouts)
}

// FixedFamilyWith is FixedFamily with the other settings from cfg (its
// RestartJump; cfg.Timeout is replaced by each point's).
func FixedFamilyWith(cfg detector.FixedConfig, timeouts []time.Duration) Family {
	return Family{
		Name: "fixed", Param: "timeout", Unit: "ms", Values: msValues(timeouts),
		New: func(v float64) (detector.Detector, error) {
			if v <= 0 {
				return nil, fmt.Errorf("timeout %g ms must be positive", v)
			}
			c := cfg
			c.Timeout = new(durMS(v))
			return detector.NewFixed(c)
		},
		Linear: func(v float64) float64 { return float64(durMS(v)) },
	}
}

// JacobsonFamily sweeps Jacobson's deviation multiplier K over ks with the
// other settings from cfg (docs/algorithms.md, “Jacobson's estimator”): τ =
// T_last + SRTT + K·RTTVAR, linear in K while no clamp is active. The first
// heartbeat of a stream is always excluded (its τ rests on TO_init, not on K).
func JacobsonFamily(cfg jacobson.Config, ks []float64) Family {
	return Family{
		Name: "jacobson", Param: "k", Values: ks, WarmUp: 1,
		New: func(v float64) (detector.Detector, error) {
			c := cfg
			c.K = &v
			return jacobson.New(c)
		},
		Linear: func(v float64) float64 { return v },
	}
}

// ChenFamily sweeps Chen's safety margin α ≥ 0 over alphas with the other
// settings from cfg (docs/algorithms.md, “Chen's NFD-E”): τ = EA_{ℓ+1} + α,
// linear in α. Point values are in milliseconds.
func ChenFamily(cfg chen.Config, alphas []time.Duration) Family {
	return Family{
		Name: "chen", Param: "alpha", Unit: "ms", Values: msValues(alphas),
		New: func(v float64) (detector.Detector, error) {
			if v < 0 {
				return nil, fmt.Errorf("margin %g ms is negative", v)
			}
			c := cfg
			c.Margin = new(durMS(v))
			return chen.New(c)
		},
		Linear: func(v float64) float64 { return float64(durMS(v)) },
	}
}

// PhiNormalFamily sweeps the threshold Θ of the normal-model φ detector
// (docs/algorithms.md, “φ accrual: normal model”) with the other settings from
// cfg: τ = T_last + μ + σ_eff·z(Θ), linear in z(Θ) (phi.ZOfLevel) when
// cfg.SkipIfSuspected is off (new(false)): Sweep then computes the curve in
// one pass (method OnePass). With it on (phi's default, against learning
// outages) an interval is left out when its arrival is after τ, so the
// history depends on Θ; Sweep computes the curve in one pass anyway:
// thresholds whose replays have left out the same intervals share one
// history, which splits at an arrival between its thresholds' freshness
// points and joins again once the histories agree. With the default
// warm-up (MinSamples at most 2), the same for every threshold, the
// histories are kept side by side (phi.NormalHistories) and everything
// else a replay does is done once for all thresholds (method SharedState);
// with a longer one, each group of thresholds is replayed on its own
// (method OnePassGroups), and past a quarter as many groups as thresholds
// Sweep gives that pass up and replays each threshold. Either result equals
// one replay per threshold in every field. Thresholds must be at least
// log10 2 (z ≥ 0).
func PhiNormalFamily(cfg phi.NormalConfig, thresholds []float64) Family {
	f := Family{
		Name: "phi-normal", Param: "threshold", Values: thresholds, Min: math.Log10(2),
		New: func(v float64) (detector.Detector, error) {
			if v < math.Log10(2) {
				return nil, fmt.Errorf("threshold %g is below log10 2 (the crossing would precede the mean)", v)
			}
			c := cfg
			c.Threshold = v
			return phi.NewNormal(c)
		},
	}
	if cfg.SkipIfSuspected != nil && !*cfg.SkipIfSuspected {
		f.Linear = phi.ZOfLevel
		return f
	}
	if sharedWarmUp(cfg) {
		f.onePass = func(values []float64, hbs Source, rc Config) ([]*Point, error) {
			return sweepNormalShared(cfg, values, hbs, rc)
		}
		f.method = SharedState
		return f
	}
	m := normalGroups(cfg)
	f.onePass = func(values []float64, hbs Source, rc Config) ([]*Point, error) {
		return sweepGroups(m, values, hbs, rc)
	}
	f.method = OnePassGroups
	return f
}

// PhiAkkaFamily sweeps the threshold Θ of Akka's φ model (docs/algorithms.md,
// “φ accrual: Akka's variant”) with the other settings from cfg. The history
// depends on Θ (an interval is recorded only while φ at its arrival is below
// Θ), so the curve is not linear; Sweep computes it in one pass anyway (method
// OnePassGroups): thresholds whose replays have recorded the same intervals
// share one detector, and a group splits at an arrival whose φ lies between its
// thresholds. The result equals one replay per threshold in every field; Sweep
// falls back to that when a value is not a valid threshold or the stream leaves
// the range the pass handles (crossings or arrivals beyond 2^53 ns). Groups
// split only at mistakes, so they are few with Akka's defaults; the pass keeps
// 16 bytes per evaluated heartbeat per group alive (at most one group per
// threshold: about 20 on heavily jittered traces with no acceptable pause and a
// 10 ms minimum deviation).
func PhiAkkaFamily(cfg phi.AkkaConfig, thresholds []float64) Family {
	return Family{
		Name: "phi-akka", Param: "threshold", Values: thresholds,
		New: func(v float64) (detector.Detector, error) {
			if v <= 0 {
				return nil, fmt.Errorf("threshold %g must be positive", v)
			}
			c := cfg
			c.Threshold = v
			return phi.NewAkka(c)
		},
		onePass: func(values []float64, hbs Source, rc Config) ([]*Point, error) {
			return sweepGroups(akkaGroups(cfg), values, hbs, rc)
		},
		method: OnePassGroups,
	}
}

// PhiCassandraFamily sweeps the threshold Θ of Cassandra's exponential φ model
// (docs/algorithms.md, “φ accrual: Cassandra's variant”) with the other
// settings from cfg: τ = T_last + Θ·μ·ln 10, linear in Θ.
func PhiCassandraFamily(cfg phi.CassandraConfig, thresholds []float64) Family {
	return Family{
		Name: "phi-cassandra", Param: "threshold", Values: thresholds,
		New: func(v float64) (detector.Detector, error) {
			if v <= 0 {
				return nil, fmt.Errorf("threshold %g must be positive", v)
			}
			c := cfg
			c.Threshold = v
			return phi.NewCassandra(c)
		},
		Linear: func(v float64) float64 { return v },
	}
}

// BertierFamily is Bertier, Marin and Sens's detector with the settings of cfg
// (docs/algorithms.md, “Bertier's adaptive margin”). It has no free parameter:
// the family is a single point (Value 0, Param empty).
func BertierFamily(cfg bertier.Config) Family {
	return Family{
		Name: "bertier", Values: []float64{0},
		New: func(float64) (detector.Detector, error) { return bertier.New(cfg) },
	}
}
