package qos

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shifted returns hbs with every arrival and send time moved by d and,
// with noSeq, without sequence numbers.
func shifted(hbs []detector.Heartbeat, d time.Duration, noSeq bool) []detector.Heartbeat {
	out := make([]detector.Heartbeat, len(hbs))
	for i, hb := range hbs {
		hb.Arrival += d
		if hb.HasSent {
			hb.Sent += d
		}
		if noSeq {
			hb.Seq, hb.HasSeq = 0, false
		}
		out[i] = hb
	}
	return out
}

// The shared-state sweep of the normal φ equals a replay per threshold on
// streams at the edges of the Duration range, where freshness points
// saturate (the last arrivals within a second of the largest Duration),
// where arrivals are negative and cross 0, and without sequence numbers
// (duplicates then count as fresh heartbeats): ranges the grouped pass
// leaves to the replays (maxExactCrossing).
func TestNormalSetEqualsReplaysAtTheEdges(t *testing.T) {
	base := generate(genOpts{n: 600, interval: ms(100), delay: ms(40), spread: ms(15), loss: 0.05, dup: 0.03, pause: 0.02, seed: 5})
	end := base[len(base)-1].Arrival
	streams := map[string][]detector.Heartbeat{
		"saturating": shifted(base, math.MaxInt64-end-ms(150), false),
		"negative":   shifted(base, -end/2, false),
		"no-seq":     shifted(base, 0, true),
	}
	vals := []float64{16, 0.5, 1, 2, 3, 5, 8, 12, math.Log10(2), 8}
	for name, hbs := range streams {
		for _, cfg := range []Config{{}, {Intervals: true, RecordMistakes: true, WarmUp: 50}} {
			t.Run(name, func(t *testing.T) {
				f := PhiNormalFamily(phi.NormalConfig{WindowSize: 100}, vals)
				s := []Stream{{Name: name, Heartbeats: hbs}}
				fast, err := Sweep(s, []Family{f}, SweepConfig{Config: cfg})
				require.NoError(t, err)
				slow, err := Sweep(s, []Family{f}, SweepConfig{Config: cfg, PerPointOnly: true})
				require.NoError(t, err)
				require.Empty(t, slow[0].Err)
				require.Empty(t, fast[0].Err)
				assert.Equal(t, SharedState, fast[0].Method)
				require.Equal(t, slow[0].Points, fast[0].Points)
			})
		}
	}
	sat := streams["saturating"]
	d, err := phi.NewNormal(phi.NormalConfig{WindowSize: 100, Threshold: 16})
	require.NoError(t, err)
	for _, hb := range sat {
		d.Observe(hb)
	}
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, time.Duration(math.MaxInt64), tau, "the stream reaches saturation")
}

// Arrivals out of order stop the shared-state pass; the replays per point
// then report the stream's error, as for every other family.
func TestNormalSetOutOfOrderFallsBack(t *testing.T) {
	hbs := generate(genOpts{n: 300, interval: ms(100), delay: ms(40), spread: ms(5), seed: 6})
	hbs[200], hbs[201] = hbs[201], hbs[200]
	hbs[200].Arrival, hbs[201].Arrival = hbs[201].Arrival+ms(500), hbs[200].Arrival
	f := PhiNormalFamily(phi.NormalConfig{WindowSize: 50}, []float64{1, 8})
	c, err := Sweep([]Stream{{Name: "s", Heartbeats: hbs}}, []Family{f}, SweepConfig{})
	require.NoError(t, err)
	assert.Equal(t, PerPoint, c[0].Method)
	assert.ErrorContains(t, c[0].Err, "arriv")
}

// On a stream in memory whose thresholds take several passes of TD_k, the
// normal φ's sweep keeps up to normalLeanPasses of them (here 3, four
// thresholds a pass) and takes sweepRanked's two past that (here 6 passes
// of two): both equal a replay per point, with warm-up, recorded mistakes
// and per-cell confidence intervals, as with synchronized clocks.
func TestNormalSetPassesEqualReplays(t *testing.T) {
	const n = 4000
	hbs := generate(genOpts{n: n, interval: ms(100), delay: ms(40), spread: ms(15), loss: 0.03, dup: 0.02, pause: 0.01, seed: 11})
	vals := []float64{16, 0.5, 1, 2, 3, 5, 8, 12, math.Log10(2), 1.5, 4, 10}
	budget, least := leanBudget, rankedMin
	t.Cleanup(func() { leanBudget, rankedMin = budget, least })
	rankedMin = 2048
	f := PhiNormalFamily(phi.NormalConfig{WindowSize: 200}, vals)
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	for _, perPass := range []int{4, 2} {
		leanBudget = tdNarrowBytes * n * perPass
		for _, cfg := range []Config{{}, {WarmUp: 37, RecordMistakes: true, Intervals: true}} {
			requireSameAsPerPoint(t, f, streams, cfg, SharedState, "Θ = %g")
		}
	}
}

// fill gives every threshold of track, in any order, its replay's
// freshness point after every heartbeat, while the set splits groups
// across the runs of thresholds whose positions follow each other: in
// increasing z(Θ) (one run), with the table's setting after the sweep
// (fdreplay's order: three runs), decreasing (a run each) and mixed with
// a duplicate.
func TestNormalSetFillInTrackOrder(t *testing.T) {
	hbs := generate(genOpts{n: 1500, interval: ms(100), delay: ms(40), spread: ms(15), loss: 0.05, pause: 0.02, seed: 11})
	sweep := []float64{0.5, 1, 2, 3, 5, 6, 7, 9, 10, 12, 16}
	cfg := phi.NormalConfig{WindowSize: 100}
	down := slices.Clone(sweep)
	slices.Reverse(down)
	orders := map[string]struct {
		vals []float64
		runs int
	}{
		"increasing":      {sweep, 1},
		"table after":     {append(slices.Clone(sweep), 8), 3},
		"decreasing":      {down, len(sweep)},
		"mixed duplicate": {[]float64{3, 0.5, 16, 1, 2, 3, 12, 5, 10, 9, 8}, 0},
	}
	for name, o := range orders {
		t.Run(name, func(t *testing.T) {
			vals := o.vals
			set, err := newNormalSet(cfg, vals[0], new(bool))
			require.NoError(t, err)
			fill := set.track(vals)
			if o.runs > 0 {
				assert.Equal(t, o.runs, len(set.runs)-1)
			}
			replayed := newNormals(t, cfg, vals)
			taus := make([]time.Duration, len(vals))
			most := 0
			for i, hb := range hbs {
				set.Observe(hb)
				fill(taus)
				most = max(most, len(set.grps))
				for j, d := range replayed {
					d.Observe(hb)
					want, _ := d.FreshnessPoint()
					require.Equal(t, want, taus[j], "Θ = %g, heartbeat %d", vals[j], i)
				}
			}
			assert.Greater(t, most, 2, "groups parted")
		})
	}
}
