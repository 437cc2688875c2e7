package figure

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fdkit/fdkit/qos"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // PNG
	_ "gonum.org/v1/plot/vg/vgpdf" // PDF
	_ "gonum.org/v1/plot/vg/vgsvg" // SVG
)

// Kind selects what a plot shows against the mean detection time.
type Kind int

const (
	// MR shows the mistake rate MR (per second) against TD, both on
	// log scales. A point without mistakes has no place on a log axis: it
	// is drawn as a marker pointing down at the 95 % upper bound 3/T
	// (Point.Bound).
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

// Figure is one figure of a stream's curves, ready to be drawn at a Size.
type Figure struct {
	plot   *plot.Plot
	axes   Axes
	legend []legendEntry
	labels []labelCands
}

// legendEntry is one line of a figure's legend.
type legendEntry struct {
	text   string
	thumbs []plot.Thumbnailer
}

// Plot returns the gonum plot the figure draws (title, axes and data; the
// legend is drawn apart, below the data).
func (f *Figure) Plot() *plot.Plot { return f.plot }

// Axes returns the figure's axis ranges (see Layout).
func (f *Figure) Axes() Axes { return f.axes }

// New draws curves (normally those of one stream) against the mean TD
// in milliseconds, both axes on log scales zoomed to where the families
// differ (Layout): per family its colour and marker, lines through runs of
// computed points when TD is monotone in the parameter (markers alone
// otherwise, as for SFD), a ringed marker for a family with a single point
// (Bertier), 95 % intervals as error bars when the points have them
// (Config.Intervals), points without mistakes as markers pointing down at
// their 3/T bound, points off the scale as open triangles on the border
// pointing their way, and the setting written next to a few points of each
// curve. The legend is drawn below the data.
func New(curves []qos.Curve, kind Kind, title string) (*Figure, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "mean detection time TD (ms)"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Scale, a.Tick.Marker = plot.LogScale{}, LogTicks{}
		a.Tick.Label.Handler = powerText{text.Plain{Fonts: font.DefaultCache}}
	}
	switch kind {
	case MR:
		p.Y.Label.Text = "mistake rate MR (1/s)"
	case QAP:
		p.Y.Label.Text = "unavailability 1 - QAP"
	default:
		return nil, fmt.Errorf("figure: unknown kind %d", int(kind))
	}
	if b := TDBasisNote(curves); b != "" {
		p.X.Label.Text = strings.Replace(p.X.Label.Text, "(ms", "(ms, "+b, 1)
	}
	ax, series, ok := Layout(curves, kind)
	if !ok {
		if kind == MR {
			return nil, errors.New("figure: no point with observed time to draw")
		}
		return nil, errors.New("figure: no point with suspicion (1 - QAP > 0) to draw on a log scale")
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = ax.XMin, ax.XMax, ax.YMin, ax.YMax
	p.Add(plotter.NewGrid())
	f := &Figure{plot: p, axes: ax}
	var anyBound, anyOff bool
	for _, s := range series {
		if len(s.Points) == 0 {
			if len(s.Curve.Points) > 0 {
				f.legend = append(f.legend, legendEntry{text: s.Curve.Family + " (never suspects)"})
			}
			continue
		}
		bound, off, err := f.addSeries(s)
		if err != nil {
			return nil, err
		}
		anyBound, anyOff = anyBound || bound, anyOff || off
	}
	// Plot.Add widens the axes to each line's data, which runs on to the
	// settings off the scale: the zoomed ranges are set again, so that
	// such a line is cut at the border where their markers are.
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = ax.XMin, ax.XMax, ax.YMin, ax.YMax
	grey := color.RGBA{0x55, 0x55, 0x55, 0xff}
	if anyBound {
		f.legend = append(f.legend, legendEntry{text: "no mistake: bound 3/T", thumbs: []plot.Thumbnailer{glyphThumb{draw.GlyphStyle{Color: grey, Radius: vg.Points(3), Shape: boundGlyph{}}}}})
	}
	if anyOff {
		f.legend = append(f.legend, legendEntry{text: "off the scale", thumbs: []plot.Thumbnailer{glyphThumb{draw.GlyphStyle{Color: grey, Radius: vg.Points(3), Shape: edgeGlyph{dx: 1}}}}})
	}
	return f, nil
}

// addSeries adds one family's error bars, lines, markers and legend entry
// to the figure, and says whether it drew a bound and a point off the
// scale.
func (f *Figure) addSeries(s Series) (anyBound, anyOff bool, err error) {
	p, ax, col := f.plot, f.axes, s.Colour
	var on, bounds Points
	var offs []edgeMark
	for _, pt := range s.Points {
		if dx, dy := ax.Off(pt.X, pt.Y); dx != 0 || dy != 0 {
			x, y := ax.Clamp(pt.X, pt.Y)
			offs = append(offs, edgeMark{x: x, y: y, dx: dx, dy: dy})
			continue
		}
		// Error bars end at the border.
		pt.XLo, pt.XHi = max(pt.XLo, ax.XMin), min(pt.XHi, ax.XMax)
		pt.YLo, pt.YHi = max(pt.YLo, ax.YMin), min(pt.YHi, ax.YMax)
		if pt.Bound {
			bounds = append(bounds, pt)
		} else {
			on = append(on, pt)
		}
	}
	wrap := func(e error) error { return fmt.Errorf("figure: plotting %s: %w", s.Curve.Family, e) }
	hasCI := false
	for _, pt := range on {
		hasCI = hasCI || pt.YLo < pt.Y || pt.YHi > pt.Y || pt.XLo < pt.X || pt.XHi > pt.X
	}
	if bars := Barred(on); hasCI {
		ye, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return false, false, wrap(err)
		}
		xe, err := plotter.NewXErrorBars(bars)
		if err != nil {
			return false, false, wrap(err)
		}
		bar := color.NRGBA{R: col.R, G: col.G, B: col.B, A: 0x60}
		ye.Color, xe.Color = bar, bar
		ye.Width, xe.Width = vg.Points(0.6), vg.Points(0.6)
		ye.CapWidth, xe.CapWidth = vg.Points(2), vg.Points(2)
		p.Add(ye, xe)
	}
	glyph := draw.GlyphStyle{Color: col, Radius: vg.Points(2.2), Shape: s.Glyph}
	var thumbs []plot.Thumbnailer
	label := s.Curve.Family
	if s.Joined && len(s.Points) > 1 {
		dashes := plotutil.Dashes(familyIndex(s.Curve.Family, nil) / len(familyColours))
		for _, run := range Runs(s.Points) {
			l, err := plotter.NewLine(run)
			if err != nil {
				return false, false, wrap(err)
			}
			l.Color, l.Width, l.Dashes = col, vg.Points(1.1), dashes
			p.Add(l)
		}
		thumbs = append(thumbs, &plotter.Line{XYs: nil, LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1.1), Dashes: dashes}})
	} else if len(s.Points) > 1 {
		label += " (points)"
	}
	if len(s.Points) == 1 {
		// A single point (Bertier) must stand out: larger, ringed.
		glyph.Radius = vg.Points(3.5)
		p.Add(marks{pts: on, style: draw.GlyphStyle{Color: color.Black, Radius: vg.Points(5.5), Shape: draw.RingGlyph{}}})
	}
	p.Add(marks{pts: on, style: glyph})
	boundStyle := draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: boundGlyph{}}
	p.Add(marks{pts: bounds, style: boundStyle})
	p.Add(edges{marks: offs, style: draw.GlyphStyle{Color: col, Radius: vg.Points(2.5)}})
	thumbs = append(thumbs, glyphThumb{glyph})
	f.legend = append(f.legend, legendEntry{text: label, thumbs: thumbs})
	if len(on) > 1 && s.Curve.Param != "" {
		f.labels = append(f.labels, labelCands{pts: on, col: col})
	}
	return len(bounds) > 0, len(offs) > 0, nil
}

