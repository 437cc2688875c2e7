package qos

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace/tracetest"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/sfd"
	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat/distuv"
)

func heartbeats(recs []trace.Record) []detector.Heartbeat {
	hbs := make([]detector.Heartbeat, len(recs))
	for i, r := range recs {
		hbs[i] = r.Heartbeat()
	}
	return hbs
}

// TestFixedTimeoutClosedForm checks the fixed-timeout detector against a
// closed form derived from the renewal argument of Chen, Toueg and Aguilera
// (IEEE TC 51(5), 2002, NFD-S analysis, §4–5).
//
// Model (trace.Generate): p sends heartbeat i at i·Δ (no jitter); each is
// lost independently with probability p_L; delays D_i are i.i.d. normal
// (mean d, s.d. s, with d ≫ s so truncation at 0 never matters) and
// |D_i − D_j| < Δ always, so heartbeats arrive in order. Between two
// consecutive received heartbeats i < j the gap is
//
//	G = M·Δ + D_j − D_i,  M = j − i ~ Geometric: P(M = m) = (1−p_L)·p_L^(m−1),
//
// and D_j − D_i ~ N(0, 2s²) independent of M. The fixed timeout suspects
// in a gap iff G > T (it trusts again at the next arrival, so each gap holds
// at most one mistake, of length (G − T)⁺). The gaps form a stationary
// sequence, so by the renewal-reward theorem
//
//	MR  = P(G > T) / E[G],           E[G] = Δ/(1−p_L),
//	QAP = 1 − E[(G − T)⁺] / E[G],
//
// with, for X ~ N(μ, v²) and z = (T − μ)/v (φ, Q the standard normal pdf
// and upper tail):
//
//	P(X > T) = Q(z),  E[(X−T)⁺] = v·φ(z) + (μ−T)·Q(z),
//	E[((X−T)⁺)²] = ((μ−T)² + v²)·Q(z) + (μ−T)·v·φ(z).
//
// Tolerance. Over N sent heartbeats the mistake count is a sum of N
// indicators "heartbeat i received and the gap after it exceeds T", with
// probability r = (1−p_L)·P(G > T). They are dependent only between
// neighbours and negatively so (a large D_{i+1} lengthens gap i and shortens
// gap i+1; a loss of i+1 lengthens gap i and removes gap i+1), so
// Var ≤ N·r·(1−r). Likewise the suspected time has Var ≤ N·(1−p_L)·E[Y²],
// Y = (G−T)⁺. T_obs is N·Δ up to two delays. The test allows 5 standard
// deviations (a false failure has probability below 1e-6 for a normal
// sum) and uses fixed seeds, so it is deterministic.
func TestFixedTimeoutClosedForm(t *testing.T) {
	const (
		n     = 100000
		pLoss = 0.1
	)
	delta, d, s := ms(100), ms(50), ms(5)
	recs, err := trace.Generate(trace.GenConfig{
		Interval: delta,
		Duration: n * delta,
		Delay:    trace.Delay{Dist: trace.DelayNormal, Mean: d, SD: s},
		Loss:     trace.Loss{Model: trace.LossBernoulli, P: pLoss},
	}, trace.NewRand(42))
	require.NoError(t, err)
	hbs := heartbeats(recs)

	for _, T := range []time.Duration{ms(110), ms(150), ms(250)} {
		cf := fixedClosedForm(T, delta, s, pLoss)
		pG, eY2, wantMR, wantQAP := cf.pG, cf.eY2, cf.mr, cf.qap

		res, err := ReplaySlice(newFixed(t, T), hbs, Config{})
		require.NoError(t, err)
		obs := float64(res.Span)
		r := (1 - pLoss) * pG
		tolMR := 5 * math.Sqrt(n*r*(1-r)) / obs * float64(time.Second)
		tolQAP := 5 * math.Sqrt(n*(1-pLoss)*eY2) / obs
		t.Logf("T=%v: MR %.5f/s (closed form %.5f ± %.5f), QAP %.6f (closed form %.6f ± %.6f), %d mistakes",
			T, res.MRPerSecond, wantMR, tolMR, res.QAP, wantQAP, tolQAP, res.Mistakes)
		assert.InDelta(t, wantMR, res.MRPerSecond, tolMR, "MR at T=%v", T)
		assert.InDelta(t, wantQAP, res.QAP, tolQAP, "QAP at T=%v", T)
		assert.Greater(t, res.Mistakes, 100, "enough mistakes for the comparison to mean something")
	}
}

