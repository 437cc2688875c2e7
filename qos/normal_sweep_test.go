package qos

import (
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// normalSweepThresholds are the thresholds of the exactness tests of the
// grouped φ-normal sweep: 40 from 0.5 to 16 as in the benchmark, plus the
// smallest valid one (z = 0), values near it and repeated ones.
func normalSweepThresholds(t *testing.T) []float64 {
	v := mustRange(t, 0.5, 16, 40, false)
	return append(v, math.Log10(2), 0.31, 3, 16, 3)
}

// checkNormalGroups requires the sweep of the normal φ with
// skip-suspected, and its grouped one-pass method run without its bound on
// groups (with small rank windows too: the TD summary of long streams), to
// equal one replay per threshold in every field of every point; the sweep
// must use the shared-state method (a normalSet) when the thresholds share
// their warm-up, else the grouped method unless the groups outnumber a
// quarter of the thresholds at some point. It returns the most groups the
// grouped pass had at once.
func checkNormalGroups(t *testing.T, ncfg phi.NormalConfig, hbs []detector.Heartbeat, cfg Config) int {
	t.Helper()
	return checkNormalGroupsAt(t, ncfg, normalSweepThresholds(t), hbs, cfg)
}

// newNormals returns a normal φ detector of cfg at each threshold of vals.
func newNormals(t *testing.T, cfg phi.NormalConfig, vals []float64) []*phi.Normal {
	t.Helper()
	ds := make([]*phi.Normal, len(vals))
	for j, v := range vals {
		c := cfg
		c.Threshold = v
		var err error
		ds[j], err = phi.NewNormal(c)
		require.NoError(t, err)
	}
	return ds
}

func checkNormalGroupsAt(t *testing.T, ncfg phi.NormalConfig, values []float64, hbs []detector.Heartbeat, cfg Config) int {
	t.Helper()
	f := PhiNormalFamily(ncfg, values)
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	fast, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg})
	require.NoError(t, err)
	slow, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg, PerPointOnly: true})
	require.NoError(t, err)
	require.Empty(t, slow[0].Err)
	require.Empty(t, fast[0].Err)
	require.Equal(t, slow[0].Points, fast[0].Points)
	groups := 0
	for _, m := range []int{0, 16} {
		p, pointOf, err := newGroupPass(normalGroups(ncfg), f.Values, cfg)
		require.NoError(t, err)
		bound := p.maxGroups
		p.sampleSize, p.maxGroups = m, 0
		res, err := p.run(sliceSource(hbs))
		require.NoError(t, err)
		for i := range f.Values {
			require.Equal(t, slow[0].Points[i].Result, res[pointOf[i]], "Θ = %g, rank windows from %d values (0: the default)", f.Values[i], m)
		}
		groups = p.peak
		switch {
		case sharedWarmUp(ncfg):
			require.Equal(t, SharedState, fast[0].Method, "the thresholds share their warm-up")
		case groups <= bound:
			require.Equal(t, OnePassGroups, fast[0].Method, "%d groups of at most %d", groups, bound)
		}
	}
	return groups
}

// normalTestConfigs are normal-φ settings with skip-suspected (phi's
// default) under which the thresholds part on ordinary jitter and losses,
// with each rule that decides, besides Θ, whether an interval is recorded:
// the bootstrap, the relearn rule (on by default, off, and a short run that
// a slow bootstrap triggers), MaxInterval with DivideBySeqGap, and warm-up.
func normalTestConfigs() map[string]phi.NormalConfig {
	return map[string]phi.NormalConfig{
		"default":     {WindowSize: 200},
		"std-floor":   {WindowSize: 200, MinStdDev: new(ms(10))},
		"no-relearn":  {WindowSize: 200, RelearnAfter: new(0), MinStdDev: new(time.Duration(0))},
		"relearn-2":   {WindowSize: 50, RelearnAfter: new(2), BootstrapInterval: new(ms(20))},
		"cap-divide":  {WindowSize: 100, MaxInterval: new(ms(250)), DivideBySeqGap: true, AcceptablePause: new(ms(5))},
		"warm-up":     {WindowSize: 100, MinSamples: new(100)},
		"all-intervs": {WindowSize: 100, SkipIfSuspected: new(true), RelearnAfter: new(100)},
	}
}