// legendStyle returns the legend's style at size s.
func legendStyle(s Size) plot.Legend {
	small := max(s.Font-vg.Points(1), vg.Points(7))
	leg := plot.NewLegend()
	leg.TextStyle.Font.Size = small
	leg.ThumbnailWidth = 2 * small
	leg.Padding = small / 5
	return leg
}

// legendColumn is one column of a legend: n entries in width.
type legendColumn struct {
	n     int
	width vg.Length
}

// legendColumns splits entries, in order, into the fewest rows whose
// columns (each as wide as its widest entry) fit in width.
func legendColumns(entries []legendEntry, leg plot.Legend, width vg.Length) []legendColumn {
	pad := leg.ThumbnailWidth + 2*leg.TextStyle.Font.Size
	for rows := 1; ; rows++ {
		var cols []legendColumn
		total := vg.Length(0)
		for i := 0; i < len(entries); i += rows {
			col := legendColumn{n: min(rows, len(entries)-i)}
			for _, e := range entries[i : i+col.n] {
				col.width = max(col.width, leg.TextStyle.Width(e.text)+pad)
			}
			cols, total = append(cols, col), total+col.width
		}
		if total <= width || rows >= len(entries) {
			return cols
		}
	}
}

// labelCands are the points of one curve that may carry a setting label.
type labelCands struct {
	pts Points
	col color.RGBA
}

