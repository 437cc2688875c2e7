package chen_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tol = 1e-9 // relative, docs/algorithms.md, “Conventions and the common trace”

func ms(x float64) time.Duration { return time.Duration(math.Round(x * float64(time.Millisecond))) }

func hb(seq uint64, at float64) detector.Heartbeat {
	return detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: ms(at)}
}

// See docs/algorithms.md, “Conventions and the common trace”, s = 1..6.
var commonArrivals = []float64{120, 225, 318, 440, 522, 630}

func newDet(t testing.TB, cfg chen.Config) *chen.Detector {
	d, err := chen.New(cfg)
	require.NoError(t, err)
	return d
}

func cfg(n int, alpha float64) chen.Config {
	return chen.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: n}, Margin: new(ms(alpha))}
}

// docs/algorithms.md, “Chen's NFD-E”: n = 6, α = 50: offsets 20, 25, 18, 40,
// 22, 30, EA_7 = 725.833333, τ_7 = 775.833333. EA after each heartbeat as in
// docs/algorithms.md, “Bertier's adaptive margin”.
func TestCommonTrace(t *testing.T) {
	d := newDet(t, cfg(6, 50))
	wantEA := []float64{220, 322.5, 421, 525.75, 625, 725.8333333333334}
	for i, a := range commonArrivals {
		d.Observe(hb(uint64(i+1), a))
		assert.InEpsilon(t, wantEA[i]*1e6, float64(d.Estimator().Next()), tol, "EA after heartbeat %d", i+1)
		assert.Equal(t, i < 5, d.WarmingUp())
	}
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	assert.InEpsilon(t, 775.833333*1e6, float64(tau), tol)
	assert.InEpsilon(t, 725.833333e6, d.Estimator().ExpectedArrivalSince(7, 0), tol)
	assert.InEpsilon(t, 925.8333333333334e6, float64(d.Estimator().ExpectedArrival(9)), tol, "EA for any k")
	off, scale, ok := d.LinearForm()
	assert.True(t, ok)
	assert.Equal(t, 1.0, scale)
	assert.Equal(t, tau-ms(50), off)
	assert.False(t, d.Suspected(tau))
	assert.True(t, d.Suspected(tau+1))
}

// docs/algorithms.md, “Chen's NFD-E”, loss example: heartbeat 4 lost, W =
// {1,2,3,5,6}: EA_7 = 723.0 with sequence numbers; the simplified formula,
// which is what heartbeats without numbers give, is 663.0.
func TestLossExample(t *testing.T) {
	withSeq := newDet(t, cfg(6, 50))
	noSeq := newDet(t, cfg(6, 50))
	for i, a := range commonArrivals {
		if i == 3 {
			continue
		}
		withSeq.Observe(hb(uint64(i+1), a))
		noSeq.Observe(detector.Heartbeat{Arrival: ms(a)})
	}
	assert.InEpsilon(t, 723e6, float64(withSeq.Estimator().Next()), tol)
	assert.InEpsilon(t, 663e6, float64(noSeq.Estimator().Next()), tol)
	tau, _ := withSeq.FreshnessPoint()
	assert.Equal(t, ms(773), tau)
}

// docs/algorithms.md, “Replaying a trace”: n = 3, α = 30, heartbeat 7 lost; EA
// and τ after each heartbeat; warm-up ends when the window is full (k = 3).
func TestReplayExampleFreshnessPoints(t *testing.T) {
	d := newDet(t, cfg(3, 30))
	seqs := []uint64{1, 2, 3, 4, 5, 6, 8, 9, 10}
	arr := []float64{120, 225, 318, 440, 522, 630, 835, 990, 1021}
	wantEA := map[int]float64{3: 421, 4: 527.666667, 5: 626.666667, 6: 730.666667, 8: 929, 9: 1051.666667, 10: 1148.666667}
	for i, s := range seqs {
		d.Observe(hb(s, arr[i]))
		assert.Equal(t, s < 3, d.WarmingUp(), "k = %d", s)
		if ea, ok := wantEA[int(s)]; ok {
			tau, _ := d.FreshnessPoint()
			assert.InEpsilon(t, ea*1e6, float64(d.Estimator().Next()), tol, "EA after %d", s)
			assert.InEpsilon(t, (ea+30)*1e6, float64(tau), tol, "τ after %d", s)
		}
	}
}

