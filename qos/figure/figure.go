package figure

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fdkit/fdkit/qos"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // PNG
	_ "gonum.org/v1/plot/vg/vgsvg" // SVG
)

// Kind selects what a plot shows against the mean detection time.
type Kind int

const (
	// MR shows the mistake rate MR (per second) against TD, both on
	// log scales. Points without mistakes cannot be drawn on a log axis
	// and are left out.
	MR Kind = iota
	// QAP shows the unavailability 1 − QAP (the fraction of time the
	// monitor wrongly suspects) against TD, both on log scales: QAP itself
	// sits between 0.99 and 1 for every useful setting, so on a linear
	// axis every curve lay flat along the top. Points with QAP = 1 are
	// left out.
	QAP
)

func (k Kind) name() string {
	if k == QAP {
		return "qap-td"
	}
	return "mr-td"
}

// LogTicks marks a log axis at every integer multiple of each power of
// ten and labels the multiples that keep about four to twelve labels:
// every multiple below 0.7 decades, 1, 2, 3, 5 and 7 below 1.2, 1, 2 and 5
// up to three decades, 1 and 3 up to six, the powers of ten beyond. gonum's LogTicks labels only the powers of ten, which left a
// TD axis from 180 ms to 3 s with the single label 1000.
type LogTicks struct{}

