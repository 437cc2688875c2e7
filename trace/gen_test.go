package trace

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestGenerateDeterministic(t *testing.T) {
	p, err := LookupPreset("jitter")
	require.NoError(t, err)
	a, err := Generate(p.Config, NewRand(7))
	require.NoError(t, err)
	b, err := Generate(p.Config, NewRand(7))
	require.NoError(t, err)
	c, err := Generate(p.Config, NewRand(8))
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
}

func TestGenerateRoundTrip(t *testing.T) {
	for _, name := range Presets() {
		p, err := LookupPreset(name)
		require.NoError(t, err)
		cfg := p.Config
		cfg.Duration = min(cfg.Duration, 2*time.Minute)
		recs, err := Generate(cfg, NewRand(1))
		require.NoError(t, err)
		require.NotEmpty(t, recs)
		h := Header{Version: 1, Interval: cfg.Interval, Meta: map[string]string{"preset": name, "seed": "1"}}
		for _, comp := range []Compression{NoCompression, Gzip, XZ} {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, h, comp)
			require.NoError(t, err)
			for _, r := range recs {
				require.NoError(t, w.Write(r))
			}
			require.NoError(t, w.Close())
			r, err := NewReader(&buf, ReaderConfig{})
			require.NoError(t, err)
			got, err := r.ReadAll()
			require.NoError(t, err)
			assert.Equal(t, h, r.Header(), name)
			require.Equal(t, recs, got, name)
		}
	}
}

func TestGenerateSortedAndShape(t *testing.T) {
	recs, err := Generate(GenConfig{
		Interval: 10 * time.Millisecond, Duration: 10 * time.Second,
		Delay:       Delay{Dist: DelayNormal, Mean: 50 * time.Millisecond, SD: 20 * time.Millisecond},
		SenderStart: time.Hour, ReceiverStart: 2 * time.Hour,
	}, NewRand(3))
	require.NoError(t, err)
	require.Len(t, recs, 1000)
	for i := 1; i < len(recs); i++ {
		require.LessOrEqual(t, recs[i-1].Arrival, recs[i].Arrival)
	}
	s := Summarize(recs)
	assert.Positive(t, s.Reordered, "a 20 ms delay s.d. at Δ 10 ms reorders heartbeats")
	assert.Equal(t, uint64(0), s.Lost)
	assert.Equal(t, 10*time.Millisecond, s.Interval)
	for _, r := range recs {
		assert.Equal(t, "p", r.Sender)
		assert.Equal(t, time.Hour+time.Duration(r.Seq)*10*time.Millisecond, r.Sent)
	}
}

// Tolerances: at least 5 standard errors of the estimate for the sample
// sizes used, so a correct generator fails with negligible probability (and
// never, for the fixed seeds).

func TestGenerateBernoulliLoss(t *testing.T) {
	n := 200000
	recs, err := Generate(GenConfig{Interval: time.Millisecond, Duration: time.Duration(n) * time.Millisecond,
		Loss: Loss{Model: LossBernoulli, P: 0.15}}, NewRand(11))
	require.NoError(t, err)
	s := Summarize(recs)
	// standard error sqrt(.15·.85/2e5) = 0.0008
	assert.InDelta(t, 0.15, s.LossRate, 0.004)
	// Runs of ≥ 2 consecutive losses: P(run of length L) geometric.
	assert.InDelta(t, 1/(1-0.15), float64(s.Lost)/float64(s.LossBursts), 0.03)
}

func TestGenerateGilbertElliott(t *testing.T) {
	n := 400000
	if testing.Short() {
		n = 200000
	}
	recs, err := Generate(GenConfig{Interval: time.Millisecond, Duration: time.Duration(n) * time.Millisecond,
		Loss: GilbertElliott(0.02, 8)}, NewRand(5))
	require.NoError(t, err)
	s := Summarize(recs)
	// About n·0.02/8 = 500..1000 bursts of geometric length (mean 8, s.d.
	// 7.5): the mean burst length has a standard error ≤ 0.34.
	meanBurst := float64(s.Lost) / float64(s.LossBursts)
	assert.InDelta(t, 8, meanBurst, 1.7)
	// The loss rate is a sum of burst lengths: standard error ≤ 0.0012.
	assert.InDelta(t, 0.02, s.LossRate, 0.006)
	assert.Greater(t, s.LongestBurst, uint64(30))
}

