package phi_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three intervals of 100 ms: μ = 100 ms, σ = 0, so σ_eff is the default
// floor μ/100 = 1 ms, and t*(Θ) = 100 ms + 1 ms·z(Θ) for every Θ.
func TestNormalFormGivesEveryThresholdsCrossing(t *testing.T) {
	d := newNormal(t, phi.NormalConfig{Threshold: 8})
	_, _, _, ok := d.Form()
	assert.False(t, ok, "no form before the first heartbeat")
	for i := range 4 {
		d.Observe(hb(uint64(i+1), 100*float64(i)))
	}
	last, mean, sd, ok := d.Form()
	require.True(t, ok)
	assert.Equal(t, ms(300), last)
	assert.Equal(t, 1e8, mean)
	assert.Equal(t, 1e6, sd)
	tau, _ := d.FreshnessPoint()
	tstar := phi.NormalCrossing(mean, sd, phi.ZOfLevel(8))
	assert.Equal(t, tau, last+time.Duration(math.Ceil(tstar)))
	assert.Equal(t, ms(300+100+5.612), tau.Round(time.Microsecond), "z(8) = 5.612")
	assert.InDelta(t, 8, d.Level(last+time.Duration(math.Round(tstar))), 1e-6, "the crossing is where φ reaches Θ")
	assert.Zero(t, phi.NormalCrossing(mean, sd, -1e9), "clamped at 0")
}

// forkable is a φ detector whose history depends on Θ and that forks
// with another threshold (phi.Akka, phi.Normal).
type forkable[D any] interface {
	detector.Detector
	Form() (last time.Duration, mean, sd float64, ok bool)
	Fork(threshold float64) (D, error)
	Threshold() float64
	Window() *detector.Window
	Mean() time.Duration
}

// checkForkFollows feeds hbs to high (Θ = 12) and low (Θ = 3) and, from
// heartbeat 200 on, to a fork of high with Θ = 3, which must follow low
// bit for bit (τ and the form after every heartbeat) while its history
// stays its own; it returns the fork. A threshold Fork rejects is an error.
func checkForkFollows[D forkable[D]](t *testing.T, high, low D, hbs []detector.Heartbeat) D {
	t.Helper()
	var fork D
	forked := false
	for i, h := range hbs {
		if i == 200 {
			var err error
			fork, err = high.Fork(3)
			require.NoError(t, err)
			assert.Equal(t, 3.0, fork.Threshold())
			forked = true
		}
		high.Observe(h)
		low.Observe(h)
		if forked {
			fork.Observe(h)
			a, _ := fork.FreshnessPoint()
			b, _ := low.FreshnessPoint()
			require.Equal(t, b, a, "heartbeat %d", i)
			_, m1, s1, _ := fork.Form()
			_, m2, s2, _ := low.Form()
			require.Equal(t, math.Float64bits(m2), math.Float64bits(m1))
			require.Equal(t, math.Float64bits(s2), math.Float64bits(s1))
		}
	}
	assert.Equal(t, low.Window().Len(), fork.Window().Len())
	assert.NotEqual(t, high.Mean(), fork.Mean(), "the fork's history is its own")
	_, err := high.Fork(-1)
	assert.Error(t, err)
	return fork
}

