package satzger_test

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/fdkit/fdkit/satzger"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// The common trace of docs/algorithms.md: arrivals 120, 225, 318, 440, 522,
// 630 ms; intervals 105, 93, 122, 82, 108 ms (sorted 82, 93, 105, 108, 122).
var common = []time.Duration{120 * ms, 225 * ms, 318 * ms, 440 * ms, 522 * ms, 630 * ms}

func feed(d *satzger.Detector) {
	for i, a := range common {
		d.Observe(detector.Heartbeat{Seq: uint64(i + 1), HasSeq: true, Arrival: a})
	}
}

// Worked by hand (docs/algorithms.md, “Satzger's adaptive accrual
// detector”), c = 0.9: at elapsed 100 ms, c·e = 90 ms covers one sample of
// five (L = 0.2); at 120 ms, 108 ms covers four (0.8); at 150 ms all five.
// θ = 0.5: m = ⌈2.5⌉ = 3, I_(3) = 105 ms, t* = 105/0.9 = 116.666667 ms,
// τ = 746.666667 ms.
func TestWorkedExample(t *testing.T) {
	d, err := satzger.New(satzger.Config{WindowSize: 10, Threshold: 0.5})
	require.NoError(t, err)
	feed(d)
	last := 630 * ms
	for _, c := range []struct {
		e time.Duration
		l float64
	}{{0, 0}, {91 * ms, 0}, {100 * ms, 0.2}, {120 * ms, 0.8}, {135*ms + 555555*time.Nanosecond, 0.8}, {150 * ms, 1}, {time.Hour, 1}} {
		assert.Equal(t, c.l, d.Level(last+c.e), "elapsed %v", c.e)
	}
	e, ok := d.ElapsedFor(0.5)
	assert.True(t, ok)
	assert.Equal(t, 116666667*time.Nanosecond, e)
	tau, ok := d.FreshnessPoint()
	assert.True(t, ok)
	assert.Equal(t, 746666667*time.Nanosecond, tau)
	assert.Equal(t, 0.4, d.Level(tau-1))
	assert.Equal(t, 0.6, d.Level(tau))
	assert.False(t, d.Suspected(tau))
	assert.True(t, d.Suspected(tau+1))
	assert.True(t, d.WarmingUp(), "5 of 10 samples")

	// τ is piecewise constant in θ: (0.4, 0.6] all give m = 3, 0.99 and 1
	// give the largest sample: 122/0.9 = 135.555556 ms.
	for _, c := range []struct {
		th float64
		e  time.Duration
	}{{0.2, 91111112}, {0.21, 103333334}, {0.41, 116666667}, {0.6, 116666667}, {0.61, 120000000}, {0.99, 135555556}, {1, 135555556}} {
		e, ok := d.ElapsedFor(c.th)
		assert.True(t, ok)
		assert.Equal(t, c.e, e, "θ = %v", c.th)
		tau, ok := d.FreshnessPointAt(c.th)
		assert.True(t, ok)
		assert.Equal(t, last+c.e, tau, "θ = %v", c.th)
	}
	_, ok = d.ElapsedFor(1.01)
	assert.False(t, ok, "a level above 1 is never reached")
	_, ok = d.FreshnessPointAt(0)
	assert.False(t, ok)
}

// c = 1 is the plain empirical distribution: τ = T_last + I_(m) exactly.
func TestScaleOne(t *testing.T) {
	d, err := satzger.New(satzger.Config{WindowSize: 5, Threshold: 0.8, Scale: 1})
	require.NoError(t, err)
	feed(d)
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, 630*ms+108*ms, tau)
	assert.Equal(t, 0.8, d.Level(738*ms))
	assert.Equal(t, 0.6, d.Level(738*ms-1))
	assert.False(t, d.WarmingUp())
	// The window of 5 slides: a sixth interval (70 ms) evicts 105 ms.
	d.Observe(detector.Heartbeat{Seq: 7, HasSeq: true, Arrival: 700 * ms})
	assert.Equal(t, []time.Duration{93 * ms, 122 * ms, 82 * ms, 108 * ms, 70 * ms}, windowOf(d))
	tau, _ = d.FreshnessPoint()
	assert.Equal(t, 700*ms+108*ms, tau, "sorted 70, 82, 93, 108, 122: m = 4")
}

func windowOf(d *satzger.Detector) []time.Duration {
	w := d.Window()
	out := make([]time.Duration, w.Len())
	for i := range out {
		out[i] = w.At(i)
	}
	return out
}

