package qos

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/trace/tracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// akkaSweepThresholds are the thresholds of the exactness tests: 40 from
// 0.5 to 16 as in the benchmark, plus small ones (y(Θ) < 0 below log10 2)
// and repeated values.
func akkaSweepThresholds(t *testing.T) []float64 {
	v := mustRange(t, 0.5, 16, 40, false)
	return append(v, 0.05, 0.2, 3, 1e-3, 16, 3)
}

// checkAkkaOnePass requires the grouped one-pass Akka sweep to equal one
// replay per threshold in every field of every point, and returns the
// number of groups the pass ended with.
func checkAkkaOnePass(t *testing.T, acfg phi.AkkaConfig, hbs []detector.Heartbeat, cfg Config) int {
	t.Helper()
	f := PhiAkkaFamily(acfg, akkaSweepThresholds(t))
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	slow := requireSameAsPerPoint(t, f, streams, cfg, OnePassGroups, "Φ = %g")

	// The same with small rank windows, so that the TD summary of long
	// streams (values not stored) runs on these short ones too: with a
	// sample of 16 the windows' sides are always heavy (sidesHeavy), with
	// 512 they are not, from 4096 evaluated heartbeats on.
	var groups int
	for _, m := range []int{16, 512} {
		p, pointOf, err := newGroupPass(akkaGroups(acfg), f.Values, cfg)
		require.NoError(t, err)
		p.sampleSize = m
		res, err := p.run(sliceSource(hbs))
		require.NoError(t, err)
		for i := range f.Values {
			require.Equal(t, slow.Points[i].Result, res[pointOf[i]], "Φ = %g, windows from %d samples", f.Values[i], m)
		}
		groups = len(p.grps)
	}
	return groups
}

// akkaTestConfigs are Akka settings under which the thresholds of
// akkaSweepThresholds part: no acceptable pause, so that ordinary jitter and
// losses give φ between 0.5 and 16 at some arrivals.
func akkaTestConfigs() map[string]phi.AkkaConfig {
	return map[string]phi.AkkaConfig{
		"std100ms": {AcceptablePause: new(time.Duration(0)), BootstrapInterval: new(ms(100))},
		"std10ms":  {AcceptablePause: new(time.Duration(0)), MinStdDev: new(ms(10)), BootstrapInterval: new(ms(100)), WindowSize: 200},
		"warm-up":  {AcceptablePause: new(ms(100)), MinStdDev: new(ms(20)), BootstrapInterval: new(ms(100)), MinSamples: new(20), WindowSize: 100},
	}
}

func presetHeartbeats(t *testing.T, name string, d time.Duration, seed uint64) []detector.Heartbeat {
	t.Helper()
	p, err := trace.LookupPreset(name)
	require.NoError(t, err)
	p.Config.Duration = d
	recs, err := trace.Generate(p.Config, trace.NewRand(seed))
	require.NoError(t, err)
	return heartbeats(recs)
}

// groupCheck checks a grouped φ pass against the replays on hbs with the
// model settings named cn and replay settings cfg, and returns the number
// of groups it ended with.
type groupCheck func(t *testing.T, cn string, hbs []detector.Heartbeat, cfg Config) int

// checkGroupsOnPresets runs check with each of the settings cns on
// generated traces with heavy jitter and loss (which also reorders: stale
// heartbeats), sender pauses, and WAN loss bursts with an outage and
// unsynchronized clocks, with and without the per-cell breakdown of the
// confidence intervals (stale arrivals inside mistakes); with the
// settings split the thresholds must part. Under -race -short, where the
// race detector slows these single-goroutine passes tenfold and more
// (3 minutes for the normal φ's 21 cases at load average 25), split runs
// on every trace and each other setting on one of them in turn: every
// setting and every trace still runs.
func checkGroupsOnPresets(t *testing.T, cns []string, split string, check groupCheck) {
	traces := map[string][]detector.Heartbeat{
		"jitter":   presetHeartbeats(t, "jitter", 3*time.Minute, 5),
		"gc-pause": presetHeartbeats(t, "gc-pause", 2*time.Minute, 6),
		"wan":      presetHeartbeats(t, "wan", 22*time.Minute, 7),
	}
	for ti, tn := range slices.Sorted(maps.Keys(traces)) {
		hbs := traces[tn]
		for ci, cn := range cns {
			if testing.Short() && raceOn && cn != split && ci%len(traces) != ti {
				continue
			}
			t.Run(tn+"/"+cn, func(t *testing.T) {
				groups := check(t, cn, hbs, Config{})
				t.Logf("%d heartbeats, %d groups at the end", len(hbs), groups)
				check(t, cn, hbs, Config{Intervals: true})
				if cn == split {
					assert.Greater(t, groups, 1, "the thresholds must part on this trace, or the test does not test splitting")
				}
			})
		}
	}
}

// checkGroupsOnConfigs runs check with settings cn on the agreement traces
// with each of the replay settings: warm-up, recorded mistake intervals,
// forced clock modes with d̄, and duplicates; the thresholds must part.
func checkGroupsOnConfigs(t *testing.T, cn string, check groupCheck) {
	for name, hbs := range agreementTraces() {
		for i, cfg := range sweepReplayConfigs {
			t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) {
				assert.Greater(t, check(t, cn, hbs, cfg), 1)
			})
		}
	}
}