func TestGenerateDelayMeans(t *testing.T) {
	n := 50000
	if testing.Short() {
		n = 20000
	}
	unit := distuv.UnitNormal
	// truncated normal N(80, 60) at 0: mean μ + σ·λ with λ = φ(a)/(1−Φ(a)),
	// a = −μ/σ, and s.d. σ·sqrt(1 + a·λ − λ²)
	a := -80.0 / 60
	lambda := unit.Prob(a) / (1 - unit.CDF(a))
	truncMean := 80 + 60*lambda
	truncSD := 60 * math.Sqrt(1+a*lambda-lambda*lambda)
	cases := []struct {
		name string
		d    Delay
		mean float64 // ms
		sd   float64 // ms, of one delay; tolerance is 6 standard errors
	}{
		{"constant", Delay{Dist: DelayConstant, Base: 2 * ms, Mean: 3 * ms}, 5, 0},
		{"normal", Delay{Dist: DelayNormal, Mean: 10 * ms, SD: 2 * ms}, 10, 2},
		{"truncated normal", Delay{Dist: DelayNormal, Mean: 80 * ms, SD: 60 * ms}, truncMean, truncSD},
		{"lognormal", Delay{Dist: DelayLogNormal, Base: 100 * ms, Mean: 10 * ms, SD: 5 * ms}, 110, 5},
		// Pareto α = 3, x_m = 20/3: variance x_m²·α/((α−1)²(α−2)) = 100/3
		{"pareto", Delay{Dist: DelayPareto, Mean: 10 * ms, Alpha: 3}, 10, math.Sqrt(100.0 / 3)},
	}
	for _, c := range cases {
		recs, err := Generate(GenConfig{Interval: time.Second, Duration: time.Duration(n) * time.Second, Delay: c.d}, NewRand(9))
		require.NoError(t, err, c.name)
		require.Len(t, recs, n)
		var sum float64
		for _, r := range recs {
			d := r.Arrival - r.Sent
			require.GreaterOrEqual(t, d, time.Duration(0), c.name)
			sum += float64(d) / 1e6
		}
		tol := 6*c.sd/math.Sqrt(float64(n)) + 1e-6 // + rounding to whole ns
		assert.InDelta(t, c.mean, sum/float64(n), tol, c.name)
	}
	assert.InDelta(t, 90.83, truncMean, 0.01)
}

func TestGeneratePausesAndCrash(t *testing.T) {
	p, err := LookupPreset("gc-pause")
	require.NoError(t, err)
	recs, err := Generate(p.Config, NewRand(2))
	require.NoError(t, err)
	s := Summarize(recs)
	assert.Equal(t, uint64(0), s.Lost, "pauses are not losses")
	var gaps []time.Duration
	for i := 1; i < len(recs); i++ {
		if d := recs[i].Arrival - recs[i-1].Arrival; d > 300*ms {
			gaps = append(gaps, d)
		}
	}
	require.Len(t, gaps, 3)
	for _, g := range gaps {
		// from the last send before the pause (≤ 100 ms before it) to the
		// resume send at its end, ± delay differences.
		assert.InDelta(t, 650, float64(g)/1e6, 70)
	}
	// The resume heartbeat is sent exactly at the end of each pause.
	for _, w := range p.Config.Pauses {
		found := false
		for _, r := range recs {
			found = found || r.Sent == w.At+w.Length
		}
		assert.True(t, found, "resume heartbeat at %v", w.At+w.Length)
	}

	cfg := p.Config
	cfg.CrashAt = 45 * time.Second
	recs, err = Generate(cfg, NewRand(2))
	require.NoError(t, err)
	var last time.Duration
	for _, r := range recs {
		assert.Less(t, r.Sent, cfg.CrashAt)
		last = max(last, r.Sent)
	}
	assert.Greater(t, last, cfg.CrashAt-101*ms)
}

