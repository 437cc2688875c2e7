package figure

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"
)

// pt is a replayed point over 100 s: mean TD td ms, mistakes mistakes
// (MR mistakes/100 per second), QAP 1 − mistakes·10⁻⁴.
func pt(v, td float64, mistakes int) qos.Point {
	r := qos.Result{Span: 100 * time.Second, Mistakes: mistakes, MRPerSecond: float64(mistakes) / 100, QAP: 1 - float64(mistakes)*1e-4}
	r.TD.Mean = ms(td)
	r.Records, r.Evaluated = 1000, 1000
	return qos.Point{Value: v, Result: r}
}

// A point without mistakes is drawn at the one-sided 95 % bound 3/T of
// its MR (it was left out: a log axis has no 0), with no interval below.
func TestZeroMistakesAreBounds(t *testing.T) {
	c := qos.Curve{Family: "chen", Param: "alpha", Unit: "ms", Points: []qos.Point{pt(1, 100, 20), pt(2, 200, 3), pt(3, 300, 0)}}
	pts := CurvePoints(c, MR)
	require.Len(t, pts, 3)
	assert.False(t, pts[1].Bound)
	assert.True(t, pts[2].Bound)
	assert.InDelta(t, 0.03, pts[2].Y, 1e-12, "3/T with T = 100 s")
	assert.Equal(t, pts[2].Y, pts[2].YLo)
	require.Len(t, Runs(pts), 1)
	assert.Len(t, Runs(pts)[0], 2, "the line ends at the last measured point")
	// On a 1 − QAP axis the point has no place: it is left out.
	assert.Len(t, CurvePoints(c, QAP), 2)
}

// No line crosses a range where no point was computed: a point with no
// observed time, or a bound, splits the curve.
func TestRunsBreakAtGaps(t *testing.T) {
	hole := pt(3, 250, 5)
	hole.Span = 0
	c := qos.Curve{Family: "fixed", Param: "timeout", Points: []qos.Point{pt(1, 100, 40), pt(2, 200, 10), hole, pt(4, 300, 4), pt(5, 400, 2)}}
	runs := Runs(CurvePoints(c, MR))
	require.Len(t, runs, 2)
	assert.Equal(t, []float64{100, 200}, []float64{runs[0][0].X, runs[0][1].X})
	assert.Equal(t, []float64{300, 400}, []float64{runs[1][0].X, runs[1][1].X})
	c.Points[2] = pt(3, 250, 0)
	runs = Runs(CurvePoints(c, MR))
	require.Len(t, runs, 2, "a bound in the middle splits the line too")
}

// The axes zoom to where the families differ: one family alone at MR
// 10/s and TD 20 ms (φ Cassandra on PlanetLab) is off the scale, marked at
// the border, instead of stretching both axes.
func TestLayoutZoomsWhereFamiliesDiffer(t *testing.T) {
	var curves []qos.Curve
	for _, f := range []string{"fixed", "chen", "2w-fd", "kappa", "satzger"} {
		curves = append(curves, qos.Curve{Family: f, Param: "x", Points: []qos.Point{pt(1, 100, 100), pt(2, 150, 10), pt(3, 250, 2)}})
	}
	curves = append(curves, qos.Curve{Family: "phi-cassandra", Param: "threshold", Points: []qos.Point{pt(1, 20, 1000), pt(2, 25, 900)}})
	ax, series, ok := Layout(curves, MR)
	require.True(t, ok)
	require.Len(t, series, 6)
	assert.Greater(t, ax.XMin, 60.0, "x from the shared range, not from 20 ms")
	assert.Less(t, ax.XMax, 400.0)
	assert.Equal(t, 1.0, ax.YMax, "y up to the decade above 1/s, not 10/s")
	assert.Equal(t, 0.01, ax.YMin)
	dx, dy := ax.Off(series[5].Points[0].X, series[5].Points[0].Y)
	assert.Equal(t, [2]int{-1, 1}, [2]int{dx, dy})
	x, y := ax.Clamp(20, 10)
	assert.Equal(t, [2]float64{ax.XMin, ax.YMax}, [2]float64{x, y})

	// One family alone: every point is on the scale.
	ax, _, _ = Layout(curves[5:], MR)
	assert.LessOrEqual(t, ax.XMin, 20.0)
	assert.GreaterOrEqual(t, ax.YMax, 10.0)
}

