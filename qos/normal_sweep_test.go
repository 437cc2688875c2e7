package qos

import (
	"fmt"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/trace/tracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// normalSweepThresholds: 40 from log10 2 to 16, repeated values and the
// smallest valid one.
func normalSweepThresholds(t *testing.T) []float64 {
	return append(mustRange(t, 0.31, 16, 40, false), 3, 0.30103, 16, 3)
}

// checkNormalGroups requires the grouped pass of the normal φ with its
// default rule (SkipIfSuspected) to equal one replay per threshold in every
// field of every point, also with small rank windows, and returns the
// number of groups the pass ended with.
func checkNormalGroups(t *testing.T, ncfg phi.NormalConfig, hbs []detector.Heartbeat, cfg Config) int {
	t.Helper()
	return checkGroups(t, PhiNormalFamily(ncfg, normalSweepThresholds(t)), normalModel(ncfg), hbs, cfg)
}

// normalTestConfigs: the package defaults with a short window, a fixed σ
// floor with an acceptable pause, and a warm-up of 20 intervals.
func normalTestConfigs() map[string]phi.NormalConfig {
	return map[string]phi.NormalConfig{
		"default":   {WindowSize: 200},
		"floor":     {WindowSize: 100, MinStdDev: new(ms(5)), AcceptablePause: ms(20)},
		"warm-up":   {WindowSize: 100, MinSamples: new(20), BootstrapInterval: ms(50)},
		"window-1":  {WindowSize: 1},
		"no-floor0": {WindowSize: 300, MinStdDev: new(ms(0))},
	}
}

// TestNormalGroupsEqualReplays: the grouped pass of the normal φ equals
// one replay per threshold, field by field, on generated traces with
// jitter, pauses, loss bursts, duplicates and reordering, under every
// replay setting, and the thresholds do part (so splitting is tested).
func TestNormalGroupsEqualReplays(t *testing.T) {
	traces := map[string][]detector.Heartbeat{
		"jitter":   presetHeartbeats(t, "jitter", 2*time.Minute, 5),
		"gc-pause": presetHeartbeats(t, "gc-pause", 2*time.Minute, 6),
		"wan":      presetHeartbeats(t, "wan", 10*time.Minute, 7),
	}
	for name, hbs := range agreementTraces() {
		traces[name] = hbs
	}
	for tn, hbs := range traces {
		for cn, ncfg := range normalTestConfigs() {
			t.Run(tn+"/"+cn, func(t *testing.T) {
				groups := checkNormalGroups(t, ncfg, hbs, Config{})
				if cn == "default" {
					assert.Greater(t, groups, 1, "the thresholds must part on this trace, or the test does not test splitting")
				}
			})
		}
		for i, cfg := range sweepReplayConfigs {
			t.Run(fmt.Sprintf("%s/cfg%d", tn, i), func(t *testing.T) {
				checkNormalGroups(t, normalTestConfigs()["default"], hbs, cfg)
			})
		}
	}
}

// TestNormalGroupsEqualReplaysLIP6: every sender of the LIP6 excerpt
// (arrival-based TD).
func TestNormalGroupsEqualReplaysLIP6(t *testing.T) {
	path := tracetest.Shared(t, tracetest.LIP6Excerpt)
	recs, err := trace.ReadFile(path, trace.Options{})
	require.NoError(t, err)
	split := 0
	for _, st := range trace.Split(recs) {
		t.Run(st.Sender, func(t *testing.T) {
			if checkNormalGroups(t, phi.NormalConfig{WindowSize: 1000}, heartbeats(st.Records), Config{DelayOffset: ms(50), Intervals: true}) > 1 {
				split++
			}
		})
	}
	assert.Positive(t, split, "no sender made the thresholds part")
}

// With MaxInterval (not modelled by the grouped pass) or thresholds the
// replays reject, the sweep replays per point.
func TestNormalGroupsFallBack(t *testing.T) {
	hbs := agreementTraces()["jitter-loss"]
	c, err := Sweep([]Stream{{Heartbeats: hbs}}, []Family{PhiNormalFamily(phi.NormalConfig{WindowSize: 100, MaxInterval: ms(150)}, []float64{1, 8})}, SweepOptions{})
	require.NoError(t, err)
	assert.Equal(t, PerPoint, c[0].Method)
	c, err = Sweep([]Stream{{Heartbeats: hbs}}, []Family{PhiNormalFamily(phi.NormalConfig{WindowSize: 100}, []float64{0.1, 8})}, SweepOptions{})
	require.NoError(t, err)
	assert.Equal(t, PerPoint, c[0].Method)
	assert.Len(t, c[0].Points, 1)
	assert.Contains(t, c[0].Err, "below log10 2")
}

// An arrival exactly at τ(Θ) is recorded by the replay with threshold Θ
// (arrival ≤ τ) and one a nanosecond later is not: the grouped pass splits
// at that boundary as the replays do (a pass that took τ + 1 as recorded
// keeps Θ = 8 with 8.5 and fails here).
func TestNormalGroupsBoundary(t *testing.T) {
	ncfg := phi.NormalConfig{WindowSize: 50}
	var hbs []detector.Heartbeat
	at := time.Duration(0)
	add := func(a time.Duration) {
		hbs = append(hbs, detector.Heartbeat{Seq: uint64(len(hbs)), HasSeq: true, Arrival: a})
		at = a
	}
	for round, extra := range []time.Duration{0, 1, 0, 1} {
		for i := range 120 {
			add(at + ms(100) + time.Duration((i*7919+round)%13)*time.Millisecond)
		}
		c := ncfg
		c.Threshold = 8
		det, err := phi.NewNormal(c)
		require.NoError(t, err)
		for _, hb := range hbs {
			det.Observe(hb)
		}
		tau, ok := det.FreshnessPoint()
		require.True(t, ok)
		add(tau + extra)
	}
	f := PhiNormalFamily(ncfg, []float64{2, 8, 8.5, 12})
	requireSameAsPerPoint(t, f, []Stream{{Name: "s", Heartbeats: hbs}}, Config{}, OnePassGroups, "Φ = %g")
}
