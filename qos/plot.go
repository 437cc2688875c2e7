package qos

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // PNG
	_ "gonum.org/v1/plot/vg/vgsvg" // SVG
)

// palette holds eight distinguishable colours (Okabe–Ito, with black).
var palette = []color.Color{
	color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}, // vermillion
	color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}, // blue
	color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, // bluish green
	color.RGBA{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}, // reddish purple
	color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}, // orange
	color.RGBA{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}, // sky blue
	color.RGBA{A: 0xff},                            // black
	color.RGBA{R: 0x99, G: 0x99, B: 0x33, A: 0xff}, // olive
}

// PlotKind selects what a plot shows against the mean detection time.
type PlotKind int

const (
	// PlotMR shows the mistake rate MR (per second, log scale) against TD.
	// Points without mistakes cannot be drawn on a log axis and are left out.
	PlotMR PlotKind = iota
	// PlotQAP shows the query accuracy probability QAP against TD (TD on a
	// log scale).
	PlotQAP
)

func (k PlotKind) name() string {
	if k == PlotQAP {
		return "qap-td"
	}
	return "mr-td"
}

// ticks125 marks a log axis at 1, 2 and 5 times each power of ten (with
// labels) and at the other integer multiples (without). gonum's LogTicks
// labels only the powers of ten, which left a TD axis from 180 ms to 3 s
// with the single label 1000.
type ticks125 struct{}

// Ticks implements plot.Ticker.
func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		dec := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * dec
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// tdBasisNote returns "arrival-based, d̄ = X" when every point's TD is
// arrival-based (unsynchronized clocks: the TD axis then leaves out the
// network delay except d̄), else "".
func tdBasisNote(curves []Curve) string {
	note := ""
	for _, c := range curves {
		for _, pt := range c.Points {
			if pt.TDBasis != TDArrival {
				return ""
			}
			note = "arrival-based, d̄ = " + pt.DelayOffset.String()
		}
	}
	return note
}

// NewPlot draws curves (normally those of one stream) with the mean TD in
// milliseconds on the x axis: one line with markers per family, a lone
// marker for a family with a single point (Bertier).
func NewPlot(curves []Curve, kind PlotKind, title string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "mean detection time TD (ms)"
	switch kind {
	case PlotMR:
		p.Y.Label.Text = "mistake rate MR (1/s)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	case PlotQAP:
		// QAP saturates near 1 while TD spans decades: a log TD axis keeps
		// the interesting part (small TD) readable.
		p.Y.Label.Text = "query accuracy probability QAP"
		p.X.Label.Text = "mean detection time TD (ms, log scale)"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = ticks125{}
	default:
		return nil, fmt.Errorf("qos: unknown plot kind %d", int(kind))
	}
	if b := tdBasisNote(curves); b != "" {
		p.X.Label.Text = strings.Replace(p.X.Label.Text, "(ms", "(ms, "+b, 1)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	drawn := 0
	for i, c := range curves {
		pts := make(plotter.XYs, 0, len(c.Points))
		for _, pt := range c.Points {
			y := pt.QAP
			if kind == PlotMR {
				y = pt.MRPerSecond
				if y <= 0 {
					continue
				}
			}
			pts = append(pts, plotter.XY{X: float64(pt.TD.Mean) / float64(time.Millisecond), Y: y})
		}
		if len(pts) == 0 {
			if kind == PlotMR && len(c.Points) > 0 {
				p.Legend.Add(c.Family + " (no mistakes)")
			}
			continue
		}
		slices.SortFunc(pts, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		label := c.Family
		col := palette[i%len(palette)]
		if len(c.Points) == 1 {
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, fmt.Errorf("qos: plotting %s: %w", c.Family, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(4), Shape: draw.PyramidGlyph{}}
			p.Add(sc)
			p.Legend.Add(label, sc)
		} else {
			l, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, fmt.Errorf("qos: plotting %s: %w", c.Family, err)
			}
			l.Color = col
			l.Width = vg.Points(1.2)
			// Beyond eight families the colours repeat: dash the later lines.
			l.Dashes = plotutil.Dashes(i / len(palette))
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(1.8), Shape: plotutil.Shape(i)}
			p.Add(l, sc)
			p.Legend.Add(label, l, sc)
		}
		drawn++
	}
	if drawn == 0 {
		if kind == PlotMR {
			return nil, errors.New("qos: no point with mistakes to draw on a log scale")
		}
		return nil, errors.New("qos: no points to draw")
	}
	if kind == PlotQAP && p.Y.Max-p.Y.Min < 1e-6 {
		p.Y.Min = p.Y.Max - 0.001 // every point equally accurate
	}
	if kind == PlotMR {
		// Whole decades: gonum's log ticks label the decades around the data,
		// and a label outside the axis range would squeeze the data area.
		p.Y.Min = math.Pow(10, math.Floor(math.Log10(p.Y.Min)))
		p.Y.Max = math.Pow(10, math.Ceil(math.Log10(p.Y.Max)))
		if p.Y.Min == p.Y.Max {
			p.Y.Min, p.Y.Max = p.Y.Min/10, p.Y.Max*10
		}
	}
	return p, nil
}

// SavePlots writes, for the given curves, "<prefix>mr-td" and
// "<prefix>qap-td" as PNG and SVG (19 cm × 11 cm, legend on the right) into dir, which must
// exist. It returns the files written. A plot with nothing to draw (for
// example no mistakes at any point for MR) is skipped, not an error.
func SavePlots(curves []Curve, dir, prefix, title string) ([]string, error) {
	var files []string
	for _, kind := range []PlotKind{PlotMR, PlotQAP} {
		p, err := NewPlot(curves, kind, title)
		if err != nil {
			continue
		}
		for _, ext := range []string{".png", ".svg"} {
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
			err = fmt.Errorf("qos: drawing %s: %v", path, r)
		}
	}()
	c, err := draw.NewFormattedCanvas(plotWidth, plotHeight, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return fmt.Errorf("qos: saving plot: %w", err)
	}
	legend := p.Legend
	p.Legend = plot.NewLegend()
	defer func() { p.Legend = legend }()
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	legend.Draw(draw.Crop(dc, plotWidth-legendWidth+vg.Points(4), 0, 0, -vg.Points(24)))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("qos: saving plot: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("qos: saving plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("qos: saving plot %s: %w", path, err)
	}
	return nil
}
