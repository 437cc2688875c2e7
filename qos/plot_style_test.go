package qos

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every family, fdkit's eleven and one more, gets its own colour and its
// own (colour, marker) pair; fixed and phi-cassandra were both orange.
func TestFamilyStylesDistinct(t *testing.T) {
	names := append(append([]string{}, knownFamilies...), "new")
	colours := map[string]string{}
	pairs := map[string]string{}
	for _, n := range names {
		col, g := familyStyle(familyIndex(n, names))
		c := hexColour(col)
		if o, dup := colours[c]; dup {
			t.Errorf("%s and %s share colour %s", n, o, c)
		}
		colours[c] = n
		pairs[fmt.Sprintf("%s/%T", c, g)] = n
	}
	assert.Len(t, pairs, len(names))
	assert.Equal(t, familyIndex("phi-akka", nil), familyIndex("phi-akka", names), "a known family keeps its style")
	assert.Equal(t, len(knownFamilies)+1, familyIndex("y", []string{"fixed", "x", "y"}))
}

// Log ticks: labelled at 1, 2, 5 over a few decades, written without
// binary-fraction noise, fewer labels over many decades.
func TestLogTicksLabels(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	assert.Equal(t, []string{"0.1", "0.2", "0.5", "1", "2", "5", "10"}, labels(0.1, 10))
	assert.Equal(t, []string{"0.0001", "0.0003", "0.001", "0.003", "0.01", "0.03", "0.1", "0.3", "1", "3", "10"}, labels(1e-4, 10))
	assert.Len(t, labels(1e-8, 1), 9, "only the powers of ten over eight decades")
	assert.Nil(t, (logTicks{}).Ticks(0, 1))
}

// SFD's TD is not monotone in SM1: its points are not joined; a curve
// whose TD grows with the parameter is.
func TestMonotoneTD(t *testing.T) {
	assert.True(t, monotoneTD(plotPoints{{x: 1}, {x: 2}, {x: 2}, {x: 5}}))
	assert.True(t, monotoneTD(plotPoints{{x: 5}, {x: 2}}))
	assert.False(t, monotoneTD(plotPoints{{x: 1}, {x: 3}, {x: 2}}))
}

// Points carry their intervals (clamped into a log axis) and settings.
func TestCurvePoints(t *testing.T) {
	r := Result{Span: 60e9, MRPerSecond: 0.5, QAP: 0.99, TD: TDStats{Mean: ms(200)},
		CI: &CI{MRPerSecond: [2]float64{0, 0.8}, QAP: [2]float64{0.98, 0.995}, TDMean: [2]time.Duration{ms(190), ms(210)}}}
	pts := curvePoints(Curve{Family: "phi-normal", Param: "Phi", Points: []Point{{Value: 8, Result: r}, {Value: 9, Result: Result{Span: 60e9, QAP: 1}}}}, PlotQAP)
	require.Len(t, pts, 1, "QAP 1 has no place on a log axis")
	assert.Equal(t, "Φ=8", pts[0].label)
	assert.InDelta(t, 0.01, pts[0].y, 1e-12)
	assert.InDelta(t, 0.005, pts[0].yLo, 1e-12)
	assert.InDelta(t, 0.02, pts[0].yHi, 1e-12)
	assert.InDelta(t, 190, pts[0].xLo, 1e-9)
	pts = curvePoints(Curve{Family: "phi-normal", Param: "Phi", Points: []Point{{Value: 8, Result: r}}}, PlotMR)
	assert.InDelta(t, 0.125, pts[0].yLo, 1e-12, "a lower end at 0 is drawn to a quarter of the point")
}
