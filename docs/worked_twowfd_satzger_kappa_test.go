package docs

import (
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/twowfd"
	"github.com/stretchr/testify/require"
)

func checkTwoWFD(e *ex) {
	hbs := without(commonTrace(e), 4)
	for i, row := range e.tab.Rows {
		switch row[0] {
		case "1–3, 5, 6 (4 lost)":
		case "the same, then 7 at 800":
			hbs = append(hbs, detector.Heartbeat{Seq: 7, HasSeq: true, Arrival: 800 * time.Millisecond})
		default:
			e.Fatalf("unknown row %q", row[0])
		}
		d, err := twowfd.New(twowfd.Config{Interval: 100 * time.Millisecond, ShortWindowSize: 1, LongWindowSize: 6,
			Margin: new(50 * time.Millisecond), MinSamples: new(0)})
		require.NoError(e, err)
		observe(d, hbs)
		e.eqMS(i, "τ, 2W-FD (ms)", tau(e, d))
		c, err := chen.New(chen.Config{Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 6},
			Margin: new(50 * time.Millisecond), MinSamples: new(1)})
		require.NoError(e, err)
		observe(c, hbs)
		e.eqMS(i, "τ, NFD-E with n = 6 (ms)", tau(e, c))
	}
}

func newSatzger(e *ex, theta float64) *satzger.Detector {
	d, err := satzger.New(satzger.Config{WindowSize: 5, Threshold: theta, Scale: 0.9})
	require.NoError(e, err)
	observe(d, commonTrace(e))
	return d
}

func checkSatzger(e *ex) {
	d := newSatzger(e, 0.5)
	last := commonTrace(e)[5].Arrival
	for i := range e.tab.Rows {
		e.eq(i, "level", d.Level(last+ms(e.num(i, "elapsed (ms)"))))
	}
}

func checkSatzgerInverse(e *ex) {
	for i := range e.tab.Rows {
		d := newSatzger(e, e.num(i, "θ"))
		tstar, ok := d.ElapsedFor(d.Threshold())
		require.True(e, ok)
		e.eqMS(i, "t* (ms)", tstar)
		e.eqMS(i, "τ (ms)", tau(e, d))
	}
}

func newKappa(e *ex, k float64) *kappa.Detector {
	d, err := kappa.New(kappa.Config{
		Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 6},
		Threshold: k, MinSamples: new(0),
	})
	require.NoError(e, err)
	observe(d, commonTrace(e))
	return d
}

func checkKappa(e *ex) {
	d := newKappa(e, 2.5)
	for i := range e.tab.Rows {
		e.eq(i, "κ", d.Level(ms(e.num(i, "t (ms)"))))
	}
}

func checkKappaInverse(e *ex) {
	for i := range e.tab.Rows {
		e.eqMS(i, "τ (ms)", tau(e, newKappa(e, e.num(i, "K"))))
	}
}