// checkNormalNamed is checkNormalGroups with the settings of
// normalTestConfigs named cn.
func checkNormalNamed(t *testing.T, cn string, hbs []detector.Heartbeat, cfg Config) int {
	t.Helper()
	return checkNormalGroups(t, normalTestConfigs()[cn], hbs, cfg)
}

func TestNormalGroupsEqualReplaysOnPresets(t *testing.T) {
	checkGroupsOnPresets(t, slices.Sorted(maps.Keys(normalTestConfigs())), "default", checkNormalNamed)
}

func TestNormalGroupsEqualReplaysConfigs(t *testing.T) {
	checkGroupsOnConfigs(t, "default", checkNormalNamed)
}

func TestNormalGroupsEqualReplaysLIP6(t *testing.T) {
	checkGroupsOnLIP6(t, "default", checkNormalNamed)
}

// The grouped pass falls back to one replay per point where it does not
// apply, with the replays' own errors; with skip-suspected off the sweep
// is linear.
func TestNormalGroupsFallBack(t *testing.T) {
	hbs := agreementTraces()["jitter-loss"]
	f := PhiNormalFamily(phi.NormalConfig{WindowSize: 50}, []float64{1, 0.2, 8})
	c, err := Sweep([]Stream{{Heartbeats: hbs}}, []Family{f}, SweepConfig{})
	require.NoError(t, err)
	assert.Equal(t, PerPoint, c[0].Method)
	assert.Len(t, c[0].Points, 2)
	assert.ErrorContains(t, c[0].Err, "threshold=0.2: threshold 0.2 is below log10 2")

	f = PhiNormalFamily(phi.NormalConfig{WindowSize: 50}, []float64{1, 8})
	c, err = Sweep([]Stream{{Heartbeats: hbs[:3]}}, []Family{f}, SweepConfig{Config: Config{WarmUp: 10}})
	require.NoError(t, err)
	assert.Equal(t, PerPoint, c[0].Method)
	assert.ErrorContains(t, c[0].Err, "no heartbeat evaluated")

	f = PhiNormalFamily(phi.NormalConfig{WindowSize: 50, SkipIfSuspected: new(false)}, []float64{1, 8})
	c, err = Sweep([]Stream{{Heartbeats: hbs}}, []Family{f}, SweepConfig{})
	require.NoError(t, err)
	assert.Equal(t, OnePass, c[0].Method)
}

// A stream long enough for the TD summary's default rank windows.
func TestNormalGroupsEqualReplaysLong(t *testing.T) {
	if testing.Short() {
		t.Skip("a 150,000-heartbeat stream replayed per threshold: not in -short")
	}
	hbs := generate(genOpts{n: 150_000, interval: ms(100), delay: ms(40), spread: ms(15), loss: 0.05, dup: 0.01, pause: 0.002, seed: 9})
	g := checkNormalGroups(t, normalTestConfigs()["std-floor"], hbs, Config{})
	assert.Greater(t, g, 1)
}

