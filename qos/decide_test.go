package qos

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/satzger"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// raceFree skips a test under -race -short: the Decide tests run
// single-goroutine statistics (their sweeps with one worker), 20 to 150
// times slower under the race detector (TestDecideEquivalence: 0.9 s
// without, 133 s with it at load average 25), which finds nothing there;
// the sweeps' concurrency is raced by the sweep tests. .ci/run runs these
// tests once more without -race, so CI still checks them.
func raceFree(t *testing.T) {
	t.Helper()
	if testing.Short() && raceOn {
		t.Skip("single-goroutine statistics, 20-150x slower under -race: .ci/run runs it without -race")
	}
}

// decideSim decides between noisy timeouts "a" (noise sA, swept at
// aVals) and "b" (noise sB, 20..200 ms) on a simulated stream of n
// heartbeats (seed 7).
func decideSim(t *testing.T, n int, sA, sB time.Duration, aVals []float64, tg Targets, opt DecideConfig) Verdict {
	t.Helper()
	hbs := simStream(n, simInterval, simC0, simM, 7)
	a := noisyFamily("a", simInterval, sA, 1, 20, 200, 2)
	a.Values = aVals
	fams := []Family{a, noisyFamily("b", simInterval, sB, 2, 20, 200, 40)}
	opt.Sweep.Workers = 1
	v, err := Decide(Stream{Name: "s", Heartbeats: hbs}, fams, nil, tg, opt)
	require.NoError(t, err)
	return v
}

// The operating point does not depend on the sweep grid: a log grid of 25
// values and a linear one of 61 around the answer give the same setting
// (within the solver's TD tolerance), the same best family and the same
// re-solved interval, though the points the two grids hold differ.
func TestDecideGridIndependent(t *testing.T) {
	raceFree(t)
	tg := Targets{MaxMRPerSecond: simMR}
	logVals := mustRange(t, 1, 2000, 25, true)
	coarse := decideSim(t, 9000, simSA, simSA, logVals, tg, DecideConfig{Holdout: -1})
	fine := decideSim(t, 9000, simSA, simSA, mustRange(t, 80, 110, 61, false), tg, DecideConfig{Holdout: -1})
	a, b := coarse.Ops[0], fine.Ops[0]
	require.True(t, a.Found && b.Found)
	assert.InDelta(t, float64(a.Point.TD.Mean), float64(b.Point.TD.Mean), float64(solveTDTolerance))
	assert.Equal(t, a.Point.Mistakes, b.Point.Mistakes)
	assert.Equal(t, coarse.Best, fine.Best)
	assert.InDelta(t, float64(a.TDCI[0]), float64(b.TDCI[0]), float64(time.Millisecond))
	assert.InDelta(t, float64(a.TDCI[1]), float64(b.TDCI[1]), float64(time.Millisecond))
	assert.NotContains(t, logVals, a.Point.Value, "the setting is solved, not a grid point")
	// The setting just meets the target: a slightly smaller one does not.
	assert.LessOrEqual(t, a.Point.MRPerSecond, simMR)
}

// A TD difference whose settings rest on few mistakes has an interval of
// non-zero width: the bootstrap re-solves each setting, so the interval
// carries the uncertainty of the MR estimate (comparing fixed settings,
// a shift of the margin moves every TD alike and the interval collapses).
func TestDecideIntervalIncludesChoice(t *testing.T) {
	raceFree(t)
	v := decideSim(t, 6000, simSA, simSA, mustRange(t, 20, 200, 40, false), Targets{MaxMRPerSecond: simMR}, DecideConfig{Holdout: -1})
	require.GreaterOrEqual(t, v.Best, 0)
	require.Len(t, v.Rivals, 1)
	rv := v.Rivals[0]
	assert.Greater(t, rv.TDDiffCI[1]-rv.TDDiffCI[0], time.Millisecond, "%v", rv.TDDiffCI)
	assert.LessOrEqual(t, rv.TDDiffCI[0], rv.TDDiff, "the interval holds the solved difference")
	assert.GreaterOrEqual(t, rv.TDDiffCI[1], rv.TDDiff)
	best := v.Ops[v.Best]
	assert.Greater(t, best.TDCI[1]-best.TDCI[0], 2*time.Millisecond)
	assert.LessOrEqual(t, best.TDCI[0], best.Point.TD.Mean)
	assert.GreaterOrEqual(t, best.TDCI[1], best.Point.TD.Mean)
	assert.Greater(t, best.MetShare, 0.9)
}

