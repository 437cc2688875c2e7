package qos

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/require"
)

func ms(x float64) time.Duration { return time.Duration(math.Round(x * float64(time.Millisecond))) }

func toMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// example95 is the trace of docs/algorithms.md, “Replaying a trace”: Δ = 100
// ms, σ = 100·s, heartbeat 7 lost.
func example95() []detector.Heartbeat {
	arr := map[uint64]float64{1: 120, 2: 225, 3: 318, 4: 440, 5: 522, 6: 630, 8: 835, 9: 990, 10: 1021}
	var hbs []detector.Heartbeat
	for s := uint64(1); s <= 10; s++ {
		a, ok := arr[s]
		if !ok {
			continue
		}
		hbs = append(hbs, detector.Heartbeat{Seq: s, HasSeq: true, Sent: ms(100 * float64(s)), HasSent: true, Arrival: ms(a)})
	}
	return hbs
}

// genOpts shapes a small synthetic trace for engine tests (independent of
// package trace, so that the engine is tested on inputs it fully controls).
type genOpts struct {
	n        int
	interval time.Duration
	delay    time.Duration // mean one-way delay
	spread   time.Duration // s.d. of the delay (normal, clipped at 0)
	loss     float64       // Bernoulli loss probability
	dup      float64       // probability that a heartbeat is delivered twice
	pause    float64       // probability of a long extra delay (reordering)
	seed     uint64
}

func generate(o genOpts) []detector.Heartbeat {
	rng := rand.New(rand.NewPCG(o.seed, 0x9e3779b97f4a7c15))
	var hbs []detector.Heartbeat
	for i := range o.n {
		sent := time.Duration(i+1) * o.interval
		if rng.Float64() < o.loss {
			continue
		}
		d := time.Duration(float64(o.delay) + rng.NormFloat64()*float64(o.spread))
		if o.pause > 0 && rng.Float64() < o.pause {
			d += time.Duration(rng.Float64() * 5 * float64(o.interval))
		}
		d = max(d, 0)
		hb := detector.Heartbeat{Seq: uint64(i), HasSeq: true, Sent: sent, HasSent: true, Arrival: sent + d}
		hbs = append(hbs, hb)
		if o.dup > 0 && rng.Float64() < o.dup {
			hb.Arrival += time.Duration(rng.Float64() * float64(o.interval))
			hbs = append(hbs, hb)
		}
	}
	slices.SortStableFunc(hbs, func(a, b detector.Heartbeat) int { return cmp.Compare(a.Arrival, b.Arrival) })
	return hbs
}

func mustRange(t interface{ Fatalf(string, ...any) }, lo, hi float64, n int, logScale bool) []float64 {
	v, err := Range(lo, hi, n, logScale)
	if err != nil {
		t.Fatalf("range: %v", err)
	}
	return v
}

// durs converts milliseconds to durations.
func durs(msv []float64) []time.Duration {
	d := make([]time.Duration, len(msv))
	for i, v := range msv {
		d[i] = ms(v)
	}
	return d
}

// requireSameAsPerPoint requires f's sweep over streams (one stream) to use
// method and to equal one replay per point in every field of every point,
// and returns the per-point curve; label formats a parameter value for the
// failure message.
func requireSameAsPerPoint(t *testing.T, f Family, streams []Stream, cfg Config, method Method, label string) Curve {
	t.Helper()
	fast, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg})
	require.NoError(t, err)
	slow, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg, PerPointOnly: true})
	require.NoError(t, err)
	require.Empty(t, slow[0].Err)
	require.Empty(t, fast[0].Err)
	require.Equal(t, method, fast[0].Method)
	require.Equal(t, PerPoint, slow[0].Method)
	require.Len(t, fast[0].Points, len(f.Values))
	for i := range f.Values {
		require.Equal(t, slow[0].Points[i], fast[0].Points[i], label, f.Values[i])
	}
	return slow[0]
}

// sweepReplayConfigs are the replay settings the exactness tests of the
// Akka and SFD sweeps cover: defaults, warm-up with recorded mistake
// intervals, confidence intervals (their per-cell breakdown is compared
// too), and both forced clock modes (unsynchronized with d̄).
var sweepReplayConfigs = []Config{
	{},
	{WarmUp: 37, RecordMistakes: true},
	{WarmUp: 37, RecordMistakes: true, Intervals: true},
	{Clock: ClockUnsynchronized, DelayOffset: ms(12)},
	{Clock: ClockSynchronized, RecordMistakes: true},
}