func TestConfig(t *testing.T) {
	d := newDet(t, chen.Config{})
	assert.Equal(t, chen.DefaultInterval, d.Estimator().Interval())
	assert.Equal(t, chen.DefaultWindowSize, d.Estimator().WindowSize())
	assert.Equal(t, chen.DefaultInterval, d.Margin())
	d.Observe(hb(0, 0))
	assert.True(t, d.WarmingUp(), "default warm-up is a full window")
	one := newDet(t, chen.Config{MinSamples: new(1)})
	one.Observe(hb(0, 0))
	assert.False(t, one.WarmingUp())
	for _, c := range []chen.Config{
		{Estimator: chen.EstimatorConfig{Interval: -1}},
		{Estimator: chen.EstimatorConfig{WindowSize: -3}},
		{Margin: new(time.Duration(-1))},
		{MinSamples: new(-1)},
		{Estimator: chen.EstimatorConfig{WindowSize: 10}, MinSamples: new(11)},
	} {
		_, err := chen.New(c)
		assert.Error(t, err, "%+v", c)
	}
}

// Awkward input, one documented choice each (see Kind and Detector).
func TestAwkwardInput(t *testing.T) {
	t.Run("single heartbeat", func(t *testing.T) {
		d := newDet(t, cfg(6, 50))
		_, ok := d.FreshnessPoint()
		assert.False(t, ok)
		assert.False(t, d.Suspected(ms(1e9)))
		d.Observe(hb(0, 120))
		tau, ok := d.FreshnessPoint()
		assert.True(t, ok)
		assert.Equal(t, ms(270), tau) // A + Δ + α
		assert.True(t, d.WarmingUp(), "τ is returned during warm-up")
	})
	t.Run("zero variance", func(t *testing.T) {
		d := newDet(t, cfg(50, 20))
		for i := range 200 {
			d.Observe(hb(uint64(i), float64(40+100*i)))
		}
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, ms(40+100*199+100+20), tau)
	})
	t.Run("duplicates are dropped", func(t *testing.T) {
		d := newDet(t, cfg(6, 50))
		for i, a := range commonArrivals {
			d.Observe(hb(uint64(i+1), a))
		}
		before, _ := d.FreshnessPoint()
		e := d.Estimator()
		assert.Equal(t, chen.Duplicate, e.Classify(hb(6, 640)))
		assert.Equal(t, chen.Duplicate, e.Classify(hb(3, 640)))
		d.Observe(hb(6, 640))
		d.Observe(hb(3, 650))
		after, _ := d.FreshnessPoint()
		assert.Equal(t, before, after)
		assert.Equal(t, 6, e.Len())
		assert.InEpsilon(t, 725.8333333333334e6, float64(e.Next()), tol)
	})
	t.Run("late heartbeat enters the window but does not extend trust", func(t *testing.T) {
		d := newDet(t, cfg(6, 50))
		for i, a := range commonArrivals {
			if i != 3 {
				d.Observe(hb(uint64(i+1), a))
			}
		}
		before, _ := d.FreshnessPoint()
		e := d.Estimator()
		assert.Equal(t, chen.Late, e.Classify(hb(4, 640)))
		d.Observe(hb(4, 640)) // offset 240
		after, _ := d.FreshnessPoint()
		assert.Equal(t, before, after, "τ moves only when ℓ advances")
		assert.Equal(t, 6, e.Len())
		last, _ := e.Last()
		assert.Equal(t, uint64(6), last)
		// The sample counts from the next fresh heartbeat on: offsets
		// 20, 25, 18, 22, 30, 240 → 25+... evict 20 when 7 arrives at 725.
		d.Observe(hb(7, 725)) // offsets 25, 18, 22, 30, 240, 25: mean 60
		assert.InEpsilon(t, 860e6, float64(e.Next()), tol)
		assert.Equal(t, chen.Duplicate, e.Classify(hb(4, 800)), "now in W")
	})
	t.Run("stale beyond the window is dropped", func(t *testing.T) {
		d := newDet(t, chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 4, RestartJump: new(uint64(math.MaxUint64))}})
		for i := range 10 {
			d.Observe(hb(uint64(i), float64(100*i)))
		}
		assert.Equal(t, chen.Stale, d.Estimator().Classify(hb(5, 1000)))
		assert.Equal(t, chen.Duplicate, d.Estimator().Classify(hb(6, 1000)))
	})
	t.Run("big backwards jump is a restart", func(t *testing.T) {
		d := newDet(t, cfg(6, 50))
		for i := range 500 {
			d.Observe(hb(uint64(i), float64(100*i)))
		}
		e := d.Estimator()
		assert.Equal(t, chen.Duplicate, e.Classify(hb(495, 50_000)), "within the jump: not a restart")
		assert.Equal(t, chen.Restart, e.Classify(hb(2, 60_000)))
		d.Observe(hb(2, 60_000))
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, ms(60_150), tau)
		assert.Equal(t, 1, e.Len())
		assert.True(t, d.WarmingUp())
		last, _ := e.Last()
		assert.Equal(t, uint64(2), last)
	})
	t.Run("numbered arrival going backwards is dropped and counted", func(t *testing.T) {
		d := newDet(t, cfg(6, 50))
		d.Observe(hb(1, 500))
		assert.Equal(t, chen.Backward, d.Estimator().Classify(hb(2, 450)))
		d.Observe(hb(2, 450))
		// only the offset of s = 1 is in the window: EA_2 = 500 + 100
		assert.Equal(t, 1, d.Estimator().Len())
		assert.InEpsilon(t, 600e6, float64(d.Estimator().Next()), tol)
		assert.Equal(t, uint64(1), d.BackwardArrivals())
		d.Observe(hb(3, 700)) // the clock caught up: Fresh again
		assert.Equal(t, 2, d.Estimator().Len())
	})
	t.Run("unnumbered arrival going backwards is dropped", func(t *testing.T) {
		d := newDet(t, cfg(6, 50))
		d.Observe(detector.Heartbeat{Arrival: ms(500)})
		assert.Equal(t, chen.Backward, d.Estimator().Observe(detector.Heartbeat{Arrival: ms(450)}))
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, ms(650), tau)
		assert.Equal(t, uint64(1), d.BackwardArrivals())
	})
	t.Run("gap of hours is counted and ages out", func(t *testing.T) {
		d := newDet(t, cfg(4, 0))
		for i := range 4 {
			d.Observe(hb(uint64(i), float64(100*i)))
		}
		d.Observe(hb(4, 2*3600e3)) // a 2 h pause: offset 2 h − 400 ms
		e := d.Estimator()
		assert.InEpsilon(t, float64(ms(500+(2*3600e3-400)/4)), float64(e.Next()), tol)
		for i := 5; i < 9; i++ {
			d.Observe(hb(uint64(i), 2*3600e3+float64(100*(i-4))))
		}
		assert.Equal(t, ms(2*3600e3+500), e.Next(), "gap aged out after n heartbeats")
	})
	t.Run("burst of losses keeps EA right", func(t *testing.T) {
		d := newDet(t, cfg(10, 0))
		for i := range 10 {
			d.Observe(hb(uint64(i), float64(30+100*i)))
		}
		d.Observe(hb(60, 6030)) // 50 lost
		assert.Equal(t, ms(6130), d.Estimator().Next())
	})
}