// A trace over which the MR target allows fewer than 3 mistakes cannot
// confirm it: the verdict says so, names the length that could (3/MR),
// and claims no significance, even for a difference that is clear.
func TestDecideCannotAnswer(t *testing.T) {
	raceFree(t)
	tg := Targets{MaxMRPerSecond: 0.002} // 10 min: 1.2 expected mistakes
	v := decideSim(t, 6000, simSA, 40*time.Millisecond, mustRange(t, 20, 300, 40, false), tg, DecideConfig{Holdout: -1})
	assert.False(t, v.Confirmable)
	assert.InDelta(t, 1.2, v.ExpectedMistakes, 0.01)
	assert.Equal(t, 1500*time.Second, v.NeededSpan)
	require.Len(t, v.Rivals, 1)
	assert.False(t, v.Rivals[0].Significant)
	assert.Contains(t, v.String(), "The trace cannot answer")
	assert.Contains(t, v.String(), "at least 25m0s")

	long := decideSim(t, 6000, simSA, 40*time.Millisecond, mustRange(t, 20, 300, 40, false), Targets{MaxMRPerSecond: 0.02}, DecideConfig{Holdout: -1})
	assert.True(t, long.Confirmable)
	assert.True(t, long.Rivals[0].Significant, "%s", long)

	none := decideSim(t, 6000, simSA, simSA, mustRange(t, 20, 300, 40, false), Targets{NoMistakes: true}, DecideConfig{Holdout: -1})
	assert.False(t, none.Confirmable)
	assert.Contains(t, none.String(), "No trace can confirm MR = 0")
}

// On one hour, a 5 % TD difference at equal MR is significant, two equal
// detectors are not (one seed each of TestDecideSimulation), and a
// difference below the practical threshold is equivalent, not
// significant, whatever its interval.
func TestDecideEquivalence(t *testing.T) {
	raceFree(t)
	vals := mustRange(t, 20, 200, 40, false)
	tg := Targets{MaxMRPerSecond: simMR}
	off := decideSim(t, 36000, simSA, simSB, vals, tg, DecideConfig{Holdout: -1, Equivalence: -1})
	require.Len(t, off.Rivals, 1)
	assert.True(t, off.Rivals[0].Significant, "%s", off)
	assert.False(t, off.Rivals[0].Equivalent)
	assert.Zero(t, off.Equivalence)
	same := decideSim(t, 36000, simSA, simSA, vals, tg, DecideConfig{Holdout: -1, Equivalence: -1})
	assert.False(t, same.Rivals[0].Significant, "%s", same)
	on := decideSim(t, 36000, simSA, simSB, vals, tg, DecideConfig{Holdout: -1, Equivalence: 0.10})
	assert.True(t, on.Rivals[0].Equivalent)
	assert.False(t, on.Rivals[0].Significant)
	assert.Equal(t, time.Duration(0.10*float64(on.Ops[on.Best].Point.TD.Mean)), on.Equivalence)
	assert.Contains(t, on.String(), "equivalent (below the practical threshold")
}

// One detector swept on two grids that do not share a value (user48 F31:
// chen α at n = 1 and the fixed timeout Δ + α, on their own default
// ranges) is no better than itself: each resample's TD lies between two
// settings of its own bracket, so the pair's differences are all of one
// sign but within the brackets' resolution, and count as ties (p = 1).
// With them counted on a side, p was 2/(R+1).
func TestDecideOneDetectorTwoGrids(t *testing.T) {
	raceFree(t)
	hbs := simStream(9000, simInterval, simC0, simM, 7)
	a := noisyFamily("a", simInterval, simSA, 1, 20, 200, 40)
	b := noisyFamily("b", simInterval, simSA, 1, 20, 200, 40)
	for i := range b.Values {
		b.Values[i] += 1.7 // 1.7 ms off a's grid
	}
	v, err := Decide(Stream{Name: "s", Heartbeats: hbs}, []Family{a, b}, nil, Targets{MaxMRPerSecond: simMR},
		DecideConfig{Holdout: -1, Equivalence: -1, Sweep: SweepConfig{Workers: 1}})
	require.NoError(t, err)
	require.Len(t, v.Rivals, 1, "%s", v)
	rv := v.Rivals[0]
	assert.LessOrEqual(t, absDur(rv.TDDiff), solveTDTolerance, "%s", v)
	assert.Equal(t, 1.0, rv.P, "%s", v)
	assert.False(t, rv.Significant)
	// Read at the best's TD, the rival is its own operating point (the
	// same TD within the solver's tolerance), not a step below it.
	require.True(t, rv.AtTDOK)
	assert.Equal(t, v.Ops[rv.Op].Point.MRPerSecond, rv.AtTD.MRPerSecond, "%s", v)
	assert.Zero(t, rv.MRDiff, "%s", v)
}