func TestPresetWan(t *testing.T) {
	p, err := LookupPreset("wan")
	require.NoError(t, err)
	recs, err := Generate(p.Config, NewRand(1))
	require.NoError(t, err)
	s := Summarize(recs)
	assert.GreaterOrEqual(t, s.LongestBurst, uint64(1100))
	assert.Less(t, s.LongestBurst, uint64(1200))
	assert.InDelta(t, 103.5, float64(s.Interval)/1e6, 0.001)
	// Inter-arrival s.d. between consecutive sequence numbers (no loss in
	// between): the JAIST-EPFL trace had 0.189 ms.
	var ia []float64
	for i := 1; i < len(recs); i++ {
		if recs[i].Seq == recs[i-1].Seq+1 {
			ia = append(ia, float64(recs[i].Arrival-recs[i-1].Arrival)/1e6)
		}
	}
	_, sd := stat.MeanStdDev(ia, nil)
	assert.InDelta(t, 0.19, sd, 0.05)
	assert.InDelta(t, 1.5, s.DriftPPM, 0.2)
	// The outage alone is 1,100 of ~34,800 heartbeats; the rest is ~0.4 %.
	assert.InDelta(t, 0.004+1100.0/34783, s.LossRate, 0.004)
	assert.Greater(t, s.LossBursts, 1)
	assert.False(t, math.IsNaN(s.DriftPPM))
}

func TestGenerateInvalid(t *testing.T) {
	bad := []GenConfig{
		{Interval: -1},
		{Duration: -1},
		{Jitter: -1},
		// A s.d. beyond Δ cannot be honoured under the ±Δ/2 truncation
		// (at 1000Δ every send came out on time).
		{Interval: 100 * ms, Jitter: 100*ms + 1},
		{Jitter: 1000 * DefaultGenInterval},
		{Delay: Delay{Dist: DelayPareto, Mean: ms, Alpha: 1}},
		{Delay: Delay{Dist: DelayLogNormal, SD: ms}},
		{Delay: Delay{Dist: 99}},
		{Loss: Loss{Model: LossBernoulli, P: 1.5}},
		{Loss: Loss{Model: LossGilbertElliott, GoodToBad: math.NaN()}},
		{Pauses: []Period{{At: 0, Length: 2 * time.Second}, {At: time.Second, Length: time.Second}}},
		{Outages: []Period{{At: 0, Length: 0}}},
		{DriftPPM: math.NaN()},
		// At+Length beyond the Duration range: refused, not a pause
		// silently ignored because its end wraps negative.
		{Pauses: []Period{{At: time.Second, Length: math.MaxInt64}}},
		{Outages: []Period{{At: time.Second, Length: math.MaxInt64 - 10}}},
	}
	for i, c := range bad {
		_, err := Generate(c, NewRand(1))
		assert.Error(t, err, "case %d", i)
	}
	_, err := Generate(GenConfig{}, nil)
	assert.Error(t, err)
	_, err = Generate(GenConfig{Interval: 10 * ms, Jitter: 20 * ms}, NewRand(1))
	assert.ErrorContains(t, err, "trace: generator: jitter 20ms is larger than the interval 10ms: sends are truncated to ±Δ/2 to stay ordered, so a larger s.d. cannot be honoured")
	_, err = Generate(GenConfig{Interval: 10 * ms, Jitter: 10 * ms, Duration: time.Second}, NewRand(1))
	assert.NoError(t, err, "a s.d. of Δ is allowed")
	_, err = LookupPreset("nope")
	assert.ErrorContains(t, err, "gc-pause")
	assert.Equal(t, []string{"gc-pause", "jitter", "stable", "wan"}, Presets())
}