// The SVG's background covers the whole page (legend included), and the
// PDF is 3.5 in wide with no text under 7 pt; the legend sits below the
// data in a few rows.
func TestFigureFiles(t *testing.T) {
	var curves []qos.Curve
	for i, f := range knownFamilies {
		curves = append(curves, qos.Curve{Family: f, Param: "x", Points: []qos.Point{pt(1, 100+float64(i), 100), pt(2, 150, 10), pt(3, 250, 2), pt(4, 300, 0)}})
	}
	f, err := New(curves, MR, "eleven families")
	require.NoError(t, err)
	dir := t.TempDir()
	svg := filepath.Join(dir, "f.svg")
	require.NoError(t, f.Save(svg, Screen))
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	m := regexp.MustCompile(`viewBox="0 0 ([0-9.]+) ([0-9.]+)"[^<]*<g[^>]*>\s*<path d="M0,0L([0-9.]+),0L([0-9.]+),([0-9.]+)L0,([0-9.]+)Z" style="fill:#FFFFFF"`).FindSubmatch(b)
	require.NotNil(t, m, "the first thing drawn is a white page")
	assert.Equal(t, string(m[1]), string(m[3]))
	assert.Equal(t, string(m[2]), string(m[5]))

	pdf := filepath.Join(dir, "f.pdf")
	require.NoError(t, f.Save(pdf, Column))
	b, err = os.ReadFile(pdf)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(b, []byte("%PDF")))
	assert.True(t, bytes.Contains(b, []byte("/MediaBox [0 0 252.00 ")), "3.5 in = 252 pt")
	p := f.Plot()
	for _, size := range []vg.Length{p.Title.TextStyle.Font.Size, p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size, p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size} {
		assert.GreaterOrEqual(t, size, vg.Points(7))
	}
	leg := legendColumns(f.legend, legendStyle(Column), Column.Width)
	total, rows := vg.Length(0), 0
	for _, c := range leg {
		total, rows = total+c.width, max(rows, c.n)
	}
	assert.LessOrEqual(t, total, Column.Width)
	assert.LessOrEqual(t, rows, 5, "eleven families and the bound's key in at most five rows")
}

// A jump in TD that the sweep did not sample breaks the line: κ's TD steps
// by Δ where its threshold passes an integer (PlanetLab sender 7: from
// 105 to 200 ms), and the line drew settings that do not exist.
func TestRunsBreakAtTDJumps(t *testing.T) {
	var pts []qos.Point
	for i, td := range []float64{100, 101, 102, 103, 104, 105, 200, 201, 202, 203} {
		pts = append(pts, pt(float64(i), td, 20-i))
	}
	runs := Runs(CurvePoints(qos.Curve{Family: "kappa", Param: "threshold", Points: pts}, MR))
	require.Len(t, runs, 2)
	assert.Len(t, runs[0], 6)
	assert.Len(t, runs[1], 4)
	// An evenly log-spaced sweep is one line.
	pts = pts[:0]
	for i := range 10 {
		pts = append(pts, pt(float64(i), 100*math.Pow(1.3, float64(i)), 20-i))
	}
	assert.Len(t, Runs(CurvePoints(qos.Curve{Family: "fixed", Param: "timeout", Points: pts}, MR)), 1)
}

// The drawn axes are the zoomed ones: a line that runs on to settings off
// the scale is cut at the border, where their markers are, instead of
// widening the axes for them (gonum's Plot.Add stretches the axes to every
// line's data).
func TestOffScaleKeepsZoom(t *testing.T) {
	var curves []qos.Curve
	for _, f := range []string{"fixed", "chen", "2w-fd", "kappa", "satzger"} {
		curves = append(curves, qos.Curve{Family: f, Param: "x", Points: []qos.Point{pt(1, 100, 100), pt(2, 150, 10), pt(3, 250, 2)}})
	}
	curves = append(curves, qos.Curve{Family: "phi-cassandra", Param: "threshold", Points: []qos.Point{pt(1, 20, 1000), pt(2, 25, 900), pt(3, 110, 50), pt(4, 140, 12)}})
	for _, kind := range []Kind{MR, QAP} {
		f, err := New(curves, kind, "")
		require.NoError(t, err)
		ax, p := f.Axes(), f.Plot()
		assert.Equal(t, [4]float64{ax.XMin, ax.XMax, ax.YMin, ax.YMax}, [4]float64{p.X.Min, p.X.Max, p.Y.Min, p.Y.Max}, "kind %d", kind)
		assert.Greater(t, p.X.Min, 60.0, "kind %d: x not stretched to 20 ms", kind)
	}
}