// checkGroupsOnLIP6 runs check with settings cn on every sender of the LIP6
// excerpt (unsynchronized clocks: arrival-based TD); the thresholds must
// part on one sender at least.
func checkGroupsOnLIP6(t *testing.T, cn string, check groupCheck) {
	path := tracetest.Shared(t, tracetest.LIP6Excerpt)
	recs, err := trace.ReadFile(path, trace.ReaderConfig{})
	require.NoError(t, err)
	split := 0
	for _, st := range trace.Split(recs) {
		t.Run(st.Sender, func(t *testing.T) {
			if check(t, cn, heartbeats(st.Records), Config{DelayOffset: ms(50)}) > 1 {
				split++
			}
		})
	}
	assert.Positive(t, split, "no sender made the thresholds part")
}

// checkAkkaNamed is checkAkkaOnePass with the settings of akkaTestConfigs
// named cn.
func checkAkkaNamed(t *testing.T, cn string, hbs []detector.Heartbeat, cfg Config) int {
	t.Helper()
	return checkAkkaOnePass(t, akkaTestConfigs()[cn], hbs, cfg)
}

func TestAkkaOnePassEqualsReplaysOnPresets(t *testing.T) {
	checkGroupsOnPresets(t, slices.Sorted(maps.Keys(akkaTestConfigs())), "std100ms", checkAkkaNamed)
}

func TestAkkaOnePassEqualsReplaysConfigs(t *testing.T) {
	checkGroupsOnConfigs(t, "std100ms", checkAkkaNamed)
}

func TestAkkaOnePassEqualsReplaysLIP6(t *testing.T) {
	checkGroupsOnLIP6(t, "std10ms", checkAkkaNamed)
}

// The grouped pass falls back to one replay per point where it does not
// apply, with the replays' own errors.
func TestAkkaOnePassFallsBack(t *testing.T) {
	hbs := agreementTraces()["jitter-loss"]
	f := PhiAkkaFamily(phi.AkkaConfig{}, []float64{1, -2, 8})
	c, err := Sweep([]Stream{{Heartbeats: hbs}}, []Family{f}, SweepConfig{})
	require.NoError(t, err)
	assert.Equal(t, PerPoint, c[0].Method)
	assert.Len(t, c[0].Points, 2)
	assert.ErrorContains(t, c[0].Err, "threshold=-2")

	f = PhiAkkaFamily(phi.AkkaConfig{}, []float64{1, 8})
	c, err = Sweep([]Stream{{Heartbeats: hbs[:3]}}, []Family{f}, SweepConfig{Config: Config{WarmUp: 10}})
	require.NoError(t, err)
	assert.Equal(t, PerPoint, c[0].Method)
	assert.ErrorContains(t, c[0].Err, "no heartbeat evaluated")
}

// A stream long enough for the TD summary's default rank windows.
func TestAkkaOnePassEqualsReplaysLong(t *testing.T) {
	if testing.Short() {
		t.Skip("a 150,000-heartbeat stream replayed per threshold: not in -short")
	}
	hbs := generate(genOpts{n: 150_000, interval: ms(100), delay: ms(40), spread: ms(15), loss: 0.05, dup: 0.01, pause: 0.002, seed: 9})
	g := checkAkkaOnePass(t, akkaTestConfigs()["std10ms"], hbs, Config{})
	assert.Greater(t, g, 1)
}

// Constant delays and intervals make every TD of a threshold equal, and a
// millisecond clock makes few values: the rank windows' sides are then
// those values (sidesHeavy) and the summary selects among all values; it
// must still equal the replays (with the small windows of checkAkkaOnePass).
func TestAkkaOnePassFewTDValues(t *testing.T) {
	hbs := make([]detector.Heartbeat, 600)
	for k := range hbs {
		sent := time.Duration(k) * ms(100)
		hbs[k] = detector.Heartbeat{Seq: uint64(k), HasSeq: true, Sent: sent, HasSent: true, Arrival: sent + ms(5)}
	}
	acfg := akkaTestConfigs()["std10ms"]
	checkAkkaOnePass(t, acfg, hbs, Config{})
	for k := range hbs {
		// Two delays, 5 ms and 6 ms, the second at one heartbeat in 40.
		if k%40 == 7 {
			hbs[k].Arrival += ms(1)
		}
	}
	checkAkkaOnePass(t, acfg, hbs, Config{})
}

// Heartbeats hours apart make n·max TD_k exceed 2^53: the TD summary then
// takes its sums one TD_k at a time as tdStats does, and so must the
// per-cell sums of the confidence intervals.
func TestAkkaOnePassHugeTDSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	hbs := make([]detector.Heartbeat, 5000)
	for k := range hbs {
		// 5 h apart, with up to a minute of jitter so that the TDs
		// take many values.
		sent := time.Duration(k)*5*time.Hour + time.Duration(rng.Int64N(int64(time.Minute)))
		hbs[k] = detector.Heartbeat{Seq: uint64(k), HasSeq: true, Sent: sent, HasSent: true, Arrival: sent + ms(5)}
	}
	require.Greater(t, float64(len(hbs))*float64(5*time.Hour), float64(1<<53))
	acfg := phi.AkkaConfig{AcceptablePause: new(time.Duration(0)), BootstrapInterval: new(5 * time.Hour), WindowSize: 200}
	checkAkkaOnePass(t, acfg, hbs, Config{Intervals: true})
}