// Before the first interval the bootstrap sample (1 s) stands in:
// τ = 120 ms + 1 s/0.9 = 1231.111112 ms.
func TestBootstrap(t *testing.T) {
	d, err := satzger.New(satzger.Config{})
	require.NoError(t, err)
	_, ok := d.FreshnessPoint()
	assert.False(t, ok)
	assert.Equal(t, 0.0, d.Level(time.Hour))
	d.Observe(detector.Heartbeat{Seq: 1, HasSeq: true, Arrival: 120 * ms})
	tau, ok := d.FreshnessPoint()
	assert.True(t, ok)
	assert.Equal(t, 1231111112*time.Nanosecond, tau)
	assert.Equal(t, 1.0, d.Level(tau))
	assert.Equal(t, 0.0, d.Level(tau-1))
}

// A bootstrap interval of new(0) is a zero sample: τ = T_last, so the
// process is suspected as soon as time passes after the first heartbeat.
func TestBootstrapZero(t *testing.T) {
	d, err := satzger.New(satzger.Config{BootstrapInterval: new(time.Duration(0))})
	require.NoError(t, err)
	d.Observe(detector.Heartbeat{Seq: 1, HasSeq: true, Arrival: 120 * ms})
	tau, ok := d.FreshnessPoint()
	assert.True(t, ok)
	assert.Equal(t, 120*ms, tau)
	assert.False(t, d.Suspected(120*ms))
	assert.True(t, d.Suspected(120*ms+1))
	assert.Equal(t, 1.0, d.Level(120*ms))
}

// Stale, duplicate and backwards heartbeats are ignored; a restart records
// no interval.
func TestAwkwardInput(t *testing.T) {
	d, err := satzger.New(satzger.Config{WindowSize: 10, Scale: 1, RestartJump: new(uint64(50))})
	require.NoError(t, err)
	feed(d)
	d.Observe(detector.Heartbeat{Seq: 6, HasSeq: true, Arrival: 700 * ms}) // duplicate
	d.Observe(detector.Heartbeat{Seq: 3, HasSeq: true, Arrival: 710 * ms}) // stale
	d.Observe(detector.Heartbeat{Arrival: 600 * ms})                       // unnumbered, backwards
	assert.Equal(t, 5, d.Window().Len())
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, 630*ms+122*ms, tau)
	d.Observe(detector.Heartbeat{Seq: 1000, HasSeq: true, Arrival: 800 * ms}) // a gap: one long interval
	assert.Equal(t, 170*ms, d.Window().At(5))
	// Exactly RestartJump below the largest number is stale, as in
	// chen.Estimator; one more is a restart.
	d.Observe(detector.Heartbeat{Seq: 950, HasSeq: true, Arrival: 900 * ms})
	tau, _ = d.FreshnessPoint()
	assert.Equal(t, 800*ms+170*ms, tau, "sequence number 950 is stale, not a restart")
	d.Observe(detector.Heartbeat{Seq: 2, HasSeq: true, Arrival: 5 * time.Second}) // restart
	assert.Equal(t, 6, d.Window().Len(), "no interval across a restart")
	tau, _ = d.FreshnessPoint()
	assert.Equal(t, 5*time.Second+170*ms, tau)
	d.Observe(detector.Heartbeat{Seq: 3, HasSeq: true, Arrival: 5*time.Second + 100*ms})
	assert.Equal(t, 7, d.Window().Len())
}

func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]satzger.Config{
		"WindowSize -1":          {WindowSize: -1},
		"Threshold 1.5":          {Threshold: 1.5},
		"Threshold -0.5":         {Threshold: -0.5},
		"Threshold NaN":          {Threshold: math.NaN()},
		"Scale -1":               {Scale: -1},
		"Scale +Inf":             {Scale: math.Inf(1)},
		"BootstrapInterval -1ns": {BootstrapInterval: new(time.Duration(-1))},
		"MinSamples 11":          {WindowSize: 10, MinSamples: new(11)},
	} {
		_, err := satzger.New(cfg)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), name)
		}
	}
}

func TestConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]satzger.Config{
		"default": {},
		"small":   {WindowSize: 7, Threshold: 0.5, Scale: 1, MinSamples: new(3), RestartJump: new(uint64(5))},
		"tiny":    {WindowSize: 1, Threshold: 1e-9, Scale: 3.7, BootstrapInterval: new(time.Nanosecond)},
		"huge-c":  {WindowSize: 30, Threshold: 1, Scale: 1e-12},
	}, satzger.New, nil)
}

func BenchmarkObserveSuspected(b *testing.B) {
	d, err := satzger.New(satzger.Config{})
	require.NoError(b, err)
	detectortest.Benchmark(b, d)
}

func BenchmarkObserveLevel(b *testing.B) {
	d, err := satzger.New(satzger.Config{})
	require.NoError(b, err)
	detectortest.BenchmarkLevel(b, d)
}