// Figures drawn on several goroutines at once are the files Save draws
// one after the other (PDFs but for their creation time): SaveKind shares
// nothing between calls. Run with -race.
func TestSaveKindConcurrent(t *testing.T) {
	curves := sweep(t, jitterLoss(t), []float64{150, 300, 600}, []float64{5, 20, 80})
	want := t.TempDir()
	files, err := Save(curves, want, "p-", "sender p")
	require.NoError(t, err)
	require.Len(t, files, 6)
	dirs := make([]string, 2)
	done := make(chan error, len(dirs)*len(Kinds()))
	for i := range dirs {
		dirs[i] = t.TempDir()
		for _, k := range Kinds() {
			go func() {
				_, err := SaveKind(curves, k, dirs[i], "p-", "sender p")
				done <- err
			}()
		}
	}
	for range cap(done) {
		require.NoError(t, <-done)
	}
	date := regexp.MustCompile(`/(Creation|Mod)Date \(D:\d+\)`)
	for _, name := range FileNames("p-") {
		w, err := os.ReadFile(filepath.Join(want, name))
		require.NoError(t, err)
		for _, d := range dirs {
			g, err := os.ReadFile(filepath.Join(d, name))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(date.ReplaceAll(w, nil), date.ReplaceAll(g, nil)), "%s differs", name)
		}
	}
	_, err = SaveKind(curves, Kind(7), want, "p-", "")
	assert.ErrorContains(t, err, "unknown kind 7")
}

// Write writes what Save writes (PDFs but for their dates), in each of
// Formats, under the names FileNames lists; an unknown format is an error.
func TestWriteIsSave(t *testing.T) {
	curves := sweep(t, jitterLoss(t), []float64{150, 300, 600}, []float64{5, 20, 80})
	want := t.TempDir()
	_, err := Save(curves, want, "p-", "sender p")
	require.NoError(t, err)
	assert.Equal(t, []Format{{".png", Screen}, {".svg", Screen}, {".pdf", Column}}, Formats())
	date := regexp.MustCompile(`/(Creation|Mod)Date \(D:\d+\)`)
	var names []string
	for _, k := range Kinds() {
		f, err := New(curves, k, "sender p")
		require.NoError(t, err)
		for _, ff := range Formats() {
			name := FileName("p-", k, ff.Ext)
			names = append(names, name)
			var b bytes.Buffer
			require.NoError(t, f.Write(&b, strings.TrimPrefix(ff.Ext, "."), ff.Size))
			w, err := os.ReadFile(filepath.Join(want, name))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(date.ReplaceAll(w, nil), date.ReplaceAll(b.Bytes(), nil)), "%s differs", name)
		}
		assert.ErrorContains(t, f.Write(io.Discard, "bmp", Screen), "figure: unsupported format: \"bmp\"")
	}
	assert.Equal(t, FileNames("p-"), names)
}

// SetPDFDate fixes both dates of the PDFs written afterwards, so that two
// writes are identical (user48's F12: every PDF differed by its
// CreationDate and ModDate); the zero time restores the time of writing.
func TestSetPDFDate(t *testing.T) {
	curves := sweep(t, jitterLoss(t), []float64{150, 300, 600}, []float64{5, 20, 80})
	f, err := New(curves, MR, "sender p")
	require.NoError(t, err)
	pdf := func() []byte {
		var b bytes.Buffer
		require.NoError(t, f.Write(&b, "pdf", Column))
		return b.Bytes()
	}
	SetPDFDate(time.Date(2026, 12, 5, 16, 0, 0, 0, time.FixedZone("CET", 3600)))
	defer SetPDFDate(time.Time{})
	a := pdf()
	assert.Contains(t, string(a), "/CreationDate (D:20261205150000)")
	assert.Contains(t, string(a), "/ModDate (D:20261205150000)")
	assert.Equal(t, a, pdf())
	SetPDFDate(time.Time{})
	assert.NotContains(t, string(pdf()), "D:20261205150000")
}
