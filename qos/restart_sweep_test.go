package qos

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/sfd"
	"github.com/fdkit/fdkit/twowfd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// farLateStream is a generated stream (seed 124500203) with four
// heartbeats delivered far late: 120, 150 and 250 numbers below the
// highest received when they arrive (within a window of 300), and 600
// below (beyond it). With the restart rule at its default (100) each is a
// sender restart; with it off (math.MaxUint64, what fdreplay replays a
// stream of one incarnation with) each is a late heartbeat.
func farLateStream() []detector.Heartbeat {
	hbs := generate(genOpts{n: 3000, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.02, seed: 124500203})
	for i := range hbs {
		switch hbs[i].Seq {
		case 500:
			hbs[i].Arrival += 150 * ms(100)
		case 1200:
			hbs[i].Arrival += 250 * ms(100)
		case 2000:
			hbs[i].Arrival += 120 * ms(100)
		case 2300:
			hbs[i].Arrival += 600 * ms(100)
		}
	}
	slices.SortStableFunc(hbs, func(a, b detector.Heartbeat) int { return cmp.Compare(a.Arrival, b.Arrival) })
	return hbs
}

// The one-pass and shared sweeps equal one replay per point with the
// restart rule off as with it at its default, on a stream whose far-late
// heartbeats the two settings treat differently (every family's curve
// differs between them, so both are exercised).
func TestSweepsEqualReplaysRestartRuleOff(t *testing.T) {
	hbs := farLateStream()
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	est := func(jump *uint64) chen.EstimatorConfig {
		return chen.EstimatorConfig{Interval: ms(100), WindowSize: 300, RestartJump: jump}
	}
	curves := map[string][2][]Point{}
	for i, jump := range []*uint64{new(uint64(math.MaxUint64)), new(uint64(100))} {
		sweep := func(f Family) []Point {
			c, err := Sweep(streams, []Family{f}, SweepConfig{})
			require.NoError(t, err)
			return c[0].Points
		}
		linear := map[string]Family{
			"fixed":    FixedFamilyWith(detector.FixedConfig{RestartJump: jump}, durs(mustRange(t, 90, 400, 12, false))),
			"jacobson": JacobsonFamily(jacobson.Config{InitialTimeout: new(ms(300)), RestartJump: jump}, mustRange(t, 0.25, 8, 12, false)),
			"chen":     ChenFamily(chen.Config{Estimator: est(jump), MinSamples: new(50)}, durs(mustRange(t, 1, 100, 12, true))),
			"2w-fd":    TwoWFDFamily(twowfd.Config{Interval: ms(100), ShortWindowSize: 1, LongWindowSize: 300, MinSamples: new(50), RestartJump: jump}, durs(mustRange(t, 0.1, 100, 12, true))),
		}
		for name, f := range linear {
			if name == "jacobson" && i == 1 {
				// After a restart Jacobson has no sample and τ = T_last +
				// TO_init, not linear in K: the sweep replays per point.
				c, err := Sweep(streams, []Family{f}, SweepConfig{})
				require.NoError(t, err)
				assert.Equal(t, PerPoint, c[0].Method)
			} else {
				checkFastSweep(t, f, hbs)
			}
			p := curves[name]
			p[i] = sweep(f)
			curves[name] = p
		}
		shared := []struct {
			name   string
			f      Family
			method Method
		}{
			{"satzger", SatzgerFamily(satzger.Config{WindowSize: 300, Scale: 0.9, BootstrapInterval: new(ms(100)), MinSamples: new(50), RestartJump: jump}, satzgerSweepThresholds), SharedState},
			{"kappa", KappaFamily(kappa.Config{Estimator: est(jump), MinSamples: new(50)}, kappaSweepThresholds), SharedState},
			{"sfd", SFDFamily(sfd.Config{Estimator: est(jump), MinSamples: new(50), Step: ms(10), SlotHeartbeats: 20,
				Targets: sfd.Targets{MaxTD: ms(250), MaxMistakesPerSecond: 0.01, MinQAP: 0.999}, UseSendTime: true}, durs(sfdSweepMargins)), SharedEstimator},
		}
		for _, s := range shared {
			c := requireSameAsPerPoint(t, s.f, streams, Config{}, s.method, s.name+" %g")
			p := curves[s.name]
			p[i] = c.Points
			curves[s.name] = p
		}
	}
	require.Len(t, curves, 7)
	for name, c := range curves {
		assert.NotEqual(t, c[0], c[1], "%s: the restart rule must matter on this stream", name)
	}
}