// closedForm is the fixed-timeout QoS of TestFixedTimeoutClosedForm's
// model: P(G > T), E[((G−T)⁺)²] (ns²), MR per second and QAP.
type closedForm struct{ pG, eY2, mr, qap float64 }

// fixedClosedForm evaluates the closed form of TestFixedTimeoutClosedForm
// for timeout T, interval Δ, delay s.d. s and loss probability pLoss.
func fixedClosedForm(T, delta, s time.Duration, pLoss float64) closedForm {
	unit := distuv.UnitNormal
	v := math.Sqrt2 * float64(s)
	var pG, eY, eY2 float64
	for m := 1; m < 60; m++ {
		w := (1 - pLoss) * math.Pow(pLoss, float64(m-1))
		mu := float64(m) * float64(delta)
		z := (float64(T) - mu) / v
		q, f := unit.Survival(z), unit.Prob(z)
		pG += w * q
		eY += w * (v*f + (mu-float64(T))*q)
		eY2 += w * (((mu-float64(T))*(mu-float64(T))+v*v)*q + (mu-float64(T))*v*f)
	}
	eG := float64(delta) / (1 - pLoss)
	return closedForm{pG: pG, eY2: eY2, mr: pG / eG * float64(time.Second), qap: 1 - eY/eG}
}

// allDetectors returns constructors for every detector, configured for
// Δ = 100 ms traces with windows of 100.
func allDetectors(t *testing.T) map[string]func() detector.Detector {
	est := chen.EstimatorConfig{Interval: ms(100), WindowSize: 100}
	must := func(d detector.Detector, err error) detector.Detector {
		require.NoError(t, err)
		return d
	}
	return map[string]func() detector.Detector{
		"fixed":    func() detector.Detector { return must(detector.NewFixed(detector.FixedConfig{Timeout: new(ms(300))})) },
		"jacobson": func() detector.Detector { return must(jacobson.New(jacobson.Config{})) },
		"phi-normal": func() detector.Detector {
			return must(phi.NewNormal(phi.NormalConfig{WindowSize: 100, MinSamples: new(100)}))
		},
		"phi-akka": func() detector.Detector {
			return must(phi.NewAkka(phi.AkkaConfig{WindowSize: 100, MinStdDev: new(ms(10)), AcceptablePause: new(ms(300)), BootstrapInterval: new(ms(100))}))
		},
		"phi-cassandra": func() detector.Detector {
			return must(phi.NewCassandra(phi.CassandraConfig{WindowSize: 100, BootstrapInterval: new(2 * ms(100)), MaxInterval: new(2 * ms(100))}))
		},
		"chen":    func() detector.Detector { return must(chen.New(chen.Config{Estimator: est, Margin: new(ms(50))})) },
		"bertier": func() detector.Detector { return must(bertier.New(bertier.Config{Estimator: est})) },
		"sfd": func() detector.Detector {
			return must(sfd.New(sfd.Config{Estimator: est, InitialMargin: new(ms(50)), Step: ms(10), UseSendTime: true,
				Targets: sfd.Targets{MaxTD: ms(500), MaxMistakesPerSecond: 0.05, MinQAP: 0.99}}))
		},
	}
}