// Sequence numbers near 2^64 and instants near 5e16 ns stay exact.
func TestLargeValues(t *testing.T) {
	e, err := chen.NewEstimator(chen.EstimatorConfig{WindowSize: 8})
	require.NoError(t, err)
	base := time.Duration(47816110312853897)
	s0 := uint64(math.MaxUint64 - 20)
	for i := range 10 {
		e.Observe(detector.Heartbeat{Seq: s0 + uint64(i), HasSeq: true, Arrival: base + time.Duration(i)*ms(100) + time.Duration(i%3)})
	}
	// offsets i%3 for i = 2..9: 2,0,1,2,0,1,2,0 → mean 1 ns
	assert.Equal(t, base+ms(1000)+1, e.Next())
	assert.InDelta(t, 1.0, e.ExpectedArrivalSince(s0+10, base+ms(1000)), 1e-9)
}

// reference is a direct transcription of docs/algorithms.md, “Chen's NFD-E”: W
// holds the n most recently accepted (s, A − Δ·s) pairs; EA_{ℓ+1} = mean +
// (ℓ+1)·Δ.
type reference struct {
	n     int
	last  uint64
	lastA time.Duration // arrival of the newest fresh heartbeat
	w     [][2]int64
}

func (r *reference) observe(s uint64, a time.Duration) {
	if len(r.w) > 0 && a < r.lastA {
		return // backward: never a sample
	}
	if len(r.w) > 0 {
		for _, e := range r.w {
			if uint64(e[0]) == s {
				return // duplicate
			}
		}
		if s < r.last && r.last-s >= uint64(r.n) {
			return // stale
		}
	}
	if len(r.w) == 0 || s > r.last {
		r.last, r.lastA = s, a
	}
	r.w = append(r.w, [2]int64{int64(s), int64(a) - int64(s)*1e8})
	if len(r.w) > r.n {
		r.w = r.w[1:]
	}
}

func (r *reference) next() float64 {
	var sum float64
	for _, e := range r.w {
		sum += float64(e[1])
	}
	return sum/float64(len(r.w)) + float64(r.last+1)*1e8
}

