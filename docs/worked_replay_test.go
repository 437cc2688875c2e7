package docs

import (
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/internal/worked"
	"github.com/fdkit/fdkit/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replayTrace is the trace of “Replaying a trace”: the common trace, then
// heartbeats 8, 9 and 10 (7 lost), and with pause also 11, 12 and 13 sent
// after an 800 ms pause of the sender.
func replayTrace(e *ex, pause bool) []detector.Heartbeat {
	hbs := commonTrace(e)
	for _, a := range []struct{ s, arr float64 }{{8, 835}, {9, 990}, {10, 1021}} {
		hbs = append(hbs, detector.Heartbeat{Seq: uint64(a.s), HasSeq: true, Sent: ms(100 * a.s), HasSent: true, Arrival: ms(a.arr)})
	}
	if pause {
		for s := uint64(11); s <= 13; s++ {
			sent := ms(1900 + 100*float64(s-11))
			hbs = append(hbs, detector.Heartbeat{Seq: s, HasSeq: true, Sent: sent, HasSent: true, Arrival: sent + 25*time.Millisecond})
		}
	}
	return hbs
}

func newChen3(e *ex) *chen.Detector {
	d, err := chen.New(chen.Config{
		Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 3},
		Margin:    new(30 * time.Millisecond),
	})
	require.NoError(e, err)
	return d
}

func replay(e *ex, pause bool) qos.Result {
	res, err := qos.ReplaySlice(newChen3(e), replayTrace(e, pause), qos.Config{RecordMistakes: true})
	require.NoError(e, err)
	return res
}

func checkReplayChen(e *ex) {
	hbs := replayTrace(e, false)
	res := replay(e, false)
	d := newChen3(e)
	require.Len(e, e.tab.Rows, len(hbs))
	for i, h := range hbs {
		e.eq(i, "k", float64(h.Seq))
		e.eqMS(i, "A_k", h.Arrival)
		d.Observe(h)
		if i+1 < len(hbs) {
			e.eqMS(i, "next arrival", hbs[i+1].Arrival)
		}
		if d.WarmingUp() {
			assert.Equal(e, "–", e.cell(i, "TD_k"), "row %d is in warm-up", i+1)
			continue
		}
		tau := tau(e, d)
		e.eqMS(i, "EA_{k+1}", d.Estimator().Next())
		e.eqMS(i, "τ_{k+1}", tau)
		e.eqMS(i, "TD_k", max(tau, h.Arrival)-h.Sent)
		if i+1 == len(hbs) {
			continue
		}
		// The mistake that starts in this gap, from the replay.
		var length time.Duration
		for _, m := range res.MistakeIntervals {
			if m.Start >= h.Arrival && m.Start < hbs[i+1].Arrival {
				length = m.End - m.Start
			}
		}
		e.eqMS(i, "mistake length", length)
	}
}

// summary checks a "quantity | value" table against a replay result.
func summary(e *ex, res qos.Result) {
	for i, row := range e.tab.Rows {
		switch row[0] {
		case "T_obs (ms)":
			e.eqMS(i, "value", res.Span)
		case "mistakes":
			e.eq(i, "value", float64(res.Mistakes))
		case "suspected (ms)":
			e.eqMS(i, "value", res.Suspected)
		case "MR (per second)":
			e.eq(i, "value", res.MRPerSecond)
		case "QAP":
			e.eq(i, "value", res.QAP)
		case "E[T_M] (ms)":
			e.eqMS(i, "value", res.MeanTM)
		case "E[T_MR] (ms)":
			e.eqMS(i, "value", res.MeanTMR)
		case "E[T_G] (ms)":
			e.eqMS(i, "value", res.MeanTG)
		case "mean TD (ms)":
			e.eqMS(i, "value", res.TD.Mean)
		case "max TD (ms)":
			e.eqMS(i, "value", res.TD.Max)
		default:
			e.Errorf("unknown quantity %q", row[0])
		}
	}
}

func checkReplayChenSummary(e *ex) { summary(e, replay(e, false)) }

func checkReplayPause(e *ex) {
	hbs := replayTrace(e, true)
	d := newChen3(e)
	byK := map[uint64]int{}
	for i := range e.tab.Rows {
		byK[uint64(e.num(i, "k"))] = i
	}
	seen := 0
	for _, h := range hbs {
		d.Observe(h)
		i, ok := byK[h.Seq]
		if !ok {
			continue
		}
		seen++
		tau := tau(e, d)
		e.eqMS(i, "σ_k", h.Sent)
		e.eqMS(i, "A_k", h.Arrival)
		e.eqMS(i, "τ_{k+1}", tau)
		e.eqMS(i, "TD_k", max(tau, h.Arrival)-h.Sent)
		after := "trust"
		if d.Suspected(h.Arrival) {
			after = "suspect"
		}
		assert.Equal(e, e.cell(i, "q after A_k"), after, "row %d", i+1)
	}
	assert.Equal(e, len(e.tab.Rows), seen)
}

func checkReplayPauseSummary(e *ex) { summary(e, replay(e, true)) }

func sweepFixed(e *ex, timeouts []time.Duration) qos.Curve {
	e.Helper()
	c, err := qos.Sweep([]qos.Stream{{Name: "example", Heartbeats: replayTrace(e, false)}},
		[]qos.Family{qos.FixedFamily(timeouts)}, qos.SweepConfig{})
	require.NoError(e, err)
	require.Len(e, c, 1)
	require.Empty(e, c[0].Err)
	require.Equal(e, qos.OnePass, c[0].Method)
	require.Len(e, c[0].Points, len(timeouts))
	return c[0]
}

func checkSweepFixed(e *ex) {
	var ts []time.Duration
	for i := range e.tab.Rows {
		ts = append(ts, ms(e.num(i, "T (ms)")))
	}
	for i, p := range sweepFixed(e, ts).Points {
		e.eq(i, "mistakes", float64(p.Mistakes))
		e.eqMS(i, "suspected (ms)", p.Suspected)
		e.eq(i, "MR (per second)", p.MRPerSecond)
		e.eq(i, "QAP", p.QAP)
		e.eqMS(i, "mean TD (ms)", p.TD.Mean)
	}
}

func checkTuneFixed(e *ex) {
	targets := map[string]qos.Targets{
		"MR ≤ 3 per second":              {MaxMRPerSecond: 3},
		"MR ≤ 3 per second, TD ≤ 150 ms": {MaxMRPerSecond: 3, MaxTD: 150 * time.Millisecond},
	}
	// The curve of “Sweeping a parameter in one pass”.
	sw := e.tabs["sweep-fixed"]
	require.NotNil(e, sw)
	var ts []time.Duration
	for i := range sw.Rows {
		v, _, err := worked.Number(sw.Rows[i][0])
		require.NoError(e, err)
		ts = append(ts, ms(v))
	}
	curve := sweepFixed(e, ts)
	for i, row := range e.tab.Rows {
		tg, ok := targets[row[0]]
		require.True(e, ok, "unknown targets %q", row[0])
		ch, err := qos.Tune([]qos.Curve{curve}, tg)
		require.NoError(e, err)
		require.Len(e, ch, 1)
		e.eqMS(i, "chosen T (ms)", ms(ch[0].Point.Value))
		assert.Equal(e, e.cell(i, "found"), map[bool]string{true: "yes", false: "no"}[ch[0].Found], "row %d", i+1)
		e.eq(i, "shortfall", ch[0].Shortfall)
	}
}