// A setting at an end of the swept range is flagged with the --range
// that widens it.
func TestDecideEdges(t *testing.T) {
	raceFree(t)
	tg := Targets{MaxMRPerSecond: simMR}
	low := decideSim(t, 6000, simSA, simSA, mustRange(t, 100, 200, 11, false), tg, DecideConfig{Holdout: -1})
	assert.Equal(t, LowerEdge, low.Ops[0].Edge)
	assert.Equal(t, 100.0, low.Ops[0].Point.Value)
	assert.Equal(t, "--range a=25:200", low.Ops[0].Widen)
	assert.Contains(t, low.String(), "a: the setting c=100ms is the smallest swept; a smaller one may meet the targets faster: widen the range, e.g. --range a=25:200")
	high := decideSim(t, 6000, simSA, simSA, mustRange(t, 20, 60, 11, false), tg, DecideConfig{Holdout: -1})
	assert.Equal(t, UpperEdge, high.Ops[0].Edge)
	assert.False(t, high.Ops[0].Found)
	assert.Equal(t, "--range a=20:240", high.Ops[0].Widen)
	assert.Equal(t, NotAtEdge, high.Ops[1].Edge)
	satz := SatzgerFamily(satzger.Config{}, nil)
	assert.Equal(t, "", widenHint(&satz, UpperEdge, 0.5, 1))
	assert.Equal(t, "--range satzger=0.5:1", widenHint(&satz, UpperEdge, 0.5, 0.9))
}

// The out-of-sample figures: tuned on the first half, reported on both
// halves, whose spans add up to the stream's.
func TestDecideHoldout(t *testing.T) {
	raceFree(t)
	v := decideSim(t, 18000, simSA, simSA, mustRange(t, 20, 200, 40, false), Targets{MaxMRPerSecond: simMR}, DecideConfig{})
	assert.Equal(t, DefaultHoldout, v.Holdout)
	for _, op := range v.Ops {
		h := op.Holdout
		require.NotNil(t, h)
		require.True(t, h.Found)
		assert.InDelta(t, v.Span.Seconds(), (h.InSample.Span + h.HeldOut.Span).Seconds(), 1)
		assert.InDelta(t, h.InSample.Span.Seconds(), h.HeldOut.Span.Seconds(), 30)
		assert.LessOrEqual(t, h.InSample.MRPerSecond, simMR)
		// The truth is stationary: the held-out MR stays near the target.
		assert.Less(t, h.HeldOut.MRPerSecond, 2.5*simMR)
	}
	assert.Len(t, v.HoldoutRows(), 2)
	ch := v.Choices()
	require.Len(t, ch, 2)
	assert.Equal(t, v.Ops[0].Point.Value, ch[0].Point.Value)
	assert.True(t, ch[0].Found)
	assert.LessOrEqual(t, ch[0].Shortfall, 1.0)
	assert.Contains(t, v.String(), "Out of sample: tuned on the first 50 % of the trace")
	off := decideSim(t, 6000, simSA, simSA, mustRange(t, 20, 200, 40, false), Targets{MaxMRPerSecond: simMR}, DecideConfig{Holdout: -1})
	assert.Nil(t, off.Ops[0].Holdout)
	assert.Nil(t, off.HoldoutRows())
}

// Holm's step-down: with p = 0.01, 0.04, 0.03 over three rivals, 0.01 ≤
// 0.05/3 is rejected, then 0.03 > 0.05/2 stops (0.04 is not reached).
func TestHolm(t *testing.T) {
	v := Verdict{Confirmable: true, Rivals: []Rival{{P: 0.01}, {P: 0.04}, {P: 0.03}}}
	v.holm()
	assert.Equal(t, []bool{true, false, false}, []bool{v.Rivals[0].Significant, v.Rivals[1].Significant, v.Rivals[2].Significant})
	v = Verdict{Confirmable: true, Rivals: []Rival{{P: 0.02}, {P: 0.004}}}
	v.holm()
	assert.True(t, v.Rivals[0].Significant && v.Rivals[1].Significant) // 0.004 ≤ 0.025, 0.02 ≤ 0.05
	v = Verdict{Confirmable: true, Rivals: []Rival{{P: 0.001, Equivalent: true}}}
	v.holm()
	assert.False(t, v.Rivals[0].Significant)
	v = Verdict{Confirmable: false, Rivals: []Rival{{P: 0.001}}}
	v.holm()
	assert.False(t, v.Rivals[0].Significant)
}

