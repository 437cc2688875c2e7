package sfd_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/fdkit/fdkit/sfd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tol = 1e-9 // relative, docs/algorithms.md, “Conventions and the common trace”

func hb(seq uint64, at float64) detector.Heartbeat {
	return detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: ms(at)}
}

func newDet(t testing.TB, cfg sfd.Config) *sfd.Detector {
	d, err := sfd.New(cfg)
	require.NoError(t, err)
	return d
}

func window(n int) chen.EstimatorConfig {
	return chen.EstimatorConfig{Interval: ms(100), WindowSize: n}
}

// docs/algorithms.md, “SFD, the self-tuning detector”: with SM = 40 ms after
// slot 3, τ_7 = EA_7 + 40 = 765.833333.
func TestFreshnessPointAtSM40(t *testing.T) {
	d := newDet(t, sfd.Config{Estimator: window(6), InitialMargin: new(ms(40))})
	for i, a := range []float64{120, 225, 318, 440, 522, 630} {
		d.Observe(hb(uint64(i+1), a))
	}
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	assert.InEpsilon(t, 765.833333e6, float64(tau), tol)
	assert.Equal(t, ms(40), d.SafetyMargin())
	assert.Equal(t, sfd.Adapting, d.State())
}

// The online QoS measurement reproduces docs/algorithms.md, “Replaying a trace”
// (Chen NFD-E, n = 3, α = 30: SFD with SM_1 = 30 that never completes a slot).
func TestMeasurementReplayExample(t *testing.T) {
	d := newDet(t, sfd.Config{Estimator: window(3), InitialMargin: new(ms(30)), SlotHeartbeats: 1000, UseSendTime: true})
	seqs := []uint64{1, 2, 3, 4, 5, 6, 8, 9, 10}
	arr := []float64{120, 225, 318, 440, 522, 630, 835, 990, 1021}
	for i, s := range seqs {
		h := hb(s, arr[i])
		h.Sent, h.HasSent = ms(float64(100*s)), true
		d.Observe(h)
	}
	st := d.Status()
	assert.Equal(t, 2, st.Mistakes)
	assert.Equal(t, ms(703), st.Observed)
	assert.InEpsilon(t, 105.333333e6, float64(st.Suspected), tol)
	assert.InEpsilon(t, 2.844950, st.Measured.MistakesPerSecond, 1e-6)
	assert.InEpsilon(t, 0.850166, st.Measured.QAP, 1e-6)
	assert.InEpsilon(t, 163.619048e6, float64(st.Measured.TD), tol)
	assert.Equal(t, 0, st.Slots)
	assert.Equal(t, sfd.RuleNone, st.LastRule)
}

// stream feeds heartbeats 1..n with Δ = 100 ms and a delay of 30 ms plus
// jitter, except that every lateEvery-th heartbeat is late by extra.
func stream(d *sfd.Detector, from, n int, lateEvery int, extra float64) {
	for i := from; i < from+n; i++ {
		a := float64(100*i + 30)
		if lateEvery > 0 && i%lateEvery == 0 {
			a += extra
		}
		d.Observe(hb(uint64(i), a))
	}
}

// End to end: too many mistakes with speed to spare raises SM by β per
// slot until MR is met; then SFD is steady.
func TestAdaptsUpThenSteady(t *testing.T) {
	d := newDet(t, sfd.Config{
		Estimator: window(10), InitialMargin: new(ms(10)), Step: ms(10), SlotHeartbeats: 20,
		Targets: sfd.Targets{MaxTD: time.Second, MaxMistakesPerSecond: 0.1},
	})
	stream(d, 1, 10, 0, 0) // warm-up
	stream(d, 11, 20, 5, 60)
	st := d.Status()
	assert.Equal(t, 1, st.Slots)
	assert.Equal(t, sfd.RuleIncrease, st.LastRule)
	assert.Equal(t, ms(20), st.SafetyMargin)
	assert.Equal(t, sfd.Adapting, st.State)
	// Late heartbeats stop: MR falls below 0.1/s after enough slots.
	stream(d, 31, 2000, 0, 0)
	st = d.Status()
	assert.Equal(t, sfd.Steady, st.State)
	assert.Equal(t, sfd.RuleHold, st.LastRule)
	assert.LessOrEqual(t, st.Measured.MistakesPerSecond, 0.1)
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, d.Estimator().Next()+st.SafetyMargin, tau)
}

