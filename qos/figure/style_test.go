package figure

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fdkit/fdkit/qos"
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
		c := fmt.Sprintf("#%02x%02x%02x", col.R, col.G, col.B)
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

// Log ticks: over two decades or more, the powers of ten alone, written
// as powers (an MR axis read "0.0000001"); over less, 1-2-5 or more,
// plain numbers from 0.01 to 9999 and powers beyond.
func TestLogTicksLabels(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (LogTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	assert.Equal(t, []string{"10^-1", "10^0", "10^1"}, labels(0.1, 10))
	assert.Equal(t, []string{"10^-8", "10^-7", "10^-6", "10^-5", "10^-4", "10^-3", "10^-2", "10^-1", "10^0"}, labels(1e-8, 1))
	assert.Equal(t, []string{"200", "500", "1000", "2000"}, labels(180, 3000))
	assert.Equal(t, []string{"0.02", "0.03", "0.05", "0.07", "0.1"}, labels(0.015, 0.12))
	assert.Equal(t, []string{"10^-7", "10^-6"}, labels(1e-7, 5e-6))
	assert.Empty(t, labels(2e-7, 5e-7), "no 2·10^-7 in a font without ·")
	assert.Equal(t, []string{"90", "100", "110", "120", "130", "140"}, labels(88, 145), "a narrow axis had the labels 90 and 100 alone")
	assert.Nil(t, (LogTicks{}).Ticks(0, 1))
}

// SFD's TD is not monotone in SM1: its points are not joined; a curve
// whose TD grows with the parameter is.
func TestMonotoneTD(t *testing.T) {
	assert.True(t, Monotone(Points{{X: 1}, {X: 2}, {X: 2}, {X: 5}}))
	assert.True(t, Monotone(Points{{X: 5}, {X: 2}}))
	assert.False(t, Monotone(Points{{X: 1}, {X: 3}, {X: 2}}))
}

// Points carry their intervals (clamped into a log axis) and settings.
func TestCurvePoints(t *testing.T) {
	r := qos.Result{Span: 60e9, MRPerSecond: 0.5, QAP: 0.99, TD: qos.TDStats{Mean: ms(200)},
		CI: &qos.CI{MRPerSecond: [2]float64{0, 0.8}, QAP: [2]float64{0.98, 0.995}, TDMean: [2]time.Duration{ms(190), ms(210)}}}
	pts := CurvePoints(qos.Curve{Family: "phi-normal", Param: "threshold", Points: []qos.Point{{Value: 8, Result: r}, {Value: 9, Result: qos.Result{Span: 60e9, QAP: 1}}}}, QAP)
	require.Len(t, pts, 1, "QAP 1 has no place on a log axis")
	assert.Equal(t, "Φ=8", pts[0].Label)
	assert.InDelta(t, 0.01, pts[0].Y, 1e-12)
	assert.InDelta(t, 0.005, pts[0].YLo, 1e-12)
	assert.InDelta(t, 0.02, pts[0].YHi, 1e-12)
	assert.InDelta(t, 190, pts[0].XLo, 1e-9)
	pts = CurvePoints(qos.Curve{Family: "phi-normal", Param: "threshold", Points: []qos.Point{{Value: 8, Result: r}}}, MR)
	assert.InDelta(t, 0.125, pts[0].YLo, 1e-12, "a lower end at 0 is drawn to a quarter of the point")
}

func TestSave(t *testing.T) {
	dir := t.TempDir()
	if d := os.Getenv("FDKIT_PLOT_DIR"); d != "" {
		dir = d
	}
	files, err := Save(sweep(t, jitterLoss(t), logRange(t, 100, 400, 10), logRange(t, 1, 300, 10)), dir, "gen-", "generated trace")
	require.NoError(t, err)
	assert.Len(t, files, 6, "MR and 1 − QAP as PNG, SVG and PDF")
	for _, f := range files {
		st, err := os.Stat(f)
		require.NoError(t, err)
		assert.Greater(t, st.Size(), int64(1000), f)
	}
	assert.FileExists(t, filepath.Join(dir, "gen-mr-td.svg"))
	_, err = New(nil, MR, "empty")
	assert.Error(t, err)
}

// Degenerate data still gives a plot: one point, all QAP equal to 1.
func TestSavePlotsDegenerate(t *testing.T) {
	hbs := jitterLoss(t)
	c := sweep(t, hbs, []float64{5000}, nil)
	require.Equal(t, 0, c[0].Points[0].Mistakes)
	files, err := Save(c, t.TempDir(), "", "one point")
	require.NoError(t, err)
	assert.Len(t, files, 3, "no mistake: the MR figure shows the 3/T bound; no suspicion: no 1 − QAP figure")
	_, err = New(c, QAP, "one point")
	assert.ErrorContains(t, err, "no point with suspicion")

	c = sweep(t, hbs, []float64{130}, nil)
	require.Positive(t, c[0].Points[0].Mistakes)
	files, err = Save(c, t.TempDir(), "", "one point")
	require.NoError(t, err)
	assert.Len(t, files, 6, "a single point with mistakes: both figures")
}

// With unsynchronized clocks TD leaves out the network delay: the TD axis
// says so (arrival-based, with d̄), and says nothing when TD is send-based.
func TestPlotAxisNamesTDBasis(t *testing.T) {
	mk := func(basis qos.TDBasis, d time.Duration) []qos.Curve {
		r := qos.Result{Span: time.Minute, TDBasis: basis, DelayOffset: d, MRPerSecond: 0.5, QAP: 0.99, TD: qos.TDStats{Mean: ms(200)}}
		r2 := r
		r2.MRPerSecond, r2.QAP, r2.TD.Mean = 0.1, 0.999, ms(300)
		return []qos.Curve{{Family: "chen", Param: "alpha", Points: []qos.Point{{Value: 1, Result: r}, {Value: 2, Result: r2}}}}
	}
	for _, k := range []Kind{MR, QAP} {
		p, err := New(mk(qos.TDArrival, ms(12)), k, "s")
		require.NoError(t, err)
		assert.Contains(t, p.Plot().X.Label.Text, "(ms, arrival-based, + 12ms delay offset")
		p, err = New(mk(qos.TDSend, 0), k, "s")
		require.NoError(t, err)
		assert.NotContains(t, p.Plot().X.Label.Text, "arrival")
	}
}

// The log TD axis is labelled at 1, 2 and 5 per decade:
// with decade labels only, TD from 180 ms to 3 s showed the single label
// 1000.
func TestQAPPlotTDAxisLabels(t *testing.T) {
	r := qos.Result{Span: time.Minute, TDBasis: qos.TDSend, QAP: 0.9, TD: qos.TDStats{Mean: ms(180)}}
	r2 := r
	r2.QAP, r2.TD.Mean = 0.999, ms(3000)
	p, err := New([]qos.Curve{{Family: "chen", Param: "alpha", Points: []qos.Point{{Value: 1, Result: r}, {Value: 2, Result: r2}}}}, QAP, "s")
	require.NoError(t, err)
	var labels []string
	for _, tk := range p.Plot().X.Tick.Marker.Ticks(p.Plot().X.Min, p.Plot().X.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"200", "500", "1000", "2000"}, labels)
}

// Plots show the swept parameter's symbol from the registry of package
// spec, whatever form the family's name takes.
func TestParamSymbol(t *testing.T) {
	for _, c := range []struct{ family, param, want string }{
		{"phi-akka", "threshold", "Φ"},
		{"akka(threshold=12)", "threshold", "Φ"},
		{"satzger", "threshold", "θ"},
		{"kappa", "threshold", "K"},
		{"chen(window=100) alpha=10ms..1s:log", "alpha", "α"},
		{"fixed", "timeout", "T"},
		{"sfd", "sm1", "SM1"},
		{"my-own", "c", "c"},
		{"chen", "window", "n"},
		{"chen", "restart-jump", "restart-jump"},
	} {
		assert.Equal(t, c.want, ParamSymbol(c.family, c.param), "%s %s", c.family, c.param)
	}
}
