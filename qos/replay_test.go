package qos

import (
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/internal/selection"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newFixed(t *testing.T, timeout time.Duration) detector.Detector {
	t.Helper()
	d, err := detector.NewFixed(detector.FixedConfig{Timeout: new(timeout)})
	require.NoError(t, err)
	return d
}

// Worked by hand on the docs/algorithms.md, “Replaying a trace” trace with a
// fixed timeout T = 150 ms: the gaps are 105, 93, 122, 82, 108, 205, 155, 31
// ms, so two gaps exceed T (205 and 155: suspected 55 + 5 ms); T_obs = 1021 −
// 120 = 901 ms; the one-way delays A − σ are 20, 25, 18, 40, 22, 30, 35, 90, 21
// (mean 301/9), so TD_k = A_k + 150 − σ_k has mean 150 + 301/9 ms and maximum
// 240 ms.
func TestReplayFixedByHand(t *testing.T) {
	res, err := ReplaySlice(newFixed(t, ms(150)), example95(), Config{RecordMistakes: true})
	require.NoError(t, err)
	assert.Equal(t, 9, res.Records)
	assert.Equal(t, 9, res.Evaluated)
	assert.Equal(t, 0, res.WarmUp)
	assert.Equal(t, ms(120), res.Start)
	assert.Equal(t, ms(901), res.Span)
	assert.Equal(t, 2, res.Mistakes)
	assert.Equal(t, ms(60), res.Suspected)
	assert.InDelta(t, 2/0.901, res.MRPerSecond, 1e-12)
	assert.InDelta(t, 1-60.0/901, res.QAP, 1e-12)
	assert.Equal(t, ms(30), res.MeanTM)
	assert.Equal(t, ms(450.5), res.MeanTMR)
	assert.Equal(t, ms(420.5), res.MeanTG)
	assert.Equal(t, ms(150+301.0/9), res.TD.Mean)
	assert.Equal(t, ms(240), res.TD.Max)
	assert.Equal(t, ms(175), res.TD.P50) // sorted delays: 18 20 21 22 25 30 35 40 90 → rank 5 is 25
	assert.Equal(t, ms(240), res.TD.P99)
	assert.Equal(t, ms(171), res.LastTD)
	assert.True(t, res.ClockSync)
	assert.Equal(t, TDSend, res.TDBasis)
	assert.Equal(t, []Interval{{ms(780), ms(835)}, {ms(985), ms(990)}}, res.MistakeIntervals)
}

func TestReplayWarmUpStaleAndDuplicates(t *testing.T) {
	hbs := example95()
	// A duplicate of 8 and a stale 5 arrive inside the 835–990 gap; for the
	// fixed timeout they change nothing but the counts.
	dup := hbs[6]
	dup.Arrival = ms(900)
	stale := hbs[4]
	stale.Arrival = ms(995)
	hbs = append(hbs[:7], append([]detector.Heartbeat{dup}, hbs[7:]...)...)
	hbs = append(hbs[:9], append([]detector.Heartbeat{stale}, hbs[9:]...)...)
	require.Equal(t, ms(995), hbs[9].Arrival)

	res, err := ReplaySlice(newFixed(t, ms(150)), hbs, Config{WarmUp: 2})
	require.NoError(t, err)
	assert.Equal(t, 11, res.Records)
	assert.Equal(t, 2, res.Stale)
	assert.Equal(t, 2, res.WarmUp)
	assert.Equal(t, 7, res.Evaluated)
	assert.Equal(t, ms(318), res.Start)
	assert.Equal(t, ms(1021-318), res.Span)
	assert.Equal(t, 2, res.Mistakes)
	assert.Equal(t, ms(60), res.Suspected)
}

func TestReplayUnsynchronizedClocks(t *testing.T) {
	hbs := example95()
	for i := range hbs { // sender clock 3 hours behind and no longer comparable
		hbs[i].Sent -= 3 * time.Hour
	}
	res, err := ReplaySlice(newFixed(t, ms(150)), hbs, Config{DelayOffset: ms(10)})
	require.NoError(t, err)
	assert.False(t, res.ClockSync, "an apparent delay of 3 h is a clock offset")
	assert.Equal(t, TDArrival, res.TDBasis)
	assert.Equal(t, ms(10), res.DelayOffset)
	assert.Equal(t, ms(160), res.TD.Mean, "TD_k = τ − A_k + d̄ = 150 + 10 ms")
	assert.Equal(t, ms(160), res.TD.Max)

	// Forced modes.
	res, err = ReplaySlice(newFixed(t, ms(150)), example95(), Config{Clock: ClockUnsynchronized})
	require.NoError(t, err)
	assert.Equal(t, TDArrival, res.TDBasis)
	assert.Equal(t, ms(150), res.TD.Mean)
	noSent := example95()
	for i := range noSent {
		noSent[i].HasSent = false
	}
	res, err = ReplaySlice(newFixed(t, ms(150)), noSent, Config{Clock: ClockSynchronized})
	require.NoError(t, err)
	assert.Equal(t, TDArrival, res.TDBasis, "without send times TD can only be arrival-based")
}