// Too slow with accuracy to spare lowers SM by β per slot, down to SM_min.
func TestAdaptsDown(t *testing.T) {
	d := newDet(t, sfd.Config{
		Estimator: window(10), InitialMargin: new(ms(100)), Step: ms(20), MinMargin: ms(50), SlotHeartbeats: 10,
		Targets: sfd.Targets{MaxTD: ms(10)},
	})
	stream(d, 1, 10, 0, 0)
	stream(d, 11, 10, 0, 0)
	assert.Equal(t, ms(80), d.SafetyMargin())
	stream(d, 21, 10, 0, 0) // 80 → 60
	stream(d, 31, 10, 0, 0) // 60 → 50, floored: SM still moved
	assert.Equal(t, ms(50), d.SafetyMargin())
	assert.Equal(t, sfd.Adapting, d.State())
	// Rule 1 again with SM at the floor: the TD target cannot be met, and
	// SFD says so instead of reporting that it is still adapting.
	stream(d, 41, 100, 0, 0)
	assert.Equal(t, ms(50), d.SafetyMargin())
	assert.Equal(t, sfd.AtFloor, d.State())
	assert.Equal(t, sfd.RuleDecrease, d.Status().LastRule)
	assert.Contains(t, sfd.AtFloor.String(), "cannot meet the TD target")
}

// AtFloor is not final: when the cumulative TD comes back under TD_U, the
// next slot holds SM and SFD is steady.
func TestAtFloorIsLeft(t *testing.T) {
	d := newDet(t, sfd.Config{
		Estimator: window(10), InitialMargin: new(ms(50)), Step: ms(20), MinMargin: ms(50), SlotHeartbeats: 10,
		Targets: sfd.Targets{MaxTD: ms(160)}, UseSendTime: true,
	})
	feed := func(from, n int, delay float64) {
		for i := from; i < from+n; i++ {
			h := hb(uint64(i), float64(100*i+30))
			h.Sent, h.HasSent = ms(float64(100*i+30)-delay), true
			d.Observe(h)
		}
	}
	feed(1, 30, 100) // TD_k = τ_{k+1} − σ_k = 100 + 100 + 50 = 250 ms > 160
	assert.Equal(t, sfd.AtFloor, d.State())
	feed(31, 200, 0) // TD_k = 150 ms: the cumulative mean falls under 160
	assert.Equal(t, sfd.Steady, d.State())
	assert.Equal(t, ms(50), d.SafetyMargin())
}

// Speed and accuracy both violated: CannotMeet, SM frozen from then on.
func TestCannotMeetIsSticky(t *testing.T) {
	d := newDet(t, sfd.Config{
		Estimator: window(10), InitialMargin: new(ms(50)), SlotHeartbeats: 10,
		Targets: sfd.Targets{MaxTD: ms(100), MinQAP: 0.9999},
	})
	stream(d, 1, 10, 0, 0)
	stream(d, 11, 10, 3, 90) // TD ≈ 150 > 100 and QAP < 0.9999
	st := d.Status()
	require.Equal(t, sfd.CannotMeet, st.State)
	assert.Equal(t, sfd.RuleCannotMeet, st.LastRule)
	assert.Equal(t, ms(50), st.SafetyMargin)
	stream(d, 21, 200, 0, 0)
	st = d.Status()
	assert.Equal(t, sfd.CannotMeet, st.State)
	assert.Equal(t, 1, st.Slots, "no slot is evaluated after giving up")
	assert.Equal(t, ms(50), st.SafetyMargin)
}