// Ticks implements plot.Ticker.
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	e0, e1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	label := map[int]bool{1: true, 2: true, 5: true}
	switch decades := math.Log10(hi / lo); {
	case decades > 6:
		label = map[int]bool{1: true}
	case decades > 3:
		label = map[int]bool{1: true, 3: true}
	case decades < 0.7:
		// Less than a factor 5 (TD from 55 to 330 ms): 1-2-5 would
		// label two ticks.
		label = map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true}
	case decades < 1.2:
		label = map[int]bool{1: true, 2: true, 3: true, 5: true, 7: true}
	}
	var ts []plot.Tick
	for e := e0; e <= e1; e++ {
		dec := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * dec
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if label[m] {
				// m·10^e written with e's decimals: 0.3, not
				// 0.30000000000000004.
				t.Label = strconv.FormatFloat(v, 'f', max(0, -int(e)), 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// TDBasisNote returns "arrival-based, + X delay offset" when every point's
// TD is arrival-based (unsynchronized clocks: the TD axis then leaves out
// the network delay except the offset d̄), else "". (Plain words: the
// plots' font has no combining macron for d̄.)
func TDBasisNote(curves []qos.Curve) string {
	note := ""
	for _, c := range curves {
		for _, pt := range c.Points {
			if pt.TDBasis != qos.TDArrival {
				return ""
			}
			note = "arrival-based, + " + pt.DelayOffset.String() + " delay offset"
		}
	}
	return note
}

// Point is one drawn point: X the mean TD in milliseconds, Y the MR or
// 1 − QAP, their 95 % intervals [XLo, XHi] and [YLo, YHi] (the point itself
// when the replay had no intervals), Label the setting ("α=100ms") and Of
// the replayed point it draws.
type Point struct {
	X, Y     float64
	XLo, XHi float64
	YLo, YHi float64
	Label    string
	Of       qos.Point
}

// Points are the drawn points of one curve in parameter order; they are
// the data of gonum's scatter, line, error-bar and label plotters.
type Points []Point

func (p Points) Len() int                    { return len(p) }
func (p Points) XY(i int) (float64, float64) { return p[i].X, p[i].Y }
func (p Points) YError(i int) (float64, float64) {
	return p[i].Y - p[i].YLo, p[i].YHi - p[i].Y
}
func (p Points) XError(i int) (float64, float64) {
	return p[i].X - p[i].XLo, p[i].XHi - p[i].X
}
func (p Points) Label(i int) string { return p[i].Label }

// Monotone reports whether the points' TD never decreases or never
// increases along the parameter: only then does a line through them in
// parameter order read as a curve (SFD's TD is not monotone in SM1).
func Monotone(pts Points) bool {
	up, down := true, true
	for i := 1; i < len(pts); i++ {
		up = up && pts[i].X >= pts[i-1].X
		down = down && pts[i].X <= pts[i-1].X
	}
	return up || down
}

// CurvePoints returns the drawable points of c for kind, in parameter
// order, with their intervals (clamped into the positive range of a log
// axis) and setting labels.
func CurvePoints(c qos.Curve, kind Kind) Points {
	var pts Points
	for _, pt := range c.Points {
		p := Point{X: float64(pt.TD.Mean) / float64(time.Millisecond), Label: SettingLabel(c, pt.Value), Of: pt}
		p.XLo, p.XHi = p.X, p.X
		switch kind {
		case MR:
			p.Y = pt.MRPerSecond
		default:
			p.Y = 1 - pt.QAP
		}
		if !(p.Y > 0) || pt.Span <= 0 {
			continue
		}
		p.YLo, p.YHi = p.Y, p.Y
		if ci := pt.CI; ci != nil {
			p.XLo = float64(ci.TDMean[0]) / float64(time.Millisecond)
			p.XHi = float64(ci.TDMean[1]) / float64(time.Millisecond)
			if kind == MR {
				p.YLo, p.YHi = ci.MRPerSecond[0], ci.MRPerSecond[1]
			} else {
				p.YLo, p.YHi = 1-ci.QAP[1], 1-ci.QAP[0]
			}
			// A log axis has no 0: a lower end at 0 (resamples without
			// mistakes) is drawn to a quarter of the point.
			p.YLo = max(min(p.YLo, p.Y), p.Y/4)
			p.YHi = max(p.YHi, p.Y)
			p.XLo = max(min(p.XLo, p.X), p.X/4)
			p.XHi = max(p.XHi, p.X)
		}
		pts = append(pts, p)
	}
	return pts
}

// New draws curves (normally those of one stream) against the mean TD
// in milliseconds, both axes on log scales: per family a line in TD order
// with its own colour and marker (or markers alone when TD is not monotone
// in the parameter, as for SFD), a large outlined marker for a family
// with a single point (Bertier), the 95 % intervals as error bars when the
// points have them (Config.Intervals), and the setting written at the ends
// and the middle of each curve. The legend is added to the plot; Save
// draws it beside the data area.
func New(curves []qos.Curve, kind Kind, title string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "mean detection time TD (ms, log scale)"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, LogTicks{}
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, LogTicks{}
	switch kind {
	case MR:
		p.Y.Label.Text = "mistake rate MR (1/s, log scale)"
	case QAP:
		p.Y.Label.Text = "unavailability 1 - QAP (log scale)"
	default:
		return nil, fmt.Errorf("figure: unknown plot kind %d", int(kind))
	}
	if b := TDBasisNote(curves); b != "" {
		p.X.Label.Text = strings.Replace(p.X.Label.Text, "(ms", "(ms, "+b, 1)
	}
	// Axis labels at 9 pt: gonum shrinks the data area until the rotated
	// y label fits beside it, and at the default size the MR label left a
	// band of empty space above the plot.
	p.X.Label.TextStyle.Font.Size = vg.Points(9)
	p.Y.Label.TextStyle.Font.Size = vg.Points(9)
	p.Add(plotter.NewGrid())
	names := make([]string, len(curves))
	for i, c := range curves {
		names[i] = c.Family
	}
	var cands []labelCands
	drawn := 0
	for _, c := range curves {
		slot := familyIndex(c.Family, names)
		col, glyph := familyStyle(slot)
		pts := CurvePoints(c, kind)
		if len(pts) == 0 {
			if len(c.Points) > 0 {
				what := "no mistakes"
				if kind == QAP {
					what = "never suspects"
				}
				p.Legend.Add(c.Family + " (" + what + ")")
			}
			continue
		}
		hasCI := false
		for _, pt := range pts {
			hasCI = hasCI || pt.YLo < pt.Y || pt.YHi > pt.Y || pt.XLo < pt.X || pt.XHi > pt.X
		}
		if hasCI {
			ye, err := plotter.NewYErrorBars(pts)
			if err != nil {
				return nil, fmt.Errorf("figure: plotting %s: %w", c.Family, err)
			}
			xe, err := plotter.NewXErrorBars(pts)
			if err != nil {
				return nil, fmt.Errorf("figure: plotting %s: %w", c.Family, err)
			}
			bar := color.NRGBA{R: col.R, G: col.G, B: col.B, A: 0x60}
			ye.Color, xe.Color = bar, bar
			ye.Width, xe.Width = vg.Points(0.7), vg.Points(0.7)
			ye.CapWidth, xe.CapWidth = vg.Points(2.5), vg.Points(2.5)
			p.Add(ye, xe)
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("figure: plotting %s: %w", c.Family, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.2), Shape: glyph}
		label := c.Family
		switch {
		case len(pts) == 1:
			// A single point (Bertier, or phi-akka hidden under the
			// others on the default trace) must stand out: larger, with
			// a ring around it.
			sc.GlyphStyle.Radius = vg.Points(4.5)
			ring, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, fmt.Errorf("figure: plotting %s: %w", c.Family, err)
			}
			ring.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6.5), Shape: draw.RingGlyph{}}
			p.Add(sc, ring)
			p.Legend.Add(label, sc)
		case Monotone(pts):
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("figure: plotting %s: %w", c.Family, err)
			}
			l.Color, l.Width = col, vg.Points(1.2)
			// Beyond twelve families the colours repeat: dash the later
			// lines (the markers differ too).
			l.Dashes = plotutil.Dashes(slot / len(familyColours))
			p.Add(l, sc)
			p.Legend.Add(label, l, sc)
		default:
			p.Add(sc)
			p.Legend.Add(label+" (points: TD not monotone)", sc)
		}
		if len(pts) > 1 && c.Param != "" {
			cands = append(cands, labelCands{pts: pts, col: col})
		}
		drawn++
	}
	if drawn == 0 {
		if kind == MR {
			return nil, errors.New("figure: no point with mistakes to draw on a log scale")
		}
		return nil, errors.New("figure: no point with suspicion (1 - QAP > 0) to draw on a log scale")
	}
	// Whole decades on the y axis (labels outside the range would squeeze
	// the data area), and room on the x axis for the setting labels.
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(p.Y.Min)))
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(p.Y.Max)))
	if p.Y.Min == p.Y.Max {
		p.Y.Min, p.Y.Max = p.Y.Min/10, p.Y.Max*10
	}
	p.X.Min, p.X.Max = p.X.Min/1.08, p.X.Max*1.25
	if err := addSettingLabels(p, cands); err != nil {
		return nil, err
	}
	return p, nil
}