// bootstrapP: 2·(k+1)/(n+1) for the smaller side, NaN dropped.
func TestBootstrapP(t *testing.T) {
	assert.InDelta(t, 2*1.0/5, bootstrapP([]float64{-1, -2, -3, -4}, nil), 1e-12)
	assert.InDelta(t, 2*2.0/5, bootstrapP([]float64{-1, -2, 3, -4, math.NaN()}, nil), 1e-12)
	assert.Equal(t, 1.0, bootstrapP([]float64{0, 0, 0}, nil))
	assert.Equal(t, 1.0, bootstrapP(nil, nil))
	// A difference within its tie width counts on both sides: 1 µs of
	// one sign in every resample, each known to 2 µs, is no side.
	d := []float64{1000, 1500, 900, 1999, 2000}
	w := []float64{2000, 2000, 2000, 2000, 2000}
	assert.Equal(t, 1.0, bootstrapP(d, w))
	assert.InDelta(t, 2*1.0/6, bootstrapP(d, nil), 1e-12)
	// Beyond the width it counts on its side only: two of five within.
	w = []float64{0, 1600, 0, 0, 2000}
	assert.InDelta(t, 2*3.0/6, bootstrapP(d, w), 1e-12)
	assert.InDelta(t, 2*3.0/6, bootstrapP([]float64{-1000, -1500, 900, -1999, -2000}, w), 1e-12)
}

// marginNote names the targets a chosen setting's interval crosses.
func TestMarginNote(t *testing.T) {
	r := Result{CI: &CI{MRPerSecond: [2]float64{0.001, 0.02}, QAP: [2]float64{0.998, 0.9999}, TDMean: [2]time.Duration{ms(90), ms(110)}}}
	assert.Equal(t, "It meets the targets even at the unfavourable ends of its 95 % intervals.", marginNote(r, Targets{MaxTD: ms(200), MaxMRPerSecond: 0.05, MinQAP: 0.99}))
	assert.True(t, strings.HasPrefix(marginNote(r, Targets{MaxTD: ms(100), MaxMRPerSecond: 0.01, MinQAP: 0.999}), "Its 95 % interval of TD and MR and QAP crosses the target"))
	assert.Empty(t, marginNote(Result{}, Targets{MaxTD: ms(100)}))
}

// Invalid arguments are errors naming what is wrong, not panics.
func TestDecideInvalid(t *testing.T) {
	hbs := simStream(600, simInterval, simC0, simM, 1)
	s := Stream{Name: "s", Heartbeats: hbs}
	fams := []Family{noisyFamily("a", simInterval, simSA, 1, 20, 200, 5)}
	tg := Targets{MaxMRPerSecond: simMR}
	for name, c := range map[string]struct {
		fams []Family
		tg   Targets
		opt  DecideConfig
		want string
	}{
		"holdout 1":       {fams, tg, DecideConfig{Holdout: 1}, "hold-out share 1"},
		"equivalence NaN": {fams, tg, DecideConfig{Equivalence: math.NaN()}, "equivalence NaN"},
		"targets":         {fams, Targets{MinQAP: 2}, DecideConfig{}, "QAP target 2"},
		"no families":     {nil, tg, DecideConfig{}, "no family"},
		"one heartbeat":   {fams, tg, DecideConfig{}, "too little observed time"},
	} {
		st := s
		if name == "one heartbeat" {
			st.Heartbeats = hbs[:1]
		}
		_, err := Decide(st, c.fams, nil, c.tg, c.opt)
		assert.ErrorContains(t, err, c.want, name)
	}
}

// A holdout that leaves too little to tune or report on says so, with the
// shares that would do (user48 F19: --holdout 0.99 dropped the
// out-of-sample section without a word).
func TestHoldoutSkipped(t *testing.T) {
	assert.Equal(t, "a holdout of 99% leaves 1 of the stream's 102 time cells to tune on and 101 to report on, where each part needs 4: give a share between 0.04 and 0.96",
		holdoutSkipped(0.99, 1, 101, 102, 4))
	assert.Equal(t, "a holdout of 50% leaves 4 of the stream's 7 time cells to tune on and 3 to report on, where each part needs 4: the stream is too short for any holdout",
		holdoutSkipped(0.5, 4, 3, 7, 4))
}