func TestConfig(t *testing.T) {
	d := newDet(t, sfd.Config{})
	assert.Equal(t, chen.DefaultInterval, d.SafetyMargin())
	assert.Equal(t, chen.DefaultWindowSize, d.Estimator().WindowSize())
	stream(d, 1, 1100, 7, 90) // every 7th 90 ms late: still in arrival order
	assert.Equal(t, sfd.Steady, d.State(), "no targets: never adapts")
	assert.Equal(t, chen.DefaultInterval, d.SafetyMargin())
	assert.Equal(t, 1, d.Status().Slots)
	floor := newDet(t, sfd.Config{MinMargin: ms(250)})
	assert.Equal(t, ms(250), floor.SafetyMargin(), "default SM_1 respects the floor")
	for _, c := range []sfd.Config{
		{MinMargin: -1}, {InitialMargin: new(ms(10)), MinMargin: ms(20)}, {Step: -1}, {SlotHeartbeats: -1},
		{OneWayDelay: -1}, {Targets: sfd.Targets{MaxTD: -1}}, {Targets: sfd.Targets{MinQAP: 1.5}},
		{Targets: sfd.Targets{MaxMistakesPerSecond: math.NaN()}}, {MinSamples: new(-2)},
		{Estimator: chen.EstimatorConfig{WindowSize: -1}},
	} {
		_, err := sfd.New(c)
		assert.Error(t, err, "%+v", c)
	}
}

// Awkward input, one documented choice each (see Detector).
func TestAwkwardInput(t *testing.T) {
	cfg := sfd.Config{Estimator: window(4), InitialMargin: new(ms(20)), SlotHeartbeats: 1000}
	t.Run("single heartbeat", func(t *testing.T) {
		d := newDet(t, cfg)
		assert.False(t, d.Suspected(ms(1e9)))
		d.Observe(hb(3, 100))
		tau, ok := d.FreshnessPoint()
		assert.True(t, ok)
		assert.Equal(t, ms(220), tau)
		assert.True(t, d.WarmingUp())
	})
	t.Run("zero variance", func(t *testing.T) {
		d := newDet(t, cfg)
		stream(d, 1, 100, 0, 0)
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, ms(100*101+30+20), tau)
		assert.Equal(t, 0, d.Status().Mistakes)
		assert.Equal(t, 1.0, d.Status().Measured.QAP)
	})
	t.Run("duplicates dropped; late heartbeat does not end a mistake", func(t *testing.T) {
		d := newDet(t, cfg)
		stream(d, 1, 6, 0, 0)
		d.Observe(hb(6, 640)) // duplicate
		before := d.Status()
		d.Observe(hb(5, 900)) // stale copy of 5: duplicate
		d.Observe(hb(8, 1000))
		st := d.Status()
		assert.Equal(t, before.Mistakes+1, st.Mistakes, "heartbeat 7 lost: one mistake")
		d.Observe(hb(7, 1050)) // late: enters W, does not change τ or the counts
		assert.Equal(t, st, d.Status())
	})
	t.Run("restart suspends measurement, keeps SM", func(t *testing.T) {
		d := newDet(t, cfg)
		stream(d, 200, 10, 0, 0)
		obs := d.Status().Observed
		d.Observe(hb(0, 60_000)) // restart after a long outage
		assert.Equal(t, obs, d.Status().Observed, "the outage is not measured")
		assert.Equal(t, 0, d.Status().Mistakes)
		assert.True(t, d.WarmingUp())
		assert.Equal(t, ms(20), d.SafetyMargin())
	})
	t.Run("arrival going backwards", func(t *testing.T) {
		d := newDet(t, cfg)
		stream(d, 1, 5, 0, 0)
		d.Observe(hb(6, 400)) // counted, no negative time
		st := d.Status()
		assert.GreaterOrEqual(t, st.Observed, time.Duration(0))
		assert.GreaterOrEqual(t, st.Suspected, time.Duration(0))
		u := newDet(t, cfg)
		u.Observe(detector.Heartbeat{Arrival: ms(500)})
		u.Observe(detector.Heartbeat{Arrival: ms(400)}) // unnumbered: dropped
		tau, _ := u.FreshnessPoint()
		assert.Equal(t, ms(620), tau)
	})
	t.Run("gap of hours is one long mistake", func(t *testing.T) {
		d := newDet(t, cfg)
		stream(d, 1, 10, 0, 0)
		tau, _ := d.FreshnessPoint()
		d.Observe(hb(11, 2*3600e3))
		st := d.Status()
		assert.Equal(t, 1, st.Mistakes)
		assert.Equal(t, ms(2*3600e3)-tau, st.Suspected)
		assert.InDelta(t, 1-float64(st.Suspected)/float64(st.Observed), st.Measured.QAP, 1e-12)
	})
	t.Run("burst of losses is one mistake", func(t *testing.T) {
		d := newDet(t, cfg)
		stream(d, 1, 10, 0, 0)
		d.Observe(hb(60, 6030))
		assert.Equal(t, 1, d.Status().Mistakes)
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, ms(6130+20), tau)
	})
}