// Properties on random streams with jitter, losses, duplicates and late
// heartbeats: EA agrees with the reference; unnumbered streams give the
// simplified formula (Suspected(t) ⇔ t > τ is checked by detectortest in
// TestConformance).
func TestProperties(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 400
	}
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		size := 1 + rng.IntN(50)
		d := newDet(t, cfg(size, float64(rng.IntN(100))))
		unnumbered := newDet(t, cfg(size, 0))
		ref := &reference{n: size}
		var arrivals []time.Duration
		seq := uint64(1000)
		for range n {
			seq += 1 + uint64(rng.IntN(5)/4)
			at := ms(100)*time.Duration(seq) + time.Duration(rng.ExpFloat64()*20e6)
			h := detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at}
			if rng.IntN(10) == 0 { // duplicate or late heartbeat
				h.Seq -= uint64(rng.IntN(2 * size))
			}
			d.Observe(h)
			ref.observe(h.Seq, h.Arrival)
			require.InDelta(t, ref.next(), float64(d.Estimator().Next()), 1)
			if len(arrivals) > 0 && at < arrivals[len(arrivals)-1] {
				require.Equal(t, chen.Backward, unnumbered.Estimator().Observe(detector.Heartbeat{Arrival: at}))
				continue
			}
			require.Equal(t, chen.Fresh, unnumbered.Estimator().Observe(detector.Heartbeat{Arrival: at}))
			arrivals = append(arrivals, at)
			w := arrivals[max(0, len(arrivals)-size):]
			var sum float64
			for _, a := range w {
				sum += float64(a)
			}
			simplified := sum/float64(len(w)) + float64(len(w)+1)/2*1e8
			require.InDelta(t, simplified, float64(unnumbered.Estimator().Next()), 1)
		}
	}
}

func BenchmarkObserveSuspected(b *testing.B) {
	d, _ := chen.New(chen.Config{})
	detectortest.Benchmark(b, d)
}

// A margin meant as "never suspect" near the end of the Duration range:
// τ saturates instead of wrapping to an instant in the far past.
func TestFreshnessPointSaturates(t *testing.T) {
	d := newDet(t, chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 6}, Margin: new(time.Duration(math.MaxInt64))})
	for i, a := range commonArrivals {
		d.Observe(hb(uint64(i+1), a))
	}
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	assert.Equal(t, time.Duration(math.MaxInt64), tau)
	assert.False(t, d.Suspected(ms(1000)))

	near := newDet(t, chen.Config{MinSamples: new(1)})
	start := time.Duration(math.MaxInt64) - 2*time.Second
	for i := range 15 {
		a := start + time.Duration(i)*100*time.Millisecond
		near.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
		assert.False(t, near.Suspected(a), "heartbeat %d", i)
	}
	e := near.Estimator()
	assert.Equal(t, e.Next()-time.Second, e.FreshnessPoint(-time.Second))
	assert.Equal(t, e.Next()+math.MinInt64, e.FreshnessPoint(math.MinInt64), "no overflow: EA is positive")

	low, err := chen.NewEstimator(chen.EstimatorConfig{})
	require.NoError(t, err)
	low.Observe(detector.Heartbeat{Seq: 0, HasSeq: true, Arrival: math.MinInt64 + time.Second})
	assert.Equal(t, time.Duration(math.MinInt64), low.FreshnessPoint(-2*time.Second))
}

// A sender pause without a sequence gap shifts every later A_j − Δ·s_j:
// NFD-E keeps suspecting until about n·(1 − α/P) new samples have entered
// the window (the behaviour documented on Detector).
func TestSenderPauseSuspectsForAboutAWindow(t *testing.T) {
	const n, alpha, pause = 100, 100.0, 500.0
	d := newDet(t, chen.Config{Estimator: chen.EstimatorConfig{WindowSize: n}, Margin: new(ms(alpha))})
	for i := range n {
		d.Observe(hb(uint64(i), float64(100*i)))
	}
	late := 0
	for i := n; i < 3*n; i++ {
		a := float64(100*i) + pause
		if d.Suspected(ms(a)) {
			late++
		}
		d.Observe(hb(uint64(i), a))
	}
	assert.InDelta(t, n*(1-alpha/pause), late, 2)
}

