package phi_test

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pattern feeds d 1,001 heartbeats 100 ms apart (a full window of 1,000
// intervals of 100 ms with the defaults), then the intervals of ivs repeated
// rounds times, and returns, for each heartbeat of the pattern, whether the
// next heartbeat arrives within τ (no suspicion over the interval that
// follows).
func pattern(t *testing.T, d detector.Detector, ivs []time.Duration, rounds int) []bool {
	t.Helper()
	at, seq := time.Duration(0), uint64(0)
	for range 1001 {
		at += 100 * time.Millisecond
		seq++
		d.Observe(detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at})
	}
	var trusted []bool
	for r := range rounds {
		for i, iv := range ivs {
			at += iv
			seq++
			d.Observe(detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at})
			next := ivs[(i+1)%len(ivs)]
			if r == rounds-1 && i == len(ivs)-1 {
				continue
			}
			tau, ok := d.FreshnessPoint()
			require.True(t, ok)
			trusted = append(trusted, tau >= at+next)
		}
	}
	return trusted
}

// A sender that changes for good from one heartbeat every 100 ms to a pair
// (a heartbeat 10 ms after the previous, then a gap) has a lasting new
// rhythm, and it is learnt: every long interval ends after τ, but the 10 ms
// one between two of them does not end the run (K = 10 recorded in a row
// would). Worked by hand with the defaults; heartbeat i of the pattern is a
// 10 ms one for odd i:
//
//   - Normal (n = 1000, Θ = 8, z = 5.612001), gaps of 990 ms: the tenth gap
//     records all ten and the run goes on. After c gaps and c + 1 short
//     intervals the window holds 1000 − 2c − 1 intervals of 100 ms; t* =
//     μ + z·σ is 983.159 ms at c = 30 and 997.800 ms ≥ 990 ms at c = 31, so
//     from heartbeat 62 on (the 31st gap) every gap ends within τ.
//   - Akka (pause 3 s, y(8) = 5.225987), gaps of 5 s: t* = 3.6226 s until the
//     tenth gap (heartbeat 20) records ten; with eleven 10 ms intervals, ten
//     of 5 s and 979 of 100 ms, μ = 148.01 ms, σ = 487.74 ms and t* = 3148.01
//   - 487.74·y(8) = 5696.9 ms ≥ 5 s.
//
// A rule whose run ends at the first interval recorded never learns this:
// the sender is suspected in every gap, for ever (0 below).
func TestRelearnAlternatingFastSlow(t *testing.T) {
	n, err := phi.NewNormal(phi.NormalConfig{})
	require.NoError(t, err)
	trusted := pattern(t, n, []time.Duration{10 * time.Millisecond, 990 * time.Millisecond}, 600)
	assert.Equal(t, 62, firstFrom(trusted), "normal: first pattern heartbeat from which the sender is trusted for good")
	a, err := phi.NewAkka(phi.AkkaConfig{})
	require.NoError(t, err)
	trusted = pattern(t, a, []time.Duration{10 * time.Millisecond, 5 * time.Second}, 300)
	assert.Equal(t, 20, firstFrom(trusted), "akka: first pattern heartbeat from which the sender is trusted for good")
}

// A sender that slows down gradually, by a factor g per heartbeat from
// 100 ms to 5 s and then stays at 5 s, is learnt by every model with its
// defaults: each is trusted for good at the latest 31 heartbeats into the
// steady 5 s, the bound of a step (TestDefaultsLearnALastingRateChange: 31
// for the normal model's window, fewer for the others), since the ramp has
// already put slower intervals into the window.
func TestRelearnGradualSlowdown(t *testing.T) {
	for _, g := range []float64{1.001, 1.01, 1.05, 1.2} {
		var ivs []time.Duration
		for iv := 100.0; iv < 5000; {
			iv *= g
			ivs = append(ivs, time.Duration(iv*1e6))
		}
		ramp := len(ivs)
		for range 1500 {
			ivs = append(ivs, 5*time.Second)
		}
		n, err := phi.NewNormal(phi.NormalConfig{})
		require.NoError(t, err)
		a, err := phi.NewAkka(phi.AkkaConfig{})
		require.NoError(t, err)
		c, err := phi.NewCassandra(phi.CassandraConfig{})
		require.NoError(t, err)
		for name, d := range map[string]detector.Detector{"normal": n, "akka": a, "cassandra": c} {
			f := firstFrom(pattern(t, d, ivs, 1))
			assert.NotZero(t, f, "g=%v %s: never trusted for good", g, name)
			assert.LessOrEqual(t, f, ramp+31, "g=%v %s: trusted for good only from heartbeat %d (ramp of %d)", g, name, f, ramp)
		}
	}
}

// What the rule learns from a failing link, with the normal model's defaults
// after a full window of 100 ms intervals (t* = 105.612 ms): ten outages of
// 30 s with K = 10 intervals of 100 ms between any two are not learnt (t*
// unchanged); ten with a single one between are, since nothing tells
// them from a sender that now sends every 30 s. The window then holds 990
// intervals of 100 ms and ten of 30 s: μ = 399 ms, σ = √(9.0099 − 0.399²) s
// = 2.975012 s, t* = μ + z(8)·σ = 17.095 s, until they leave the window
// 1,000 heartbeats later: the price of not locking out a slower sender.
func TestRelearnLinkDownMostOfTheTime(t *testing.T) {
	for _, between := range []int{10, 1} {
		d, err := phi.NewNormal(phi.NormalConfig{})
		require.NoError(t, err)
		beat := beater(d)
		for range 1001 {
			beat(100 * time.Millisecond)
		}
		for i := range 10 {
			if i > 0 {
				for range between {
					beat(100 * time.Millisecond)
				}
			}
			beat(30 * time.Second)
		}
		e, ok := d.ElapsedFor(8)
		require.True(t, ok)
		if between == 10 {
			durEq(t, 105.612002e6, e, "outages %d heartbeats apart are not learnt", between)
			continue
		}
		mu, sd := 0.399, math.Sqrt(9.0099-0.399*0.399)
		relEq(t, (mu+phi.ZOfLevel(8)*sd)*1e9, float64(e), "outages one heartbeat apart are learnt")
		assert.InDelta(t, 17.095, e.Seconds(), 0.001)
	}
}
