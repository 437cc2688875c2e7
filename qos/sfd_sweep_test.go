package qos

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/sfd"
	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/trace/tracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sfdSweepMargins are the initial margins of the exactness tests, in ms
// (0 becomes 1 ns, as in a lone replay; 40 is repeated).
var sfdSweepMargins = []float64{0, 0.5, 2, 5, 10, 20, 40, 80, 150, 300, 600, 1200, 40}

// checkSFDShared requires the shared-estimator SFD sweep to equal one
// replay per margin in every field of every point, and reports whether some
// margin's SM adapted.
func checkSFDShared(t *testing.T, scfg sfd.Config, hbs []detector.Heartbeat, cfg Config) bool {
	t.Helper()
	f := SFDFamily(scfg, durs(sfdSweepMargins))
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	slow := requireSameAsPerPoint(t, f, streams, cfg, SharedEstimator, "SM1 = %g ms")
	// Again with the TD ranks read from the quiet blocks (quietRanks)
	// on these short streams.
	least := sfdRanksMin
	sfdRanksMin = 64
	fast, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg})
	sfdRanksMin = least
	require.NoError(t, err)
	require.Equal(t, slow.Points, fast[0].Points, "TD ranks from the quiet blocks")
	margins := make([]time.Duration, len(f.Values))
	for i, v := range f.Values {
		margins[i] = sfdMargin(v)
	}
	paths, err := sfd.Margins(scfg, margins, hbs)
	require.NoError(t, err)
	for _, p := range paths {
		if len(p) > 1 {
			return true
		}
	}
	return false
}

func sfdTestConfig(sync bool) sfd.Config {
	return sfd.Config{
		Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 50}, Step: ms(10), SlotHeartbeats: 20,
		Targets:     sfd.Targets{MaxTD: ms(250), MaxMistakesPerSecond: 0.01, MinQAP: 0.999},
		UseSendTime: sync,
	}
}

func TestSFDSharedEstimatorEqualsReplaysOnPresets(t *testing.T) {
	for _, tc := range []struct {
		preset string
		d      time.Duration
		sync   bool
	}{{"jitter", 3 * time.Minute, true}, {"gc-pause", 2 * time.Minute, true}, {"wan", 22 * time.Minute, false}} {
		hbs := presetHeartbeats(t, tc.preset, tc.d, 8)
		t.Run(tc.preset, func(t *testing.T) {
			assert.True(t, checkSFDShared(t, sfdTestConfig(tc.sync), hbs, Config{}), "SM never adapted")
		})
	}
}

func TestSFDSharedEstimatorEqualsReplaysConfigs(t *testing.T) {
	for name, hbs := range agreementTraces() {
		for i, cfg := range sweepReplayConfigs {
			t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) {
				assert.True(t, checkSFDShared(t, sfdTestConfig(i%2 == 0), hbs, cfg))
			})
		}
	}
	// A sender restart (sequence numbers start again) and no targets.
	hbs := generate(genOpts{n: 1500, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.02, seed: 4})
	tail := generate(genOpts{n: 800, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.02, seed: 5})
	off := hbs[len(hbs)-1].Arrival + 2*time.Second
	for _, h := range tail {
		h.Arrival += off
		h.Sent += off
		hbs = append(hbs, h)
	}
	checkSFDShared(t, sfdTestConfig(true), hbs, Config{})
	checkSFDShared(t, sfd.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 30}}, hbs, Config{})
}

func TestSFDSharedEstimatorEqualsReplaysLIP6(t *testing.T) {
	path := tracetest.Shared(t, tracetest.LIP6Excerpt)
	recs, err := trace.ReadFile(path, trace.ReaderConfig{})
	require.NoError(t, err)
	adapted := 0
	for _, st := range trace.Split(recs) {
		t.Run(st.Sender, func(t *testing.T) {
			c := sfdTestConfig(false)
			c.OneWayDelay = ms(50)
			if checkSFDShared(t, c, heartbeats(st.Records), Config{DelayOffset: ms(50)}) {
				adapted++
			}
		})
	}
	assert.Positive(t, adapted)
}

func TestSFDSharedEstimatorFallsBack(t *testing.T) {
	hbs := agreementTraces()["jitter-loss"]
	f := SFDFamily(sfd.Config{MinMargin: ms(5)}, []time.Duration{ms(10), ms(1)})
	c, err := Sweep([]Stream{{Heartbeats: hbs}}, []Family{f}, SweepConfig{})
	require.NoError(t, err)
	assert.Equal(t, PerPoint, c[0].Method)
	assert.Len(t, c[0].Points, 1)
	assert.ErrorContains(t, c[0].Err, "sm1=1")
}

// The quiet blocks of the per-margin replay (sfdSchedule.setQuiet) equal
// the replays where they apply, also with d̄ = 2^50 ns (the TD sums pass
// 2^52 and are no longer taken in int64: sumTD); with arrivals near the end
// of the time.Duration range τ = EA_{ℓ+1} + SM saturates and no block is
// quiet.
func TestSFDQuietBlocksEqualReplays(t *testing.T) {
	hbs := agreementTraces()["jitter-loss"]
	sch := func(hbs []detector.Heartbeat, cfg Config) *sfdSchedule {
		_, et, err := sfd.MarginsTrace(sfdTestConfig(false), nil, hbs)
		require.NoError(t, err)
		tr, err := newSFDTrace(sfdTestConfig(false), et)
		require.NoError(t, err)
		s, err := newSFDSchedule(hbs, tr, cfg)
		require.NoError(t, err)
		s.setQuiet(tr)
		return s
	}
	quiet := func(s *sfdSchedule) int {
		n := 0
		for b := range s.quiet {
			if s.isQuiet(b, ms(300), math.MaxInt) {
				n++
			}
		}
		return n
	}
	cfg := Config{Clock: ClockUnsynchronized}
	s := sch(hbs, cfg)
	require.Positive(t, quiet(s))
	checkSFDShared(t, sfdTestConfig(false), hbs, cfg)

	cfg.DelayOffset = 1 << 50
	s = sch(hbs, cfg)
	require.Positive(t, quiet(s))
	checkSFDShared(t, sfdTestConfig(false), hbs, cfg)

	late := slices.Clone(hbs)
	shift := time.Duration(math.MaxInt64) - late[len(late)-1].Arrival - ms(200)
	for k := range late {
		late[k].Arrival += shift
		late[k].Sent += shift
	}
	s = sch(late, Config{Clock: ClockUnsynchronized})
	require.Zero(t, quiet(s), "τ could saturate")
	checkSFDShared(t, sfdTestConfig(false), late, Config{Clock: ClockUnsynchronized})
}
