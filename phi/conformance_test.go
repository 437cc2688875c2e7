package phi_test

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The conformance kit on each model's defaults and on the configurations
// the former property test covered (remedies, extreme thresholds, no pause,
// uncapped intervals). p of the linear form is z(Θ) for the normal model
// and Θ for Cassandra's; SkipIfSuspected (the default) makes the window
// depend on Θ, so LinearForm is then never ok.
func TestConformance(t *testing.T) {
	t.Run("normal", func(t *testing.T) {
		detectortest.RunConfigs(t, map[string]phi.NormalConfig{
			"default":   {},
			"learn-all": {SkipIfSuspected: new(false), AcceptablePause: new(300 * time.Millisecond)},
			"remedies": {WindowSize: 20, Threshold: 3, MaxInterval: new(time.Second),
				DivideBySeqGap: true, MinStdDev: new(2 * time.Millisecond)},
			"threshold-250": {WindowSize: 200, Threshold: 250, SkipIfSuspected: new(false)},
		}, phi.NewNormal, func(cfg phi.NormalConfig, d *phi.Normal) detectortest.Config {
			return detectortest.Config{LinearParam: phi.ZOfLevel(d.Threshold()), SkipLinear: detector.OrDefault(cfg.SkipIfSuspected, true)}
		})
	})
	t.Run("akka", func(t *testing.T) {
		detectortest.RunConfigs(t, map[string]phi.AkkaConfig{
			"default": {},
			"tight": {WindowSize: 30, Threshold: 2, AcceptablePause: new(time.Duration(0)),
				MinStdDev: new(time.Millisecond), BootstrapInterval: new(100 * time.Millisecond)},
		}, phi.NewAkka, nil)
	})
	t.Run("cassandra", func(t *testing.T) {
		detectortest.RunConfigs(t, map[string]phi.CassandraConfig{
			"default":  {},
			"uncapped": {WindowSize: 10, Threshold: 1, MaxInterval: new(time.Duration(0))},
		}, phi.NewCassandra, func(_ phi.CassandraConfig, d *phi.Cassandra) detectortest.Config {
			return detectortest.Config{LinearParam: d.Threshold()}
		})
	})
}

// Found by detectortest: with T_last near math.MinInt64, now − T_last
// overflowed for now more than math.MaxInt64 later, so the level went
// negative and decreased in now; an interval that wide entered the window as
// a negative duration.
func TestElapsedWiderThanMaxInt64(t *testing.T) {
	n, err := phi.NewNormal(phi.NormalConfig{})
	require.NoError(t, err)
	a, err := phi.NewAkka(phi.AkkaConfig{})
	require.NoError(t, err)
	c, err := phi.NewCassandra(phi.CassandraConfig{MaxInterval: new(time.Duration(0))})
	require.NoError(t, err)
	for name, d := range map[string]detector.Accrual{"normal": n, "akka": a, "cassandra": c} {
		d.Observe(detector.Heartbeat{Seq: 3, HasSeq: true, Arrival: -9223372036751763041})
		prev := -1.0
		for _, now := range []time.Duration{0, 271825702995655463, math.MaxInt64 / 2, math.MaxInt64} {
			l := d.Level(now)
			assert.GreaterOrEqual(t, l, prev, "%s: Level(%d)", name, now)
			prev = l
		}
	}
	c.Observe(detector.Heartbeat{Seq: 4, HasSeq: true, Arrival: math.MaxInt64 - 1})
	assert.Greater(t, c.Mean(), time.Duration(0), "the interval saturates instead of wrapping")
}

// Found by detectortest once the window's statistics stopped clamping wide
// intervals: a crossing t* beyond the Duration range after a T_last far
// below zero gave τ = T_last + math.MaxInt64 instead of the representable
// T_last + ⌈t*⌉ (or the saturated math.MaxInt64 when that is beyond the
// range).
func TestFreshnessPointCrossingBeyondDurationRange(t *testing.T) {
	c, err := phi.NewCassandra(phi.CassandraConfig{WindowSize: 1, Threshold: 1.1, MaxInterval: new(time.Duration(0))})
	require.NoError(t, err)
	c.Observe(detector.Heartbeat{Arrival: -9e18})
	c.Observe(detector.Heartbeat{Arrival: -5e18}) // the window holds 4e18
	th, mean := 1.1, 4e18
	tstar := th * (mean * math.Ln10) // in float64 as Cassandra does: in [2^63, 2^64), an integer
	require.Greater(t, tstar, 0x1p63)
	tau, ok := c.FreshnessPoint()
	require.True(t, ok)
	assert.Equal(t, time.Duration(-5e18+tstar), tau)
	_, ok = c.ElapsedFor(1.1)
	assert.False(t, ok, "t* itself is beyond the range")

	c.Observe(detector.Heartbeat{Arrival: 0}) // the window holds 5e18: T_last + t* is beyond the range
	tau, _ = c.FreshnessPoint()
	assert.Equal(t, time.Duration(math.MaxInt64), tau)
}
