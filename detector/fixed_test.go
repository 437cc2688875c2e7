package detector_test

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commonTrace is the six-heartbeat example of docs/algorithms.md,
// “Conventions and the common trace” (Δ = 100 ms).
var commonArrivals = []float64{120, 225, 318, 440, 522, 630}

func TestFixedCommonTrace(t *testing.T) {
	f, err := detector.NewFixed(detector.FixedConfig{Timeout: new(300 * time.Millisecond)})
	require.NoError(t, err)
	_, ok := f.FreshnessPoint()
	assert.False(t, ok)
	assert.False(t, f.Suspected(ms(1e6)), "nothing is suspected before the first heartbeat")
	for i, a := range commonArrivals {
		f.Observe(detector.Heartbeat{Seq: uint64(i + 1), HasSeq: true, Arrival: ms(a)})
	}
	tau, ok := f.FreshnessPoint()
	require.True(t, ok)
	assert.Equal(t, ms(930), tau) // docs/algorithms.md, “Fixed timeout”: τ = 630 + 300
	assert.False(t, f.Suspected(ms(930)), "strict: not suspected at τ")
	assert.True(t, f.Suspected(ms(930)+1))
	off, scale, ok := f.LinearForm()
	assert.True(t, ok)
	assert.Equal(t, ms(630), off)
	assert.Equal(t, 1.0, scale)
}

func TestFixedDefaultsAndErrors(t *testing.T) {
	f, err := detector.NewFixed(detector.FixedConfig{})
	require.NoError(t, err)
	assert.Equal(t, detector.DefaultTimeout, f.Timeout())
	_, err = detector.NewFixed(detector.FixedConfig{Timeout: new(time.Duration(-1))})
	assert.Error(t, err)
}

func TestFixedStaleDuplicateAndBackwards(t *testing.T) {
	f, _ := detector.NewFixed(detector.FixedConfig{Timeout: new(100 * time.Millisecond)})
	f.Observe(detector.Heartbeat{Seq: 5, HasSeq: true, Arrival: ms(500)})
	f.Observe(detector.Heartbeat{Seq: 5, HasSeq: true, Arrival: ms(700)}) // duplicate
	f.Observe(detector.Heartbeat{Seq: 3, HasSeq: true, Arrival: ms(800)}) // stale
	tau, _ := f.FreshnessPoint()
	assert.Equal(t, ms(600), tau)
	g, _ := detector.NewFixed(detector.FixedConfig{Timeout: new(100 * time.Millisecond)})
	g.Observe(detector.Heartbeat{Arrival: ms(500)})
	g.Observe(detector.Heartbeat{Arrival: ms(400)}) // clock went backwards
	tau, _ = g.FreshnessPoint()
	assert.Equal(t, ms(600), tau)
	// Sequence number 0 is valid.
	h, _ := detector.NewFixed(detector.FixedConfig{Timeout: new(time.Second)})
	h.Observe(detector.Heartbeat{Seq: 0, HasSeq: true, Arrival: ms(10)})
	h.Observe(detector.Heartbeat{Seq: 0, HasSeq: true, Arrival: ms(20)})
	tau, _ = h.FreshnessPoint()
	assert.Equal(t, ms(1010), tau)
}

func BenchmarkFixedObserveQuery(b *testing.B) {
	f, _ := detector.NewFixed(detector.FixedConfig{})
	detectortest.Benchmark(b, f)
}

func TestFixedSenderRestartAndSaturation(t *testing.T) {
	f, _ := detector.NewFixed(detector.FixedConfig{Timeout: new(time.Second)})
	f.Observe(detector.Heartbeat{Seq: 5000, HasSeq: true, Arrival: ms(100)})
	f.Observe(detector.Heartbeat{Seq: 4950, HasSeq: true, Arrival: ms(200)}) // stale, within the jump
	tau, _ := f.FreshnessPoint()
	assert.Equal(t, ms(1100), tau)
	f.Observe(detector.Heartbeat{Seq: 0, HasSeq: true, Arrival: ms(300)}) // restarted sender
	tau, _ = f.FreshnessPoint()
	assert.Equal(t, ms(1300), tau)
	f.Observe(detector.Heartbeat{Seq: 1, HasSeq: true, Arrival: ms(400)})
	tau, _ = f.FreshnessPoint()
	assert.Equal(t, ms(1400), tau)

	g, _ := detector.NewFixed(detector.FixedConfig{Timeout: new(time.Duration(math.MaxInt64))})
	g.Observe(detector.Heartbeat{Arrival: ms(10)})
	tau, _ = g.FreshnessPoint()
	assert.Equal(t, time.Duration(math.MaxInt64), tau)
	assert.False(t, g.Suspected(ms(1e9)))
}

// The conformance kit on the fixed timeout (docs/algorithms.md, “Fixed
// timeout”): τ = T_last + T never moves backwards on a later heartbeat, and
// there is no warm-up.
func TestFixedConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]detector.FixedConfig{
		"default":         {},
		"250ms-restart-5": {Timeout: new(250 * time.Millisecond), RestartJump: new(uint64(5))},
		"1ns":             {Timeout: new(time.Duration(1))},
	}, detector.NewFixed, func(_ detector.FixedConfig, f *detector.Fixed) detectortest.Config {
		return detectortest.Config{LinearParam: float64(f.Timeout()), TauNonDecreasing: true, NoWarmUp: true}
	})
}

// A timeout of 0 is sayable (new(0)): τ is the newest arrival itself;
// nil is DefaultTimeout.
func TestFixedTimeoutZero(t *testing.T) {
	d, err := detector.NewFixed(detector.FixedConfig{Timeout: new(time.Duration(0))})
	require.NoError(t, err)
	d.Observe(detector.Heartbeat{Arrival: 5 * time.Second})
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, 5*time.Second, tau)
	assert.True(t, d.Suspected(5*time.Second+1))
	d, err = detector.NewFixed(detector.FixedConfig{})
	require.NoError(t, err)
	assert.Equal(t, detector.DefaultTimeout, d.Timeout())
}