func TestGenerateSenderJitter(t *testing.T) {
	// Send instants k·Δ + e_k with e_k ~ N(0, 2 ms): send intervals have
	// s.d. √2·2 ms. 20,000 intervals: standard error of the s.d. ≈ 0.014 ms.
	recs, err := Generate(GenConfig{Interval: 100 * ms, Duration: 20000 * 100 * ms, Jitter: 2 * ms,
		Delay: Delay{Dist: DelayConstant, Mean: 10 * ms}}, NewRand(4))
	require.NoError(t, err)
	s := Summarize(recs)
	assert.InDelta(t, math.Sqrt2*2, float64(s.SenderJitter)/1e6, 0.08)
	assert.InDelta(t, 100, float64(s.SendInterval.Mean)/1e6, 0.01)
	// Constant delay: the clock fit sees no drift and A − σ = 10 ms.
	assert.InDelta(t, 0, s.DriftPPM, 1e-9)
	assert.Equal(t, 10*ms, s.ClockOffset)
}

func TestGenerateTooLong(t *testing.T) {
	_, err := Generate(GenConfig{Interval: time.Nanosecond, Duration: time.Hour}, NewRand(1))
	assert.ErrorContains(t, err, "more than")
}

func TestMergeSplit(t *testing.T) {
	var streams [][]Record
	for i, name := range []string{"a", "b", "c"} {
		recs, err := Generate(GenConfig{Sender: name, Duration: 10 * time.Second,
			Delay: Delay{Dist: DelayNormal, Mean: 50 * ms, SD: 30 * ms}}, NewRand(uint64(i)))
		require.NoError(t, err)
		streams = append(streams, recs)
	}
	all := Merge(streams...)
	require.Len(t, all, 300)
	for i := 1; i < len(all); i++ {
		require.LessOrEqual(t, all[i-1].Arrival, all[i].Arrival)
	}
	split := Split(all)
	require.Len(t, split, 3)
	for i := range split {
		assert.Equal(t, streams[i], split[i].Records)
	}
}

// Instants beyond the Duration range are an error, not wrapped values
// (which came out as negative arrivals sorted before the others).
func TestGenerateOverflow(t *testing.T) {
	for i, c := range []GenConfig{
		{ReceiverStart: math.MaxInt64 - time.Second},
		{SenderStart: math.MaxInt64 - time.Second},
		{ReceiverStart: math.MaxInt64 - math.MaxInt64/8, Delay: Delay{Base: math.MaxInt64 / 8, Mean: math.MaxInt64 / 8}},
		{ReceiverStart: math.MaxInt64 - 3*time.Second, DriftPPM: 999_999, Duration: 2 * time.Second},
	} {
		_, err := Generate(c, NewRand(1))
		assert.ErrorContains(t, err, "overflows time.Duration", "case %d", i)
	}
	// Refused before the first record when the last heartbeats cannot fit
	// (fdgen wrote half a trace, ending mid-line, before the error).
	_, err := NewGenerator(GenConfig{ReceiverStart: math.MaxInt64 - 30*time.Second}, NewRand(1))
	assert.ErrorContains(t, err, "trace: generator: ReceiverStart 2562047h46m46.854775807s + (send instants up to 1m0.05s + delay base and mean 0s) × (1 + drift 0 ppm) overflows time.Duration")
	_, err = NewGenerator(GenConfig{SenderStart: math.MaxInt64 - 30*time.Second}, NewRand(1))
	assert.ErrorContains(t, err, "trace: generator: SenderStart 2562047h46m46.854775807s + send instants up to 1m0.05s overflows time.Duration")
	_, err = NewGenerator(GenConfig{ReceiverStart: math.MaxInt64 - 30*time.Second, CrashAt: 20 * time.Second}, NewRand(1))
	assert.NoError(t, err, "nothing is sent after the crash")
	// A delay beyond the sampler's cap (MaxInt64/4) is refused, never
	// silently clamped.
	_, err = Generate(GenConfig{Delay: Delay{Base: math.MaxInt64 - 10}}, NewRand(1))
	assert.ErrorContains(t, err, "delay")
	// Close to the limits but inside them is fine.
	recs, err := Generate(GenConfig{ReceiverStart: math.MaxInt64 - 2*time.Minute, SenderStart: math.MinInt64 + time.Second}, NewRand(1))
	require.NoError(t, err)
	require.Len(t, recs, 600)
	assert.Equal(t, time.Duration(math.MaxInt64-2*time.Minute), recs[0].Arrival)
	assert.Greater(t, recs[599].Arrival, recs[0].Arrival)
}