func TestReplayErrors(t *testing.T) {
	hbs := example95()
	hbs[3].Arrival = ms(100)
	_, err := ReplaySlice(newFixed(t, time.Second), hbs, Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "arrival order")

	_, err = ReplaySlice(newFixed(t, time.Second), example95(), Config{WarmUp: 100})
	assert.ErrorIs(t, err, ErrNoEvaluation)
	_, err = ReplaySlice(newFixed(t, time.Second), nil, Config{})
	assert.ErrorIs(t, err, ErrNoEvaluation)
	_, err = ReplaySlice(newFixed(t, time.Second), example95(), Config{WarmUp: -1})
	assert.Error(t, err)
	_, err = ReplaySlice(newFixed(t, time.Second), example95(), Config{DelayOffset: -1})
	assert.Error(t, err)
	_, err = ReplaySlice(nil, example95(), Config{})
	assert.Error(t, err)
}

// A heartbeat can arrive after its successor's freshness point: q then
// suspects right at the arrival. Gaps 0→50 (τ=30): mistake at 30; the next
// arrival at 50 gives τ=80, trust; none arrives until 200: one more mistake.
func TestReplayTransitionsCountedOnce(t *testing.T) {
	// Fixed never has τ < A; use a detector stub with a scripted τ.
	s := &scripted{taus: []time.Duration{ms(30), ms(40), ms(80), ms(90)}}
	hbs := []detector.Heartbeat{{Arrival: ms(0)}, {Arrival: ms(50)}, {Arrival: ms(60)}, {Arrival: ms(200)}}
	res, err := ReplaySlice(s, hbs, Config{RecordMistakes: true})
	require.NoError(t, err)
	// (30,50] suspected; at 50 τ=40 < 50: still suspected (no new mistake);
	// (50,60] suspected; at 60 τ=80: trust; (80,200] suspected.
	assert.Equal(t, 2, res.Mistakes)
	assert.Equal(t, ms(20+10+120), res.Suspected)
	assert.Equal(t, []Interval{{ms(30), ms(60)}, {ms(80), ms(200)}}, res.MistakeIntervals)
}

// scripted is a detector whose k-th freshness point is taus[k].
type scripted struct {
	taus []time.Duration
	k    int
	last time.Duration
}

func (s *scripted) Observe(hb detector.Heartbeat) { s.k++; s.last = hb.Arrival }
func (s *scripted) FreshnessPoint() (time.Duration, bool) {
	if s.k == 0 {
		return 0, false
	}
	return s.taus[s.k-1], true
}
func (s *scripted) WarmingUp() bool { return false }
func (s *scripted) Suspected(now time.Duration) bool {
	tau, ok := s.FreshnessPoint()
	return ok && now > tau
}

func TestSelectRank(t *testing.T) {
	for n := 1; n < 300; n += 7 {
		a := make([]int64, n)
		for i := range a {
			a[i] = int64((i * 7919) % 101)
		}
		for _, q := range []float64{0, 0.5, 0.99, 1} {
			b := append([]int64(nil), a...)
			c := append([]int64(nil), a...)
			slices.Sort(c)
			k := rank(q, n)
			assert.Equal(t, c[k], selection.Rank(b, k), "n=%d q=%g", n, q)
		}
	}
	assert.Equal(t, 0, rank(0.5, 1))
	assert.Equal(t, 49, rank(0.5, 99))
	// ⌈q·n⌉ − 1, clamped to [0, n−1]: one value is its own p99; the p99
	// of 100 values is the 99th smallest.
	assert.Equal(t, 0, rank(0.99, 1))
	assert.Equal(t, 98, rank(0.99, 100))
	assert.Equal(t, 99, rank(0.99, 101))
	assert.Equal(t, 0, rank(0, 10))
	assert.Equal(t, 9, rank(1, 10))
}