// An interval equal to ⌈t*(Θ)⌉ arrives exactly at τ: Θ records it (the
// detector leaves out only arrivals after τ), a threshold just below
// leaves it out, so the pass splits the group between them; once the
// interval has left the window of the thresholds that recorded it (n = 100
// intervals later) and the relearn run it started has ended, the two
// groups have the same detector state again and join.
func TestNormalGroupsSplitAtTheFreshnessPoint(t *testing.T) {
	ncfg := phi.NormalConfig{WindowSize: 100}
	var hbs []detector.Heartbeat
	at := time.Duration(0)
	beat := func(iv time.Duration) {
		at += iv
		hbs = append(hbs, detector.Heartbeat{Seq: uint64(len(hbs)), HasSeq: true, Arrival: at})
	}
	for range 150 {
		beat(ms(100))
	}
	d, err := phi.NewNormal(phi.NormalConfig{WindowSize: 100, Threshold: 3})
	require.NoError(t, err)
	for _, hb := range hbs {
		d.Observe(hb)
	}
	_, mean, sd, _ := d.Form()
	iv := time.Duration(math.Ceil(phi.NormalCrossing(mean, sd, phi.ZOfLevel(3))))
	require.Equal(t, 103_090_233*time.Nanosecond, iv, "⌈100 ms + 1 ms·z(3)⌉: μ = 100 ms, σ_eff = μ/100, z(3) = 3.0902323")
	require.NotEqual(t, float64(iv), phi.NormalCrossing(mean, sd, phi.ZOfLevel(3)), "t* is not whole: the rounding matters")
	beat(iv)
	for range 120 {
		beat(ms(100))
	}
	vals := []float64{2.9, 3, 3.1}
	checkNormalGroupsAt(t, ncfg, vals, hbs, Config{})
	replayed := newNormals(t, ncfg, vals)
	p, _, err := newGroupPass(normalGroups(ncfg), vals, Config{})
	p.maxGroups = 0
	require.NoError(t, err)
	var parted []*thresholdGroup
	for i, hb := range hbs {
		require.NoError(t, p.step(hb))
		if i == 150 {
			require.Len(t, p.grps, 2)
			parted = p.grps
			assert.Equal(t, [2]int{1, 3}, [2]int{p.grps[1].lo, p.grps[1].hi}, "Θ = 3 and 3.1 recorded the interval, Θ = 2.9 did not")
		}
		if i == 150+99 {
			require.Len(t, p.grps, 2, "Θ = 3's window still holds the interval")
		}
	}
	require.Len(t, p.grps, 1)
	assert.Same(t, parted[0].det, p.grps[0].det, "the upper group joined the lower one")
	assert.Equal(t, [2]int{0, 3}, [2]int{p.grps[0].lo, p.grps[0].hi})
	c, err := Sweep([]Stream{{Name: "s", Heartbeats: hbs}}, []Family{PhiNormalFamily(ncfg, vals)}, SweepConfig{})
	require.NoError(t, err)
	assert.Equal(t, SharedState, c[0].Method, "the default warm-up is the same for every threshold")
	set, err := newNormalSet(ncfg, 1, new(bool))
	require.NoError(t, err)
	fill := set.track(vals)
	taus := make([]time.Duration, len(vals))
	for i, hb := range hbs {
		set.Observe(hb)
		fill(taus)
		for j, v := range vals {
			d := replayed[j]
			d.Observe(hb)
			want, _ := d.FreshnessPoint()
			require.Equal(t, want, taus[j], "Θ = %g, heartbeat %d", v, i)
		}
		if i == 150 {
			require.Len(t, set.grps, 2)
			assert.Equal(t, [2]int{1, 3}, [2]int{set.grps[1].lo, set.grps[1].hi}, "the set splits as the grouped pass")
		}
		if i == 150+99 {
			require.Len(t, set.grps, 2)
		}
	}
	require.Len(t, set.grps, 1, "the set joins as the grouped pass")
}

// The grouped pass keeps 16 bytes per group and heartbeat: on a stream held
// in memory too, past Spill.GroupBytes it moves them to files and goes on
// (the same fields), so that many thresholds that part do not take
// gigabytes of a long stream; with small rank-window samples too (the
// windows' path on spilled forms).
func TestNormalGroupsBoundOnSlices(t *testing.T) {
	hbs := generate(genOpts{n: 5000, interval: ms(100), delay: ms(40), spread: ms(1), seed: 9})
	f := PhiNormalFamily(normalTestConfigs()["std-floor"], normalSweepThresholds(t))
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	free, err := Sweep(streams, []Family{f}, SweepConfig{})
	require.NoError(t, err)
	require.Equal(t, SharedState, free[0].Method)
	for _, cfg := range []Config{{}, {Intervals: true, RecordMistakes: true, WarmUp: 17}} {
		cfg.Spill.GroupBytes = 16 * len(hbs)
		slow, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg, PerPointOnly: true})
		require.NoError(t, err)
		bounded, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg})
		require.NoError(t, err)
		assert.Equal(t, SharedState, bounded[0].Method)
		assert.Equal(t, slow[0].Points, bounded[0].Points)
		for _, m := range []int{0, 16} {
			p, pointOf, err := newGroupPass(normalGroups(normalTestConfigs()["std-floor"]), f.Values, cfg)
			require.NoError(t, err)
			p.sampleSize = m
			res, err := p.run(sliceSource(hbs))
			require.NoError(t, err)
			require.Nil(t, p.all[0].m, "the forms went to files")
			for i := range f.Values {
				require.Equal(t, slow[0].Points[i].Result, res[pointOf[i]], "Θ = %g, sample %d", f.Values[i], m)
			}
		}
	}
}