// settingLabels writes the setting next to up to three points per curve
// (the ends and the middle first) in text of size size, skipping a label
// that would overlap one already placed or leave the data area dc.
func (f *Figure) settingLabels(size vg.Length, dc draw.Canvas) ([]*plotter.Labels, error) {
	p := f.plot
	w, h := float64(dc.Max.X-dc.Min.X), float64(dc.Max.Y-dc.Min.Y)
	if w <= 0 || h <= 0 {
		return nil, nil
	}
	// A label is about 6 characters of 0.55 em by 1.2 em, in units of the
	// data area.
	lw, lh := 6*0.55*float64(size)/w, 1.2*float64(size)/h
	type spot struct{ X, Y float64 }
	var placed []spot
	free := func(s spot) bool {
		for _, q := range placed {
			if math.Abs(s.X-q.X) < lw && math.Abs(s.Y-q.Y) < lh {
				return false
			}
		}
		return true
	}
	var out []*plotter.Labels
	for _, c := range f.labels {
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
			if s.X < 0 || s.X > 1-lw || s.Y < 0 || s.Y > 1-lh || !free(s) {
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
			return nil, fmt.Errorf("figure: plotting labels: %w", err)
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Font.Size = size
			lb.TextStyle[i].Color = c.col
		}
		lb.Offset = vg.Point{X: size / 2, Y: size / 4}
		out = append(out, lb)
	}
	return out, nil
}

// plotKinds are the figures Save draws; formats the files and sizes it
// writes each in. FileNames derives its names from them.
var (
	plotKinds = []Kind{MR, QAP}
	formats   = []Format{{".png", Screen}, {".svg", Screen}, {".pdf", Column}}
)

// Format is a file format Save writes each figure in: the file name's
// extension (".png") and the size the figure is drawn at.
type Format struct {
	Ext  string
	Size Size
}

// Formats returns the formats Save writes each figure in, in its order:
// PNG and SVG at Screen size, PDF at Column size.
func Formats() []Format { return slices.Clone(formats) }

// Size is a figure's page: width, height and the size of its text (the
// axis and legend text; tick labels and setting labels are 1 pt smaller,
// never below 7 pt, the title 1 pt larger). Settings says whether a few
// points of each curve are labelled with their setting ("α=100ms").
type Size struct {
	Width, Height, Font vg.Length
	Settings            bool
}

// The sizes Save writes: Screen for PNG and SVG, Column for PDF, the width
// of one column of a two-column paper (3.5 in) with 7 pt text.
var (
	Screen = Size{Width: 19 * vg.Centimeter, Height: 11 * vg.Centimeter, Font: vg.Points(9), Settings: true}
	// Column has no setting labels: at this size they hide the curves, a
	// paper's caption names the settings, and its PDF text is WinAnsi,
	// which has no α, Φ or θ.
	Column = Size{Width: 3.5 * vg.Inch, Height: 2.9 * vg.Inch, Font: vg.Points(7)}
)

// FileNames returns the names of every file Save can write for
// prefix, in the order it writes them ("<prefix>mr-td.png",
// "<prefix>mr-td.svg", "<prefix>mr-td.pdf", then the same for
// "<prefix>qap-td"). With prefix "*-" they are glob patterns (path.Match)
// for the figures of any stream, which is how a command recognises its own
// earlier output.
func FileNames(prefix string) []string {
	names := make([]string, 0, len(plotKinds)*len(formats))
	for _, kind := range plotKinds {
		for _, f := range formats {
			names = append(names, FileName(prefix, kind, f.Ext))
		}
	}
	return names
}

// Save writes, for the given curves, "<prefix>mr-td" (MR against TD)
// and "<prefix>qap-td" (1 − QAP against TD) into dir, which must exist: as
// PNG and SVG at Screen size and as PDF at Column size, with gonum/plot's
// own backends. It returns the files written. A figure with nothing to
// draw (no point ever suspects, for 1 − QAP) is skipped, not an error.
// It is SaveKind for each of Kinds in turn.
func Save(curves []qos.Curve, dir, prefix, title string) ([]string, error) {
	var files []string
	for _, kind := range plotKinds {
		f, err := SaveKind(curves, kind, dir, prefix, title)
		files = append(files, f...)
		if err != nil {
			return files, err
		}
	}
	return files, nil
}

// Kinds returns the kinds of figure Save writes, in its order.
func Kinds() []Kind { return slices.Clone(plotKinds) }

