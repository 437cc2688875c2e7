package qos

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func smallCurves(t *testing.T) []Curve {
	t.Helper()
	hbs := agreementTraces()["jitter-loss"]
	c, err := Sweep([]Stream{{Name: "gen", Heartbeats: hbs}}, []Family{
		FixedFamily(durs(mustRange(t, 100, 400, 10, false))),
		ChenFamily(chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 50}}, durs(mustRange(t, 1, 300, 10, true))),
	}, SweepConfig{Workers: 2})
	require.NoError(t, err)
	return c
}

func TestWriteCSVAndJSON(t *testing.T) {
	curves := smallCurves(t)
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, curves))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+20)
	assert.Equal(t, csvHeader, rows[0])
	assert.Equal(t, []string{"gen", "fixed", "timeout", "ms", "100", "one-pass"}, rows[1][:6])

	buf.Reset()
	require.NoError(t, WriteJSON(&buf, curves))
	var back []Curve
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	assert.Equal(t, curves, back)
}

func TestTune(t *testing.T) {
	curves := smallCurves(t)
	// A loose target: every family finds a point, the one with smallest TD.
	ch, err := Tune(curves, Targets{MinQAP: 0.99})
	require.NoError(t, err)
	require.Len(t, ch, 2)
	for i, c := range ch {
		require.True(t, c.Found, c.Family)
		assert.GreaterOrEqual(t, c.Point.QAP, 0.99)
		for _, p := range curves[i].Points {
			if p.QAP >= 0.99 {
				assert.GreaterOrEqual(t, p.TD.Mean, c.Point.TD.Mean, "a faster point meets the target")
			}
		}
	}
	// Impossible: fast and no mistakes.
	ch, err = Tune(curves, Targets{MaxTD: ms(50), MaxMRPerSecond: 1e-9})
	require.NoError(t, err)
	impossible := Targets{MaxTD: ms(50), MaxMRPerSecond: 1e-9}
	for i, c := range ch {
		assert.False(t, c.Found)
		// The nearest point is reported: no point of the curve misses the
		// targets by less.
		require.NotEmpty(t, curves[i].Points)
		assert.Equal(t, impossible.Shortfall(c.Point.Result), c.Shortfall)
		assert.Greater(t, c.Shortfall, 1.0)
		for _, p := range curves[i].Points {
			assert.GreaterOrEqual(t, impossible.Shortfall(p.Result), c.Shortfall)
		}
	}
	_, err = Tune(curves, Targets{MinQAP: 2})
	assert.Error(t, err)
	_, err = Tune(curves, Targets{MaxTD: -1})
	assert.Error(t, err)
}

// Shortfall is the worst ratio of a result to the targets it is held to.
func TestShortfall(t *testing.T) {
	r := Result{MRPerSecond: 0.02, QAP: 0.998, Span: time.Minute}
	r.TD.Mean = 300 * time.Millisecond
	assert.Equal(t, 0.0, Targets{}.Shortfall(r))
	assert.InDelta(t, 1.5, Targets{MaxTD: 200 * time.Millisecond}.Shortfall(r), 1e-12)
	assert.InDelta(t, 2.0, Targets{MaxMRPerSecond: 0.01}.Shortfall(r), 1e-12)
	assert.InDelta(t, 2.0, Targets{MinQAP: 0.999}.Shortfall(r), 1e-9) // 0.002 / 0.001
	assert.InDelta(t, 0.6, Targets{MaxTD: 500 * time.Millisecond, MaxMRPerSecond: 0.1}.Shortfall(r), 1e-12)
	assert.True(t, math.IsInf(Targets{MinQAP: 1}.Shortfall(r), 1))
	r.QAP = 1
	assert.Equal(t, 0.0, Targets{MinQAP: 1}.Shortfall(r))
}

func TestSweepEachAndArgumentErrors(t *testing.T) {
	hbs := agreementTraces()["jitter-loss"]
	a := FixedFamily(durs([]float64{150, 300}))
	b := ChenFamily(chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 50}}, durs([]float64{10}))
	c, err := SweepEach([]Stream{{Name: "x", Heartbeats: hbs}, {Name: "y", Heartbeats: hbs}}, [][]Family{{a}, {a, b}}, SweepConfig{Workers: 3})
	require.NoError(t, err)
	require.Len(t, c, 3)
	assert.Equal(t, []string{"x/fixed", "y/fixed", "y/chen"}, []string{c[0].Stream + "/" + c[0].Family, c[1].Stream + "/" + c[1].Family, c[2].Stream + "/" + c[2].Family})
	assert.Equal(t, c[0].Points, c[1].Points, "same stream and family, same curve")

	_, err = SweepEach([]Stream{{Heartbeats: hbs}}, nil, SweepConfig{})
	assert.Error(t, err)
	_, err = Sweep([]Stream{{Heartbeats: hbs}}, []Family{{Name: "empty", New: a.New}}, SweepConfig{})
	assert.ErrorContains(t, err, "no parameter values")
	_, err = Sweep([]Stream{{Heartbeats: hbs}}, []Family{{Name: "nonew", Values: []float64{1}}}, SweepConfig{})
	assert.ErrorContains(t, err, "no constructor")
	// A stream shorter than the warm-up: the curve reports the error.
	c, err = Sweep([]Stream{{Heartbeats: hbs[:10]}}, []Family{b}, SweepConfig{})
	require.NoError(t, err)
	assert.ErrorContains(t, c[0].Err, "no heartbeat evaluated")
	assert.Empty(t, c[0].Points)
}

// The tuner's edge cases: a point with no observed time meets no MR or QAP
// target; a curve without points has an infinite shortfall; an infinite
// shortfall survives a JSON round trip as null.
func TestTuneEdges(t *testing.T) {
	one := Point{Value: 1, Result: Result{Records: 1, Evaluated: 1, QAP: 1}}
	tg := Targets{MaxMRPerSecond: 0.01, MinQAP: 0.9}
	assert.False(t, tg.Meets(one.Result))
	assert.True(t, math.IsInf(tg.Shortfall(one.Result), 1))
	assert.True(t, Targets{MaxTD: time.Second}.Meets(one.Result), "a TD target alone needs no observed time")

	ch, err := Tune([]Curve{{Stream: "s", Family: "f", Points: []Point{one}}, {Stream: "s", Family: "empty"}}, tg)
	require.NoError(t, err)
	require.Len(t, ch, 2)
	assert.False(t, ch[0].Found)
	assert.True(t, math.IsInf(ch[0].Shortfall, 1))
	assert.False(t, ch[1].Found)
	assert.True(t, math.IsInf(ch[1].Shortfall, 1), "no points: nothing meets")

	b, err := json.Marshal(ch)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"shortfall":null`)
	var back []Choice
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, ch, back)

	ok := Choice{Stream: "s", Found: true, Point: one, Shortfall: 0.5}
	b, err = json.Marshal(ok)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"shortfall":0.5`)
}