// jitteredArrivals are 400 heartbeats 100 ms apart with normal jitter of sd
// ms, the one at 300 late by extra ms.
func jitteredArrivals(sd, extra float64) []detector.Heartbeat {
	rng := rand.New(rand.NewPCG(8, 9))
	var hbs []detector.Heartbeat
	for i := range 400 {
		a := ms(100*float64(i) + sd*rng.NormFloat64())
		if i == 300 {
			a += ms(extra)
		}
		hbs = append(hbs, detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
	}
	return hbs
}

// With skip-if-suspected a fork of a detector with another threshold
// follows, bit for bit, a detector built with that threshold, from the
// point where their histories agree on: here an arrival that only Θ = 3
// leaves out (z ≈ 5, between z(3) and z(12)) comes after the fork.
func TestNormalForkFollowsAReplayWithItsThreshold(t *testing.T) {
	cfg := phi.NormalConfig{Threshold: 12, WindowSize: 1000, MinStdDev: new(ms(5))}
	c3 := cfg
	c3.Threshold = 3
	high := newNormal(t, cfg)
	fork := checkForkFollows(t, high, newNormal(t, c3), jitteredArrivals(2, 25))
	assert.Equal(t, high.Window().Len(), fork.Window().Len()+1, "Θ = 12 recorded the interval Θ = 3 left out")
}

// Two detectors that differ in Θ only agree on their history until an
// arrival falls between their freshness points, and agree again once that
// interval has left the window (n = 50 later) and the relearn run it
// started has ended: their forms are then bit-identical.
func TestSameHistoryPartsAndAgreesAgain(t *testing.T) {
	cfg := phi.NormalConfig{Threshold: 12, WindowSize: 50, MinStdDev: new(ms(5))}
	c3 := cfg
	c3.Threshold = 3
	high, low := newNormal(t, cfg), newNormal(t, c3)
	ak, err := phi.NewAkka(phi.AkkaConfig{Threshold: 12, WindowSize: 50, MinStdDev: new(ms(5)), AcceptablePause: new(time.Duration(0))})
	require.NoError(t, err)
	akLow, err := ak.Fork(3)
	require.NoError(t, err)
	var parted, again, akParted int
	for i, h := range jitteredArrivals(2, 25) {
		high.Observe(h)
		low.Observe(h)
		ak.Observe(h)
		akLow.Observe(h)
		same := high.SameHistory(low)
		require.Equal(t, same, low.SameHistory(high))
		require.Equal(t, ak.SameHistory(akLow), akLow.SameHistory(ak))
		if !ak.SameHistory(akLow) {
			akParted++
		}
		switch {
		case i < 300:
			require.True(t, same, "heartbeat %d", i)
			require.True(t, ak.SameHistory(akLow), "heartbeat %d", i)
		case !same && again == 0:
			parted++
		case same && again == 0:
			again = i
		}
		if again > 0 {
			require.True(t, same, "heartbeat %d: agreeing histories stay so", i)
			_, m1, s1, _ := high.Form()
			_, m2, s2, _ := low.Form()
			require.Equal(t, math.Float64bits(m1), math.Float64bits(m2))
			require.Equal(t, math.Float64bits(s1), math.Float64bits(s2))
		}
	}
	assert.Equal(t, 300+50, again, "the late interval leaves high's window 50 intervals later")
	assert.Greater(t, parted, 0)
	assert.Positive(t, akParted, "Akka's Θ = 3 also left the late interval out")
	assert.True(t, ak.SameHistory(akLow), "and agreed again")

	other := c3
	other.MinStdDev = new(ms(6))
	o := newNormal(t, other)
	o2 := newNormal(t, c3)
	assert.False(t, o.SameHistory(o2), "settings differ")
	f, err := o2.Fork(7)
	require.NoError(t, err)
	assert.True(t, o2.SameHistory(f))
}

// FreshnessPointZ gives every threshold the freshness point of a Fork with
// it, from one state: here μ = 100 ms, σ_eff = 1 ms (the floor), so τ(Θ =
// 3) = 300 ms + 100 ms + ⌈1 ms·z(3)⌉ = 403.090233 ms; near the end of the
// Duration range it saturates as FreshnessPoint does.
func TestNormalFreshnessPointZIsTheFork(t *testing.T) {
	d := newNormal(t, phi.NormalConfig{Threshold: 8})
	_, ok := d.FreshnessPointZ(phi.ZOfLevel(3))
	assert.False(t, ok, "no freshness point before the first heartbeat")
	for i := range 4 {
		d.Observe(hb(uint64(i+1), 100*float64(i)))
	}
	tau, ok := d.FreshnessPointZ(phi.ZOfLevel(3))
	require.True(t, ok)
	assert.Equal(t, ms(300)+103_090_233*time.Nanosecond, tau)
	for _, th := range []float64{math.Log10(2), 0.5, 3, 8, 16, 300} {
		f, err := d.Fork(th)
		require.NoError(t, err)
		want, _ := f.FreshnessPoint()
		got, ok := d.FreshnessPointZ(phi.ZOfLevel(th))
		require.True(t, ok)
		assert.Equal(t, want, got, "Θ = %g", th)
	}
	late := newNormal(t, phi.NormalConfig{})
	late.Observe(detector.Heartbeat{Arrival: math.MaxInt64 - time.Millisecond})
	got, _ := late.FreshnessPointZ(phi.ZOfLevel(8))
	assert.Equal(t, time.Duration(math.MaxInt64), got, "saturates")
}

// FreshnessPointsZ is FreshnessPointZ for many thresholds at once, on its
// fast path (T_last and t* below 2^62) as where τ saturates or T_last is
// negative.
func TestNormalFreshnessPointsZ(t *testing.T) {
	zs := []float64{0, phi.ZOfLevel(0.5), phi.ZOfLevel(3), phi.ZOfLevel(8), phi.ZOfLevel(16), 1e300}
	for _, start := range []time.Duration{0, -ms(1000), math.MaxInt64 - ms(1000), 1<<62 - ms(150)} {
		d := newNormal(t, phi.NormalConfig{})
		taus := make([]time.Duration, len(zs))
		for i := range 4 {
			d.Observe(detector.Heartbeat{Arrival: start + ms(50)*time.Duration(i)})
			d.FreshnessPointsZ(zs, taus)
			for j, z := range zs {
				want, _ := d.FreshnessPointZ(z)
				require.Equal(t, want, taus[j], "T_0 = %d, heartbeat %d, z = %g", start, i, z)
			}
		}
		assert.Equal(t, time.Duration(math.MaxInt64), taus[len(zs)-1], "saturates")
	}
}

// ObserveEach leaves every detector as Observe would, in batches of any
// size (here 70 detectors, more than one batch), through skipped
// intervals, relearn runs, duplicates, arrivals going backwards and
// detectors whose arrivals differ from the others'; and, with MaxInterval
// (110 ms, about one interval in four above it) and DivideBySeqGap
// (every tenth heartbeat one sequence number further), through the
// remedies that ObserveEach's common path must leave to recordAccepted.
func TestNormalObserveEachIsObserve(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  phi.NormalConfig
		gaps bool // every tenth heartbeat's sequence number one further
	}{
		{"plain", phi.NormalConfig{WindowSize: 30}, false},
		{"cap-divide", phi.NormalConfig{WindowSize: 30, MaxInterval: new(ms(110)), DivideBySeqGap: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) { observeEachIsObserve(t, c.cfg, c.gaps) })
	}
}

