package qos

import (
	"fmt"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agreementTraces are small generated traces that exercise jitter, loss,
// duplicates and reordering (stale heartbeats).
func agreementTraces() map[string][]detector.Heartbeat {
	return map[string][]detector.Heartbeat{
		"jitter-loss": generate(genOpts{n: 1500, interval: ms(100), delay: ms(40), spread: ms(15), loss: 0.05, seed: 1}),
		"dup-reorder": generate(genOpts{n: 1500, interval: ms(100), delay: ms(30), spread: ms(5), loss: 0.02, dup: 0.03, pause: 0.02, seed: 2}),
	}
}

// checkAgainstReference replays hbs with ReplaySlice and with the 1 ms reference
// replay and requires them to agree within the tick: at every tick that is
// not an endpoint of a mistake interval, the reference's output equals
// "inside one of ReplaySlice's mistake intervals"; suspected times differ by at
// most one tick per mistake interval; mistake counts differ by at most the
// number of suspect or trust periods shorter than a tick (which a 1 ms grid
// cannot see).
func checkAgainstReference(t *testing.T, newDet func() detector.Detector, hbs []detector.Heartbeat, warmUp int) Result {
	t.Helper()
	const tick = time.Millisecond
	fast, err := ReplaySlice(newDet(), hbs, Config{WarmUp: warmUp, RecordMistakes: true})
	require.NoError(t, err)
	ref, ok := referenceReplay(newDet(), hbs, warmUp, tick)
	require.True(t, ok)
	require.Equal(t, fast.Start, ref.start, "evaluation starts at the same heartbeat")
	require.Len(t, fast.MistakeIntervals, fast.Mistakes)

	iv := fast.MistakeIntervals
	j, mismatches := 0, 0
	for i, got := range ref.samples {
		now := ref.start + time.Duration(i)*tick
		for j < len(iv) && iv[j].End < now {
			j++
		}
		if j < len(iv) && (now == iv[j].Start || now == iv[j].End) {
			continue
		}
		want := j < len(iv) && iv[j].Start < now && now < iv[j].End
		if got != want {
			mismatches++
			if mismatches < 5 {
				t.Errorf("at %v: reference suspected=%v, replay says %v", now, got, want)
			}
		}
	}
	assert.Zero(t, mismatches)

	short := 0
	for k, x := range iv {
		if x.End-x.Start < tick {
			short++
		}
		if k > 0 && x.Start-iv[k-1].End < tick {
			short++
		}
	}
	assert.LessOrEqual(t, abs(fast.Mistakes-ref.mistakes), short, "mistakes: replay %d, reference %d", fast.Mistakes, ref.mistakes)
	assert.LessOrEqual(t, absD(fast.Suspected-ref.suspected), time.Duration(len(iv)+1)*tick,
		"suspected: replay %v, reference %v", fast.Suspected, ref.suspected)
	return fast
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func absD(x time.Duration) time.Duration {
	if x < 0 {
		return -x
	}
	return x
}

// checkFastSweep requires the one-pass sweep of f to equal one replay per
// point: same mistakes, suspected time within 2 ns per mistake (freshness
// points are rounded to the nanosecond by detectors, not by the one-pass
// formulas), TD within 2 ns.
func checkFastSweep(t *testing.T, f Family, hbs []detector.Heartbeat) {
	t.Helper()
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	fast, err := Sweep(streams, []Family{f}, SweepConfig{})
	require.NoError(t, err)
	slow, err := Sweep(streams, []Family{f}, SweepConfig{PerPointOnly: true})
	require.NoError(t, err)
	require.Empty(t, fast[0].Err)
	require.Empty(t, slow[0].Err)
	require.Equal(t, OnePass, fast[0].Method, "%s must be computed in one pass", f.Name)
	require.Equal(t, PerPoint, slow[0].Method)
	require.Len(t, fast[0].Points, len(f.Values))
	require.Len(t, slow[0].Points, len(f.Values))
	sawMistakes := false
	for i := range f.Values {
		a, b := fast[0].Points[i], slow[0].Points[i]
		msg := fmt.Sprintf("%s %s=%g", f.Name, f.Param, f.Values[i])
		assert.Equal(t, b.Mistakes, a.Mistakes, msg)
		tol := time.Duration(2*(b.Mistakes+1)) * time.Nanosecond
		assert.InDelta(t, float64(b.Suspected), float64(a.Suspected), float64(tol), msg)
		for _, p := range [][2]time.Duration{{a.TD.Mean, b.TD.Mean}, {a.TD.P50, b.TD.P50}, {a.TD.P99, b.TD.P99}, {a.TD.Max, b.TD.Max}, {a.LastTD, b.LastTD}} {
			assert.InDelta(t, float64(p[1]), float64(p[0]), 2, msg)
		}
		assert.Equal(t, b.Evaluated, a.Evaluated, msg)
		assert.Equal(t, b.Span, a.Span, msg)
		assert.Equal(t, b.TDBasis, a.TDBasis, msg)
		if b.Mistakes > 0 {
			sawMistakes = true
		}
	}
	assert.True(t, sawMistakes, "the sweep should reach settings with mistakes, or the comparison is weak")
}

func TestFixedAgreesWithReference(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			for _, T := range []time.Duration{ms(105), ms(150), ms(250)} {
				checkAgainstReference(t, func() detector.Detector { return newFixed(t, T) }, hbs, 0)
			}
		})
	}
}

func TestFixedFastSweepEqualsReplays(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			checkFastSweep(t, FixedFamily(durs(mustRange(t, 90, 400, 25, false))), hbs)
		})
	}
}

func newJacobson(t *testing.T, k float64) detector.Detector {
	t.Helper()
	d, err := jacobson.New(jacobson.Config{K: new(k), InitialTimeout: new(ms(300))})
	require.NoError(t, err)
	return d
}

func TestJacobsonAgreesWithReference(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			for _, k := range []float64{1, 4} {
				checkAgainstReference(t, func() detector.Detector { return newJacobson(t, k) }, hbs, 1)
			}
		})
	}
}

func TestJacobsonFastSweepEqualsReplays(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			checkFastSweep(t, JacobsonFamily(jacobson.Config{InitialTimeout: new(ms(300))}, mustRange(t, 0.25, 8, 20, false)), hbs)
		})
	}
	// With a clamp the form is not linear: the sweep falls back to replays.
	f := JacobsonFamily(jacobson.Config{MinTimeout: ms(150)}, []float64{1, 2})
	c, err := Sweep([]Stream{{Heartbeats: agreementTraces()["jitter-loss"]}}, []Family{f}, SweepConfig{})
	require.NoError(t, err)
	assert.Equal(t, PerPoint, c[0].Method)
	assert.Len(t, c[0].Points, 2)
}
