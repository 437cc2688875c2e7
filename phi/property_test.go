package phi_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// models returns fresh detectors of every model and configuration the
// property tests cover.
func models(t *testing.T) map[string]detector.Accrual {
	t.Helper()
	m := map[string]detector.Accrual{}
	add := func(name string, d detector.Accrual, err error) {
		require.NoError(t, err, name)
		m[name] = d
	}
	n, err := phi.NewNormal(phi.NormalConfig{WindowSize: 50, BootstrapInterval: 100 * time.Millisecond})
	add("normal", n, err)
	n, err = phi.NewNormal(phi.NormalConfig{WindowSize: 20, Threshold: 3, SkipIfSuspected: true,
		MaxInterval: time.Second, DivideBySeqGap: true, MinStdDev: 2 * time.Millisecond})
	add("normal-remedies", n, err)
	n, err = phi.NewNormal(phi.NormalConfig{WindowSize: 200, Threshold: 250})
	add("normal-250", n, err)
	a, err := phi.NewAkka(phi.AkkaConfig{})
	add("akka", a, err)
	a, err = phi.NewAkka(phi.AkkaConfig{MaxSampleSize: 30, Threshold: 2, AcceptableHeartbeatPause: -1,
		MinStdDeviation: time.Millisecond, FirstHeartbeatEstimate: 100 * time.Millisecond})
	add("akka-tight", a, err)
	c, err := phi.NewCassandra(phi.CassandraConfig{})
	add("cassandra", c, err)
	c, err = phi.NewCassandra(phi.CassandraConfig{WindowSize: 10, Threshold: 1, MaxInterval: -1})
	add("cassandra-uncapped", c, err)
	return m
}

// randomTrace returns heartbeats with jitter, duplicates, stale and
// out-of-order sequence numbers, backwards arrivals, loss bursts and
// occasional gaps of hours.
func randomTrace(r *rand.Rand, n int) []detector.Heartbeat {
	var out []detector.Heartbeat
	at := time.Duration(r.Int64N(int64(time.Second)))
	seq := uint64(r.IntN(3))
	for range n {
		switch k := r.IntN(100); {
		case k < 5: // loss burst
			seq += uint64(2 + r.IntN(20))
			at += time.Duration(2+r.IntN(20)) * 100 * time.Millisecond
		case k < 6: // gap of hours
			seq++
			at += time.Duration(1+r.IntN(5)) * time.Hour
		default:
			seq++
			at += time.Duration(max(0, 100e6+r.NormFloat64()*20e6))
		}
		h := detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at}
		switch k := r.IntN(100); {
		case k < 5: // without sequence number
			h.HasSeq = false
		case k < 8: // duplicate after it
			out = append(out, h)
		case k < 10: // stale: an older number arrives late
			out = append(out, h)
			h.Seq -= uint64(1 + r.IntN(3))
			h.Arrival += time.Millisecond
		case k < 12: // the monitor's clock goes backwards
			out = append(out, h)
			h.Seq++
			seq++
			h.Arrival -= time.Duration(r.Int64N(int64(50 * time.Millisecond)))
		}
		out = append(out, h)
	}
	return out
}

// bisectElapsed returns the smallest elapsed e ≥ 0 (to the nanosecond) with
// Level(last+e) ≥ level, searching up to hi.
func bisectElapsed(d detector.Accrual, last time.Duration, level float64, hi time.Duration) time.Duration {
	lo := time.Duration(-1) // Level(last+lo) < level by convention
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if d.Level(last+mid) >= level {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func TestAccrualProperties(t *testing.T) {
	for name, d := range models(t) {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(42, uint64(len(name))))
			th := d.Threshold()
			checked, linear := 0, 0
			for i, h := range randomTrace(r, 400) {
				d.Observe(h)
				tau, ok := d.FreshnessPoint()
				require.True(t, ok)
				e, ok := d.ElapsedFor(th)
				require.True(t, ok)
				last := tau - e

				// Level: non-decreasing in now, never NaN or negative.
				prev := -1.0
				for _, frac := range []float64{-0.5, 0, 0.1, 0.5, 0.9, 0.99, 1, 1.01, 1.5, 3, 100} {
					now := last + time.Duration(frac*float64(e))
					l := d.Level(now)
					require.False(t, math.IsNaN(l), "step %d", i)
					require.GreaterOrEqual(t, l, 0.0)
					require.GreaterOrEqual(t, l, prev, "step %d, %v after T_last", i, now-last)
					prev = l
					// Suspected(now) ⇔ now > τ.
					require.Equal(t, now > tau, d.Suspected(now))
				}
				// Linear form: τ = Offset + Scale·p, p = z(Θ) or Θ.
				if lin, ok := d.(detector.Linear); ok {
					if off, scale, ok := lin.LinearForm(); ok {
						p := th
						if _, normal := d.(*phi.Normal); normal {
							p = phi.ZOfLevel(th)
						}
						want := float64(off) + scale*p
						// τ is rounded up and Offset rounded: at most 1.5 ns apart.
						assert.InDelta(t, want, float64(tau), 1.5+1e-15*math.Abs(want), "step %d", i)
						linear++
					}
				}
				// τ is where the level reaches Θ, to the nanosecond.
				if e > 0 {
					assert.GreaterOrEqual(t, d.Level(tau), th*(1-1e-12), "step %d", i)
					assert.Less(t, d.Level(tau-1), th*(1+1e-12), "step %d", i)
				}
				// The closed form agrees with bisection on Level.
				if i%10 == 0 {
					for range 5 {
						level := 0.5 + r.Float64()*299.5
						ef, ok := d.ElapsedFor(level)
						if !ok {
							continue
						}
						eb := bisectElapsed(d, last, level, ef+time.Second)
						assert.InDelta(t, float64(eb), float64(ef), 1, "step %d level %v", i, level)
						checked++
					}
				}
			}
			assert.Greater(t, checked, 100)
			if _, ok := d.(detector.Linear); ok && name != "normal-remedies" {
				assert.Greater(t, linear, 100)
			}
		})
	}
}
