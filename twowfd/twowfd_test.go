package twowfd_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/fdkit/fdkit/twowfd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// common is the trace of docs/algorithms.md's worked examples: Δ = 100 ms,
// heartbeat 4 lost. The offsets A_j − Δ·s_j are 20, 25, 18, 22, 30 ms.
var common = []struct {
	seq uint64
	at  time.Duration
}{{1, 120 * ms}, {2, 225 * ms}, {3, 318 * ms}, {5, 522 * ms}, {6, 630 * ms}}

func feed(t *testing.T, d *twowfd.Detector) {
	t.Helper()
	for _, h := range common {
		d.Observe(detector.Heartbeat{Seq: h.seq, HasSeq: true, Arrival: h.at})
	}
}

// Worked by hand (docs/algorithms.md, “2W-FD”): EA^(1)_7 = 30 + 700 = 730 ms,
// EA^(6)_7 = (20+25+18+22+30)/5 + 700 = 723 ms, τ_7 = max + 50 = 780 ms.
// Heartbeat 7 then arrives 70 ms late (offset 100 ms): EA^(1)_8 = 900 ms,
// EA^(6)_8 = 215/6 + 800 = 835.833333 ms, τ_8 = 950 ms, where NFD-E with
// the long window alone would wait until 885.833333 ms only.
func TestWorkedExample(t *testing.T) {
	d, err := twowfd.New(twowfd.Config{Interval: 100 * ms, ShortWindowSize: 1, LongWindowSize: 6, Margin: new(50 * ms)})
	require.NoError(t, err)
	feed(t, d)
	assert.Equal(t, 730*ms, d.Short().Next())
	assert.Equal(t, 723*ms, d.Long().Next())
	assert.Equal(t, 730*ms, d.ExpectedArrival())
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	assert.Equal(t, 780*ms, tau)
	assert.False(t, d.Suspected(780*ms))
	assert.True(t, d.Suspected(780*ms+1))
	assert.True(t, d.WarmingUp(), "5 of 6 samples")

	d.Observe(detector.Heartbeat{Seq: 7, HasSeq: true, Arrival: 800 * ms})
	assert.Equal(t, 900*ms, d.Short().Next())
	assert.Equal(t, 835833333*time.Nanosecond, d.Long().Next())
	tau, _ = d.FreshnessPoint()
	assert.Equal(t, 950*ms, tau)
	assert.False(t, d.WarmingUp())
	off, scale, ok := d.LinearForm()
	assert.True(t, ok)
	assert.Equal(t, 900*ms, off)
	assert.Equal(t, 1.0, scale)
}

// With n1 = 2 the short estimate is (22+30)/2 + 700 = 726 ms: τ_7 = 776 ms.
// When the short window is the earlier one the long one rules: n1 = 3
// gives (18+22+30)/3 + 700 = 723.333333 ms, still above 723, and a window
// with the early offsets only is below it.
func TestShortWindowSizes(t *testing.T) {
	for _, tc := range []struct {
		n1  int
		tau time.Duration
	}{{2, 776 * ms}, {3, 773333333 * time.Nanosecond}, {6, 773 * ms}} {
		d, err := twowfd.New(twowfd.Config{ShortWindowSize: tc.n1, LongWindowSize: 6, Margin: new(50 * ms)})
		require.NoError(t, err)
		feed(t, d)
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, tc.tau, tau, "n1 = %d", tc.n1)
	}
	// A late heartbeat (4, offset 240 ms) enters the long window but not
	// the short one of 1 (it is stale there), and does not move τ.
	d, err := twowfd.New(twowfd.Config{LongWindowSize: 6, Margin: new(50 * ms)})
	require.NoError(t, err)
	feed(t, d)
	d.Observe(detector.Heartbeat{Seq: 4, HasSeq: true, Arrival: 640 * ms})
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, 780*ms, tau)
	assert.Equal(t, 6, d.Long().Len())
	assert.Equal(t, 1, d.Short().Len())
}

// 2W-FD with n1 = n2 is NFD-E: same τ as chen.Detector on every heartbeat.
func TestEqualWindowsIsChen(t *testing.T) {
	d, err := twowfd.New(twowfd.Config{ShortWindowSize: 50, LongWindowSize: 50, Margin: new(30 * ms)})
	require.NoError(t, err)
	c, err := chen.New(chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 50}, Margin: new(30 * ms)})
	require.NoError(t, err)
	a := time.Duration(0)
	for i := range 500 {
		a += 100*ms + time.Duration((i*7919)%41-20)*ms
		if i%13 == 5 {
			continue // a loss
		}
		hb := detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a}
		d.Observe(hb)
		c.Observe(hb)
		t1, _ := d.FreshnessPoint()
		t2, _ := c.FreshnessPoint()
		require.Equal(t, t2, t1, "heartbeat %d", i)
	}
}

// 2W-FD is never earlier than NFD-E on its long window with the same α.
func TestNeverBeforeLongWindow(t *testing.T) {
	d, err := twowfd.New(twowfd.Config{ShortWindowSize: 1, LongWindowSize: 100, Margin: new(10 * ms)})
	require.NoError(t, err)
	c, err := chen.New(chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 100}, Margin: new(10 * ms)})
	require.NoError(t, err)
	a := time.Duration(0)
	for i := range 1000 {
		a += 100*ms + time.Duration((i*104729)%61-30)*ms
		hb := detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a}
		d.Observe(hb)
		c.Observe(hb)
		t1, _ := d.FreshnessPoint()
		t2, _ := c.FreshnessPoint()
		require.GreaterOrEqual(t, t1, t2, "heartbeat %d", i)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]twowfd.Config{
		"ShortWindowSize -1": {ShortWindowSize: -1},
		"LongWindowSize -1":  {LongWindowSize: -1},
		"ShortWindowSize 11 is larger than LongWindowSize 10": {ShortWindowSize: 11, LongWindowSize: 10},
		"Margin -1ns":   {Margin: new(time.Duration(-1))},
		"Interval -1ns": {Interval: -1},
		"MinSamples 11": {LongWindowSize: 10, MinSamples: new(11)},
	} {
		_, err := twowfd.New(cfg)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), name)
		}
	}
	d, err := twowfd.New(twowfd.Config{})
	require.NoError(t, err)
	assert.Equal(t, 100*ms, d.Margin())
	assert.Equal(t, 1, d.Short().WindowSize())
	assert.Equal(t, 1000, d.Long().WindowSize())
}

func TestConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]twowfd.Config{
		"default": {},
		"small":   {ShortWindowSize: 3, LongWindowSize: 20, Margin: new(5 * ms), MinSamples: new(4), RestartJump: new(uint64(10))},
		"equal":   {ShortWindowSize: 8, LongWindowSize: 8, Margin: new(time.Duration(1))},
	}, twowfd.New, func(_ twowfd.Config, d *twowfd.Detector) detectortest.Config {
		return detectortest.Config{LinearParam: float64(d.Margin())}
	})
}

func BenchmarkObserveSuspected(b *testing.B) {
	d, err := twowfd.New(twowfd.Config{})
	require.NoError(b, err)
	detectortest.Benchmark(b, d)
}

// Side by side with NFD-E on the same loop: the cost of the second window.
func BenchmarkChenObserveSuspected(b *testing.B) {
	d, err := chen.New(chen.Config{})
	require.NoError(b, err)
	detectortest.Benchmark(b, d)
}