// Properties on random streams: SM moves by ±β per slot, never below
// SM_min, and never after CannotMeet; the online mistake count and
// suspected time agree with a brute-force scan of Suspected (Suspected(t)
// ⇔ t > τ itself is checked by detectortest in TestConformance).
func TestProperties(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	const step = 100 * time.Microsecond
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		beta := ms(float64(1 + rng.IntN(20)))
		d := newDet(t, sfd.Config{
			Estimator: window(1 + rng.IntN(30)), InitialMargin: new(ms(float64(5 + rng.IntN(80)))), Step: beta,
			MinMargin: ms(5), SlotHeartbeats: 1 + rng.IntN(30), UseSendTime: seed%2 == 0,
			Targets: sfd.Targets{MaxTD: ms(float64(100 + rng.IntN(200))), MaxMistakesPerSecond: rng.Float64(), MinQAP: 0.9 + rng.Float64()/10},
		})
		var bruteMistakes int
		var bruteSuspected time.Duration
		measuring, prevSusp := false, false
		seq, last, prev := uint64(0), uint64(0), time.Duration(0)
		prevSM, prevSlots := d.SafetyMargin(), 0
		for range n {
			seq += 1 + uint64(rng.IntN(6)/5)
			at := ms(100)*time.Duration(seq) + time.Duration(rng.ExpFloat64()*25e6)
			if at <= prev {
				at = prev + 1
			}
			h := detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at, Sent: ms(100) * time.Duration(seq), HasSent: true}
			if rng.IntN(15) == 0 {
				h.Seq -= uint64(rng.IntN(3)) // duplicate or late
			}
			fresh := h.Seq > last || last == 0
			if measuring && fresh {
				for t := prev + step; t < at; t += step {
					s := d.Suspected(t)
					if s && !prevSusp {
						bruteMistakes++
					}
					if s {
						bruteSuspected += step
					}
					prevSusp = s
				}
				if d.Suspected(at) && !prevSusp {
					bruteMistakes++
				}
				if d.Suspected(at) {
					prevSusp = true
				}
			}
			d.Observe(h)
			if !fresh {
				continue
			}
			last, prev = h.Seq, at
			if !measuring && !d.WarmingUp() {
				measuring, prevSusp = true, false
			}
			if measuring {
				s := d.Suspected(at)
				if s && !prevSusp {
					bruteMistakes++
				}
				prevSusp = s
			}
			st := d.Status()
			require.GreaterOrEqual(t, st.SafetyMargin, ms(5))
			if st.Slots > prevSlots {
				diff := st.SafetyMargin - prevSM
				require.True(t, diff == 0 || diff == beta || diff == -beta || st.SafetyMargin == ms(5), "SM %v → %v", prevSM, st.SafetyMargin)
			} else {
				require.Equal(t, prevSM, st.SafetyMargin, "SM changes only at a slot boundary")
			}
			if st.State == sfd.CannotMeet {
				require.Equal(t, sfd.RuleCannotMeet, st.LastRule)
			}
			prevSM, prevSlots = st.SafetyMargin, st.Slots
			require.GreaterOrEqual(t, st.Measured.QAP, 0.0)
			require.LessOrEqual(t, st.Measured.QAP, 1.0)
			require.GreaterOrEqual(t, st.Measured.MistakesPerSecond, 0.0)
			require.LessOrEqual(t, st.Suspected, st.Observed)
		}
		st := d.Status()
		assert.InDelta(t, bruteMistakes, st.Mistakes, float64(st.Mistakes)/50+1, "seed %d", seed)
		assert.InDelta(t, float64(bruteSuspected), float64(st.Suspected), float64(st.Mistakes+1)*float64(step)*2, "seed %d", seed)
	}
}