// A forward jump so large that Δ·(s − s0) leaves the Duration range (a
// sender restarting with a clock-based number) is a restart, not a sample
// whose wrapped offset puts τ anywhere, including far in the future, where
// a crash would never be detected.
func TestHugeForwardJumpIsRestart(t *testing.T) {
	for _, jump := range []uint64{1 << 40, 1 << 62, 1<<63 + 12345, math.MaxUint64 - 10} {
		d := newDet(t, chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 10}, Margin: new(ms(50)), MinSamples: new(1)})
		for i := range 20 {
			d.Observe(hb(uint64(i), float64(100*i)))
		}
		e := d.Estimator()
		h := hb(jump, 2000)
		assert.Equal(t, chen.Restart, e.Classify(h), "jump to %d", jump)
		d.Observe(h)
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, ms(2150), tau, "jump to %d: τ = A + Δ + α after the reset", jump)
		assert.Equal(t, 1, e.Len())
		d.Observe(hb(jump+1, 2100))
		tau, _ = d.FreshnessPoint()
		assert.Equal(t, ms(2250), tau, "jump to %d: numbering goes on from the new base", jump)
	}
	// A large jump that still fits is an ordinary burst of losses.
	d := newDet(t, chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 10}})
	d.Observe(hb(0, 0))
	assert.Equal(t, chen.Fresh, d.Estimator().Classify(hb(1<<30, 1e6)))
}

// The conformance kit on the defaults, a small window with a short warm-up,
// and a window that never restarts with a margin of an hour. τ is not
// asserted non-decreasing: EA drops when a late heartbeat's offset leaves
// the window.
func TestConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]chen.Config{
		"default":      {},
		"small-window": {Estimator: chen.EstimatorConfig{WindowSize: 5}, Margin: new(30 * time.Millisecond), MinSamples: new(2)},
		"never-restart": {Estimator: chen.EstimatorConfig{Interval: 50 * time.Millisecond, WindowSize: 40,
			RestartJump: new(uint64(math.MaxUint64))}, Margin: new(time.Hour)},
	}, chen.New, func(_ chen.Config, d *chen.Detector) detectortest.Config {
		return detectortest.Config{LinearParam: float64(d.Margin())}
	})
}

// A duplicate stays a duplicate after later arrivals evict its first copy
// from the window: with n = 3, 10, 9 and 8 fill the window, 11 evicts 10,
// and a second 10 (still within ℓ − n) is a Duplicate, not a Late sample.
func TestDuplicateAfterEviction(t *testing.T) {
	e, err := chen.NewEstimator(chen.EstimatorConfig{WindowSize: 3})
	require.NoError(t, err)
	for i, c := range []struct {
		s    uint64
		want chen.Kind
	}{{10, chen.Fresh}, {9, chen.Late}, {8, chen.Late}, {11, chen.Fresh}, {10, chen.Duplicate}, {9, chen.Duplicate}, {12, chen.Fresh}, {10, chen.Duplicate}, {16, chen.Fresh}, {14, chen.Late}, {15, chen.Late}, {14, chen.Duplicate}} {
		got := e.Observe(detector.Heartbeat{Seq: c.s, HasSeq: true, Arrival: time.Duration(i) * time.Millisecond})
		assert.Equal(t, c.want, got, "heartbeat %d (seq %d)", i, c.s)
	}
	assert.Equal(t, 3, e.Len())
}

// Against a reference that remembers every sequence number received since
// the last restart: a number in (ℓ − n, ℓ) is Late iff never received.
func TestDuplicateClassificationMatchesReference(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 64, 65, 200} {
		e, err := chen.NewEstimator(chen.EstimatorConfig{WindowSize: n, RestartJump: new(uint64(math.MaxUint64))})
		require.NoError(t, err)
		seen := map[uint64]bool{}
		var last uint64
		x := uint64(n)*7 + 1
		for i := range 5000 {
			x = x*6364136223846793005 + 1442695040888963407
			var s uint64
			if i == 0 || x>>60 < 6 {
				s = last + 1 + x>>33%uint64(max(1, n/2)+1)
			} else {
				s = last - min(last, x>>33%uint64(n+2))
			}
			want := chen.Fresh
			switch {
			case i == 0 || s > last:
			case s == last:
				want = chen.Duplicate
			case last-s >= uint64(n):
				want = chen.Stale
			case seen[s]:
				want = chen.Duplicate
			default:
				want = chen.Late
			}
			got := e.Observe(detector.Heartbeat{Seq: s, HasSeq: true, Arrival: time.Duration(i)})
			require.Equal(t, want, got, "n = %d, heartbeat %d, seq %d, ℓ = %d", n, i, s, last)
			if want == chen.Fresh || want == chen.Late {
				seen[s] = true
			}
			if want == chen.Fresh {
				last = s
			}
		}
	}
}