func observeEachIsObserve(t *testing.T, base phi.NormalConfig, gaps bool) {
	var each, one []*phi.Normal
	for i := range 70 {
		cfg := base
		cfg.Threshold = 0.31 + 0.2*float64(i)
		each = append(each, newNormal(t, cfg))
		one = append(one, newNormal(t, cfg))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	at := time.Duration(0)
	for i := range 2000 {
		at += ms(100) + time.Duration(rng.NormFloat64()*float64(ms(15)))
		if i%50 == 0 {
			at += ms(700)
		}
		seq := uint64(i)
		if gaps {
			seq += uint64(i / 10)
		}
		h := detector.Heartbeat{Seq: seq, HasSeq: i%7 != 0, Arrival: at}
		if i%31 == 0 {
			h.Arrival -= ms(500) // backwards: dropped
		}
		phi.ObserveEach(each, h)
		for _, d := range one {
			d.Observe(h)
		}
		if i%13 == 5 {
			// Every third detector, the first of each batch among them,
			// sees one more heartbeat: its arrivals then differ from
			// the others' (ObserveEach checks hb again for it).
			x := detector.Heartbeat{Seq: seq + 1, HasSeq: i%2 == 0, Arrival: at + ms(30)}
			for j := 0; j < len(one); j += 3 {
				each[j].Observe(x)
				one[j].Observe(x)
			}
		}
		for j := range one {
			a, _ := each[j].FreshnessPoint()
			b, _ := one[j].FreshnessPoint()
			require.Equal(t, b, a, "detector %d, heartbeat %d", j, i)
			require.True(t, each[j].SameHistory(one[j]))
			require.Equal(t, one[j].BackwardArrivals(), each[j].BackwardArrivals())
		}
	}
}

// ForkInto gives dst the state Fork would return, dst's window and relearn
// run reused when its window has d's size (a new window otherwise): here
// the fork is taken just after the late heartbeat that Θ = 3 leaves out (a
// relearn run of one interval held), into a detector with another history
// and into one of another window size. Each fork then follows a fresh Fork
// bit for bit while d goes on on its own, so nothing is shared with d.
func TestNormalForkIntoIsFork(t *testing.T) {
	cfg := phi.NormalConfig{Threshold: 3, WindowSize: 1000, MinStdDev: new(ms(5))}
	hbs := jitteredArrivals(2, 25)
	d := newNormal(t, cfg)
	for _, h := range hbs[:301] {
		d.Observe(h)
	}
	require.Equal(t, 299, d.Window().Len(), "300 intervals, the late one left out (held in the relearn run)")

	used := newNormal(t, phi.NormalConfig{Threshold: 12, WindowSize: 1000})
	for _, h := range jitteredArrivals(9, 0)[:50] {
		used.Observe(h)
	}
	usedWindow := used.Window()
	other := newNormal(t, phi.NormalConfig{Threshold: 12, WindowSize: 500})
	otherWindow := other.Window()

	f, err := d.ForkInto(used, 8)
	require.NoError(t, err)
	assert.Same(t, used, f, "into dst")
	assert.Same(t, usedWindow, f.Window(), "dst's window reused")
	g, err := d.ForkInto(other, 8)
	require.NoError(t, err)
	assert.Same(t, other, g, "into dst")
	assert.NotSame(t, otherWindow, g.Window(), "a window of another size is not reused")
	assert.Equal(t, 1000, g.Window().Size())
	h, err := d.ForkInto(nil, 8)
	require.NoError(t, err)

	// want: the fork of a twin of d that goes on no further.
	twin := newNormal(t, cfg)
	for _, h := range hbs[:301] {
		twin.Observe(h)
	}
	want, err := twin.Fork(8)
	require.NoError(t, err)
	// d goes on alone: eleven intervals recorded end its relearn run (K =
	// 10), and one 2 s late starts another in the run's storage.
	at := hbs[300].Arrival
	for i := range 12 {
		at += ms(100)
		if i == 11 {
			at += ms(2000)
		}
		d.Observe(detector.Heartbeat{Seq: uint64(301 + i), HasSeq: true, Arrival: at})
	}
	assert.False(t, d.SameHistory(want), "d went its own way")
	for i, x := range hbs[301:] {
		for _, c := range []*phi.Normal{f, g, h} {
			require.Equal(t, 8.0, c.Threshold())
			require.True(t, c.SameHistory(want), "heartbeat %d", 301+i)
			a, _ := c.FreshnessPoint()
			b, _ := want.FreshnessPoint()
			require.Equal(t, b, a, "heartbeat %d", 301+i)
			c.Observe(x)
		}
		want.Observe(x)
	}

	_, err = d.ForkInto(used, -1)
	assert.Error(t, err)
	assert.True(t, used.SameHistory(want), "a rejected threshold leaves dst unchanged")
	self, err := d.ForkInto(d, 5)
	require.NoError(t, err)
	assert.Same(t, d, self)
	assert.Equal(t, 5.0, d.Threshold(), "into d itself: the threshold changes")
}