// labelCands are the points of one curve that may carry a setting label.
type labelCands struct {
	pts Points
	col color.RGBA
}

// addSettingLabels writes the setting next to up to three points per
// curve (the ends and the middle first), skipping a label that would
// overlap one already placed (judged on the axes' normalized log scales,
// a label being about 9 % of the width by 4 % of the height).
func addSettingLabels(p *plot.Plot, cands []labelCands) error {
	type spot struct{ X, Y float64 }
	var placed []spot
	free := func(s spot) bool {
		for _, q := range placed {
			if math.Abs(s.X-q.X) < 0.09 && math.Abs(s.Y-q.Y) < 0.04 {
				return false
			}
		}
		return true
	}
	for _, c := range cands {
		n := len(c.pts)
		order := []int{0, n - 1, n / 2, n / 4, 3 * n / 4, n / 8, 7 * n / 8}
		var keep Points
		seen := map[int]bool{}
		for _, i := range order {
			if len(keep) == 3 || seen[i] {
				continue
			}
			seen[i] = true
			pt := c.pts[i]
			s := spot{p.X.Norm(pt.X), p.Y.Norm(pt.Y)}
			if s.X < 0 || s.X > 0.93 || s.Y < 0 || s.Y > 0.97 || !free(s) {
				continue
			}
			placed = append(placed, s)
			keep = append(keep, pt)
		}
		if len(keep) == 0 {
			continue
		}
		lb, err := plotter.NewLabels(keep)
		if err != nil {
			return fmt.Errorf("figure: plotting labels: %w", err)
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Font.Size = vg.Points(7)
			lb.TextStyle[i].Color = c.col
		}
		lb.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(2)}
		p.Add(lb)
	}
	return nil
}

// plotKinds and plotExts are the plots Save draws and the formats it
// writes each in; FileNames derives its names from them.
var (
	plotKinds = []Kind{MR, QAP}
	plotExts  = []string{".png", ".svg"}
)

// FileNames returns the names of every file Save can write for
// prefix, in the order it writes them ("<prefix>mr-td.png",
// "<prefix>mr-td.svg", "<prefix>qap-td.png", "<prefix>qap-td.svg"). With
// prefix "*-" they are glob patterns (path.Match) for the plots of any
// stream, which is how a command recognises its own earlier output.
func FileNames(prefix string) []string {
	names := make([]string, 0, len(plotKinds)*len(plotExts))
	for _, kind := range plotKinds {
		for _, ext := range plotExts {
			names = append(names, prefix+kind.name()+ext)
		}
	}
	return names
}

// Save writes, for the given curves, "<prefix>mr-td" (MR against TD)
// and "<prefix>qap-td" (1 − QAP against TD) as PNG and SVG (19 cm × 11 cm,
// legend on the right) into dir, which must exist. It returns the files
// written. A plot with nothing to draw (no mistakes at any point) is
// skipped, not an error.
func Save(curves []qos.Curve, dir, prefix, title string) ([]string, error) {
	var files []string
	for _, kind := range plotKinds {
		p, err := New(curves, kind, title)
		if err != nil {
			continue
		}
		for _, ext := range plotExts {
			path := filepath.Join(dir, prefix+kind.name()+ext)
			if err := savePlot(p, path); err != nil {
				return files, err
			}
			files = append(files, path)
		}
	}
	return files, nil
}

// Plot file geometry: the data area on the left, the legend in a column of
// its own on the right, so that it never hides a curve.
const (
	plotWidth   = 19 * vg.Centimeter
	plotHeight  = 11 * vg.Centimeter
	legendWidth = 4.8 * vg.Centimeter
)

// savePlot saves p with its legend beside the data area, in the format of
// path's extension, turning a panic of the drawing library (degenerate axes)
// into an error.
func savePlot(p *plot.Plot, path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("figure: drawing %s: %v", path, r)
		}
	}()
	c, err := draw.NewFormattedCanvas(plotWidth, plotHeight, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return fmt.Errorf("figure: saving plot: %w", err)
	}
	legend := p.Legend
	legend.Top = true
	legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend = plot.NewLegend()
	defer func() { p.Legend = legend }()
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	legend.Draw(draw.Crop(dc, plotWidth-legendWidth+vg.Points(4), 0, 0, -vg.Points(24)))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("figure: saving plot: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("figure: saving plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("figure: saving plot %s: %w", path, err)
	}
	return nil
}