func BenchmarkObserveSuspected(b *testing.B) {
	d, _ := sfd.New(sfd.Config{Targets: sfd.Targets{MaxTD: 250 * time.Millisecond, MaxMistakesPerSecond: 0.01}})
	detectortest.Benchmark(b, d)
}

// A large safety margin near the end of the Duration range: τ saturates
// instead of wrapping to an instant in the far past.
func TestFreshnessPointSaturates(t *testing.T) {
	d := newDet(t, sfd.Config{Estimator: window(6), MinSamples: new(1), InitialMargin: new(time.Duration(math.MaxInt64 / 2))})
	start := time.Duration(math.MaxInt64) - 2*time.Second
	for i := range 15 {
		a := start + time.Duration(i)*100*time.Millisecond
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
		assert.False(t, d.Suspected(a), "heartbeat %d", i)
	}
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, time.Duration(math.MaxInt64), tau)
	assert.Zero(t, d.Status().Mistakes)
}

// A numbered heartbeat whose arrival goes backwards is counted, but the
// time it steps back over is not observed twice: Observed is the span of
// the evaluated arrivals, as T_obs in docs/algorithms.md, “Replaying a trace”.
func TestBackwardsArrivalObservedOnce(t *testing.T) {
	d := newDet(t, sfd.Config{Estimator: window(10), MinSamples: new(1), InitialMargin: new(ms(500))})
	for i := 1; i <= 10; i++ {
		d.Observe(hb(uint64(i), float64(100*i)))
	}
	d.Observe(hb(11, 950)) // the monitor's clock stepped back 50 ms
	d.Observe(hb(12, 1200))
	st := d.Status()
	assert.Equal(t, ms(1100), st.Observed)
	assert.Zero(t, st.Mistakes)
	assert.Equal(t, 1.0, st.Measured.QAP)
}

// The conformance kit on the defaults (no targets: NFD-E with α = Δ) and on
// adapting detectors with short slots, arrival- and send-time-based TD.
func TestConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]sfd.Config{
		"default": {},
		"adapting": {Estimator: chen.EstimatorConfig{WindowSize: 10}, MinSamples: new(3), SlotHeartbeats: 5,
			Step: 5 * time.Millisecond, MinMargin: time.Millisecond,
			Targets: sfd.Targets{MaxTD: 150 * time.Millisecond, MaxMistakesPerSecond: 0.05, MinQAP: 0.99}},
		"send-time": {Estimator: chen.EstimatorConfig{WindowSize: 4}, SlotHeartbeats: 3, UseSendTime: true,
			OneWayDelay: 10 * time.Millisecond, Targets: sfd.Targets{MaxTD: 20 * time.Millisecond}},
	}, sfd.New, nil)
}