// SaveKind writes the figure of one kind, "<prefix>mr-td" or
// "<prefix>qap-td", as Save does (in each format, at its size), and
// returns the files written: none, and no error, when the figure has
// nothing to draw. It shares no state with other calls, so figures can be
// drawn on several goroutines at once.
func SaveKind(curves []qos.Curve, kind Kind, dir, prefix, title string) ([]string, error) {
	if !slices.Contains(plotKinds, kind) {
		return nil, fmt.Errorf("figure: unknown kind %d", int(kind))
	}
	f, err := New(curves, kind, title)
	if err != nil {
		return nil, nil // nothing to draw
	}
	var files []string
	for _, ff := range formats {
		path := filepath.Join(dir, FileName(prefix, kind, ff.Ext))
		if err := f.Save(path, ff.Size); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}

// Save writes the figure at size s in the format of path's extension
// (.png, .svg, .pdf, .eps, .tex), turning a panic of the drawing library
// (degenerate axes) into an error.
func (f *Figure) Save(path string, s Size) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("figure: drawing %s: %v", path, r)
		}
	}()
	c, err := draw.NewFormattedCanvas(s.Width, s.Height, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return fmt.Errorf("figure: saving %s: %w", path, err)
	}
	if err := f.Draw(draw.New(c), s); err != nil {
		return fmt.Errorf("figure: drawing %s: %w", path, err)
	}
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("figure: saving %s: %w", path, err)
	}
	if _, err := c.WriteTo(out); err != nil {
		out.Close()
		return fmt.Errorf("figure: saving %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("figure: saving %s: %w", path, err)
	}
	return nil
}

// FileName returns the name Save gives the figure of kind in format ext
// (".pdf"): "<prefix>mr-td.pdf".
func FileName(prefix string, kind Kind, ext string) string {
	return prefix + kind.name() + ext
}

// Write writes the figure at size s to w in format (an extension without
// its dot: png, svg, pdf, eps, tex), as Save does to a file, turning a
// panic of the drawing library into an error. The PDF backend makes a
// temporary directory (os.TempDir) for each font it embeds the first time
// the process uses that font, and removes it when done.
func (f *Figure) Write(w io.Writer, format string, s Size) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("figure: drawing as %s: %v", format, r)
		}
	}()
	c, err := draw.NewFormattedCanvas(s.Width, s.Height, format)
	if err != nil {
		return fmt.Errorf("figure: %w", err)
	}
	if err := f.Draw(draw.New(c), s); err != nil {
		return fmt.Errorf("figure: drawing as %s: %w", format, err)
	}
	_, err = c.WriteTo(w)
	return err
}

// Draw draws the figure on c, whose size is s: a white background over the
// whole canvas, the plot, and the legend below it in as many columns as
// fit.
func (f *Figure) Draw(c draw.Canvas, s Size) error {
	p := f.plot
	small := max(s.Font-vg.Points(1), vg.Points(7))
	p.Title.TextStyle.Font.Size = s.Font + vg.Points(1)
	p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = s.Font, s.Font
	p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = small, small
	p.X.Label.Padding, p.Y.Label.Padding = s.Font/3, s.Font/3
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())

	leg := legendStyle(s)
	cols := legendColumns(f.legend, leg, s.Width-small)
	nrow := 0
	for _, col := range cols {
		nrow = max(nrow, col.n)
	}
	rowH := leg.TextStyle.FontExtents().Height + leg.Padding
	legH := vg.Length(nrow)*rowH + small/2

	// The y axis's name is drawn here, centred on the data area: gonum
	// centres it on the arithmetic mean of the axis range, near the top
	// of a log axis, and leaves a band empty above the data to fit it.
	yName, ySty := p.Y.Label.Text, p.Y.Label.TextStyle
	ySty.Rotation, ySty.XAlign, ySty.YAlign = math.Pi/2, text.XCenter, text.YCenter
	nameW := ySty.FontExtents().Height + p.Y.Label.Padding
	p.Y.Label.Text = ""
	data := draw.Crop(c, nameW, 0, legH, 0)
	p.Draw(data)
	dc := p.DataCanvas(data) // as drawn: without the y axis's name
	p.Y.Label.Text = yName
	if yName != "" {
		c.FillText(ySty, vg.Point{X: c.Min.X + nameW/2, Y: (dc.Min.Y + dc.Max.Y) / 2}, yName)
	}
	if s.Settings {
		labels, err := f.settingLabels(small, dc)
		if err != nil {
			return err
		}
		for _, l := range labels {
			l.Plot(dc, p)
		}
	}
	x0, i := small/2, 0
	for _, col := range cols {
		l := leg
		for _, e := range f.legend[i : i+col.n] {
			l.Add(e.text, e.thumbs...)
		}
		i += col.n
		l.Top, l.Left = true, true
		l.Draw(draw.Crop(c, x0, -(s.Width - x0 - col.width), 0, -(s.Height - legH)))
		x0 += col.width
	}
	return nil
}