// A crash injected by the generator is detected exactly TD_k after the send
// of the last heartbeat k, as the replay predicted (Result.LastTD): stepping
// time in 1 ms ticks after the last arrival, the first suspected tick lies
// within one tick after σ_k + TD_k, and the process stays suspected.
func TestCrashDetectedAfterPredictedTD(t *testing.T) {
	crash := 60*time.Second + ms(50)
	recs, err := trace.Generate(trace.GenConfig{
		Interval: ms(100),
		Duration: 2 * time.Minute,
		Delay:    trace.Delay{Dist: trace.DelayNormal, Mean: ms(20), SD: ms(5)},
		CrashAt:  crash, // no loss: the heartbeat sent at 60 s is the last one received

	}, trace.NewRand(7))
	require.NoError(t, err)
	hbs := heartbeats(recs)
	last := hbs[len(hbs)-1]
	require.Less(t, last.Sent, crash)
	require.Equal(t, 60*time.Second, last.Sent, "the last heartbeat is the one sent just before the crash")

	for name, mk := range allDetectors(t) {
		t.Run(name, func(t *testing.T) {
			res, err := ReplaySlice(mk(), hbs, Config{})
			require.NoError(t, err)
			require.True(t, res.ClockSync)
			predicted := last.Sent + res.LastTD

			d := mk()
			for _, hb := range hbs {
				d.Observe(hb)
			}
			const tick = time.Millisecond
			var detected time.Duration
			for now := last.Arrival; now < last.Arrival+time.Minute; now += tick {
				if d.Suspected(now) {
					detected = now
					break
				}
			}
			require.NotZero(t, detected, "the crash is detected within a minute")
			assert.GreaterOrEqual(t, detected, predicted, "not suspected before the predicted TD")
			assert.Less(t, detected, predicted+tick+1, "suspected within a tick of the predicted TD")
			assert.Greater(t, detected, crash, "detection follows the crash")
			for _, later := range []time.Duration{time.Second, time.Minute, time.Hour} {
				assert.True(t, d.Suspected(detected+later), "suspicion is permanent")
			}
			t.Logf("%s: TD predicted %v, detected %v after the last send (%v after the crash)",
				name, res.LastTD, detected-last.Sent, detected-crash)
		})
	}
}

// docs/algorithms.md, “Replaying a trace”: on the LIP6 excerpt, sender 4, Chen
// α = 0 (n = 100, evaluated once the window is full) has 433 trust→suspect
// transitions, where the literal rule "a mistake whenever the next arrival is
// after τ" counts 450.
func TestLIP6Sender4TransitionCount(t *testing.T) {
	path := tracetest.Shared(t, "planetlab-lip6/recv_node1_excerpt.txt")
	recs, err := trace.ReadFile(path, trace.ReaderConfig{})
	require.NoError(t, err)
	var hbs []detector.Heartbeat
	for _, st := range trace.Split(recs) {
		if st.Sender == "4" {
			hbs = heartbeats(st.Records)
		}
	}
	require.NotEmpty(t, hbs)
	cfg := chen.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 100}}
	c, err := Sweep([]Stream{{Name: "4", Heartbeats: hbs}}, []Family{ChenFamily(cfg, []time.Duration{0})}, SweepConfig{})
	require.NoError(t, err)
	require.Empty(t, c[0].Err)
	assert.Equal(t, 433, c[0].Points[0].Mistakes)
	assert.False(t, c[0].Points[0].ClockSync, "LIP6 clocks are not synchronized")
	assert.Equal(t, TDArrival, c[0].Points[0].TDBasis)

	// The literal rule, counted independently with a detector at α = 1 ns
	// (chen's zero margin means the default): the next fresh arrival after τ.
	cfg.Margin = new(time.Duration(1))
	d, err := chen.New(cfg)
	require.NoError(t, err)
	literal, hasSeq, lastSeq := 0, false, uint64(0)
	var tau time.Duration
	pending := false
	for _, hb := range hbs {
		if hasSeq && hb.Seq <= lastSeq {
			d.Observe(hb)
			continue
		}
		if pending && hb.Arrival > tau+1 { // undo the 1 ns margin: A > EA
			literal++
		}
		d.Observe(hb)
		lastSeq, hasSeq = hb.Seq, true
		tau, pending = 0, false
		if tt, ok := d.FreshnessPoint(); ok && !d.WarmingUp() {
			tau, pending = tt, true
		}
	}
	assert.Equal(t, 450, literal)
}

// Every detector agrees with the 1 ms reference replay on generator presets
// (short versions): pauses, heavy jitter with loss (which reorders).
func TestAllDetectorsAgreeWithReferenceOnPresets(t *testing.T) {
	for _, name := range []string{"gc-pause", "jitter"} {
		p, err := trace.LookupPreset(name)
		require.NoError(t, err)
		p.Config.Duration = 2 * time.Minute
		recs, err := trace.Generate(p.Config, trace.NewRand(3))
		require.NoError(t, err)
		hbs := heartbeats(recs)
		for dname, mk := range allDetectors(t) {
			t.Run(name+"/"+dname, func(t *testing.T) {
				res := checkAgainstReference(t, mk, hbs, 0)
				t.Logf("%d mistakes, %d stale", res.Mistakes, res.Stale)
			})
		}
	}
}
