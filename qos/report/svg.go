package report

import (
	"fmt"
	"html"
	"image/color"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/figure"
	"gonum.org/v1/plot/vg/draw"
)

// svgPlot draws MR or 1 − QAP against the mean TD for one stream's curves
// as inline SVG, by the rules of package figure (figure.Layout): log axes
// zoomed to where the families differ, labelled in powers of ten over
// several decades; one colour and marker per family; lines through runs
// of computed points where TD is monotone in the parameter; 95 % intervals
// as error bars; points without mistakes as markers pointing down at their
// 3/T bound; points off the scale as open triangles on the border; the
// legend below the data; and every point's setting and values in a
// tooltip (an SVG <title>). ok is false when nothing can be drawn.
func svgPlot(curves []qos.Curve, kind figure.Kind, id string) (svg string, ok bool) {
	ax, series, ok := figure.Layout(curves, kind)
	if !ok {
		return "", false
	}
	c := &svgCanvas{ax: ax, id: html.EscapeString(id), pw: svgWidth - svgLeft - svgRight}
	b := &c.body
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" class="area"/>`, num(svgLeft), num(svgTop), num(c.pw), num(svgPlotH))
	fmt.Fprintf(b, `<clipPath id="%s-clip"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath>`, c.id, num(svgLeft), num(svgTop), num(c.pw), num(svgPlotH))
	c.grid()
	ylabel := c.axisLabels(curves, kind)
	for _, s := range series {
		c.series(s)
	}
	if c.anyBound {
		c.legend = append(c.legend, legendEntry{text: "no mistake: MR ≤ 3/T (95 %)", col: "#555555", shape: "bound"})
	}
	if c.anyOff {
		c.legend = append(c.legend, legendEntry{text: "off the scale, that way", col: "#555555", shape: "edge"})
	}
	h := c.drawLegend()
	return fmt.Sprintf(`<svg id="%s" class="plot" viewBox="0 0 %g %s" role="img" aria-label="%s against mean TD" xmlns="http://www.w3.org/2000/svg">`, id, svgWidth, num(h), html.EscapeString(ylabel)) +
		c.body.String() + `</svg>`, true
}

// The geometry of a plot, in SVG user units: its width, the margins around
// the data area, the data area's height, and the legend's columns and row
// height.
const (
	svgWidth                     = 760.0
	svgLeft, svgRight, svgTop    = 64.0, 16.0, 12.0
	svgPlotH                     = 330.0
	svgLegendCols, svgLegendRowH = 4, 16.0
)

// legendEntry is one entry of a plot's legend: a family's marker and
// colour, or a shape explaining a kind of point ("bound" or "edge").
type legendEntry struct {
	text  string
	mark  draw.GlyphDrawer
	col   string
	shape string
}

// svgCanvas is one plot being drawn: its axes, the SVG body written so
// far, the legend collected and whether any point was drawn as a bound or
// off the scale.
type svgCanvas struct {
	ax               figure.Axes
	id               string // escaped for attributes
	pw               float64
	body             strings.Builder
	legend           []legendEntry
	anyBound, anyOff bool
}

// x and y map data values to SVG coordinates on the log axes.
func (c *svgCanvas) x(v float64) float64 {
	return svgLeft + c.pw*math.Log(v/c.ax.XMin)/math.Log(c.ax.XMax/c.ax.XMin)
}

func (c *svgCanvas) y(v float64) float64 {
	return svgTop + svgPlotH*(1-math.Log(v/c.ax.YMin)/math.Log(c.ax.YMax/c.ax.YMin))
}

// grid draws the grid lines and tick labels of both axes.
func (c *svgCanvas) grid() {
	b := &c.body
	for _, t := range (figure.LogTicks{}).Ticks(c.ax.XMin, c.ax.XMax) {
		x := c.x(t.Value)
		cls := "grid minor"
		if t.Label != "" {
			cls = "grid"
			fmt.Fprintf(b, `<text x="%s" y="%s" class="tick" text-anchor="middle">%s</text>`, num(x), num(svgTop+svgPlotH+14), tickText(t.Label))
		}
		fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="%s"/>`, num(x), num(x), num(svgTop), num(svgTop+svgPlotH), cls)
	}
	for _, t := range (figure.LogTicks{}).Ticks(c.ax.YMin, c.ax.YMax) {
		y := c.y(t.Value)
		cls := "grid minor"
		if t.Label != "" {
			cls = "grid"
			fmt.Fprintf(b, `<text x="%s" y="%s" class="tick" text-anchor="end">%s</text>`, num(svgLeft-4), num(y+3.5), tickText(t.Label))
		}
		fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="%s"/>`, num(svgLeft), num(svgLeft+c.pw), num(y), num(y), cls)
	}
}

// axisLabels draws the two axis titles and returns the y axis's.
func (c *svgCanvas) axisLabels(curves []qos.Curve, kind figure.Kind) string {
	ylabel := "mistake rate MR (1/s, log scale)"
	if kind == figure.QAP {
		ylabel = "unavailability 1 − QAP (log scale)"
	}
	xl := "mean detection time TD (ms, log scale)"
	if n := figure.TDBasisNote(curves); n != "" {
		xl = "mean detection time TD (ms, " + n + ", log scale)"
	}
	fmt.Fprintf(&c.body, `<text x="%s" y="%s" class="axis" text-anchor="middle">%s</text>`, num(svgLeft+c.pw/2), num(svgTop+svgPlotH+34), html.EscapeString(xl))
	fmt.Fprintf(&c.body, `<text transform="translate(14 %s) rotate(-90)" class="axis" text-anchor="middle">%s</text>`, num(svgTop+svgPlotH/2), html.EscapeString(ylabel))
	return ylabel
}

// series draws one family: its legend entry, the lines through its runs
// of joined points, and each point.
func (c *svgCanvas) series(s figure.Series) {
	hc := hexColour(s.Colour)
	name := s.Curve.Family
	if len(s.Points) == 0 {
		if len(s.Curve.Points) > 0 {
			c.legend = append(c.legend, legendEntry{text: name + " (never suspects)", col: hc})
		}
		return
	}
	if !s.Joined && len(s.Points) > 1 {
		name += " (points)"
	}
	c.legend = append(c.legend, legendEntry{text: name, mark: s.Glyph, col: hc})
	b := &c.body
	fmt.Fprintf(b, `<g class="fam" data-family="%s">`, html.EscapeString(s.Curve.Family))
	if s.Joined {
		for _, run := range figure.Runs(s.Points) {
			var pl []string
			for _, p := range run {
				pl = append(pl, num(c.x(p.X))+","+num(c.y(p.Y)))
			}
			// Clipped to the data area: a line to a point off the
			// scale ends at the border, where its marker is.
			fmt.Fprintf(b, `<polyline points="%s" stroke="%s" class="curve" clip-path="url(#%s-clip)"/>`, strings.Join(pl, " "), hc, c.id)
		}
	}
	barred := map[float64]bool{}
	for _, p := range figure.Barred(s.Points) {
		barred[p.Of.Value] = true
	}
	for _, p := range s.Points {
		c.point(s, p, hc, barred[p.Of.Value])
	}
	b.WriteString(`</g>`)
}

// point draws one point of s in colour hc: an open triangle on the border
// when it is off the scale, else its error bars (when barred) and its
// marker, with its tooltip.
func (c *svgCanvas) point(s figure.Series, p figure.Point, hc string, barred bool) {
	b := &c.body
	tip := html.EscapeString(pointTooltip(s.Curve, p.Of))
	if dx, dy := c.ax.Off(p.X, p.Y); dx != 0 || dy != 0 {
		c.anyOff = true
		x, y := c.ax.Clamp(p.X, p.Y)
		fmt.Fprintf(b, `<g class="pt">`)
		svgEdge(b, c.x(x), c.y(y), dx, dy, hc)
		fmt.Fprintf(b, `<title>off the scale: %s</title></g>`, tip)
		return
	}
	if barred {
		c.errorBars(p, hc)
	}
	fmt.Fprintf(b, `<g class="pt">`)
	switch {
	case p.Bound:
		c.anyBound = true
		svgBound(b, c.x(p.X), c.y(p.Y), hc)
	case len(s.Points) == 1:
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="9" class="ring"/>`, num(c.x(p.X)), num(c.y(p.Y)))
		svgMarker(b, s.Glyph, c.x(p.X), c.y(p.Y), hc, 6)
	default:
		svgMarker(b, s.Glyph, c.x(p.X), c.y(p.Y), hc, 3.2)
	}
	fmt.Fprintf(b, `<title>%s</title></g>`, tip)
}

// errorBars draws p's 95 % intervals, clamped to the axes: the vertical
// one unless p is a bound, and the horizontal one.
func (c *svgCanvas) errorBars(p figure.Point, hc string) {
	b := &c.body
	if !p.Bound && (p.YLo < p.Y || p.YHi > p.Y) {
		lo, hi := max(p.YLo, c.ax.YMin), min(p.YHi, c.ax.YMax)
		fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" class="bar"/>`, num(c.x(p.X)), num(c.x(p.X)), num(c.y(lo)), num(c.y(hi)), hc)
	}
	if p.XLo < p.X || p.XHi > p.X {
		lo, hi := max(p.XLo, c.ax.XMin), min(p.XHi, c.ax.XMax)
		fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" class="bar"/>`, num(c.x(lo)), num(c.x(hi)), num(c.y(p.Y)), num(c.y(p.Y)), hc)
	}
}

// drawLegend draws the legend below the data in columns and returns the
// plot's total height.
func (c *svgCanvas) drawLegend() float64 {
	b := &c.body
	ly := svgTop + svgPlotH + 52
	colW := c.pw / svgLegendCols
	for i, e := range c.legend {
		x, y := svgLeft+float64(i%svgLegendCols)*colW, ly+float64(i/svgLegendCols)*svgLegendRowH
		switch {
		case e.shape == "bound":
			svgBound(b, x+6, y-3, e.col)
		case e.shape == "edge":
			svgEdge(b, x+6, y, 1, 0, e.col)
		case e.mark != nil:
			svgMarker(b, e.mark, x+6, y, e.col, 4)
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" class="legend">%s</text>`, num(x+16), num(y+4), html.EscapeString(e.text))
	}
	return ly + float64((len(c.legend)+svgLegendCols-1)/svgLegendCols)*svgLegendRowH
}

// num writes an SVG coordinate with one decimal.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// tickText writes a tick label of figure.LogTicks as SVG text: "10^-3" as
// 10 with a raised exponent.
func tickText(label string) string {
	base, exp, ok := strings.Cut(label, "^")
	if !ok {
		return html.EscapeString(label)
	}
	return html.EscapeString(base) + `<tspan dy="-5" font-size="8">` + html.EscapeString(strings.Replace(exp, "-", "−", 1)) + `</tspan>`
}

// svgBound draws the marker of an upper bound at (x, y): a bar with an
// arrow below it pointing down.
func svgBound(b *strings.Builder, x, y float64, col string) {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	fmt.Fprintf(b, `<path d="M%s %sH%sM%s %sV%s" stroke="%s" stroke-width="1.3"/>`, f(x-4), f(y), f(x+4), f(x), f(y), f(y+7), col)
	fmt.Fprintf(b, `<polygon points="%s,%s %s,%s %s,%s" fill="%s"/>`, f(x), f(y+10), f(x-3), f(y+6), f(x+3), f(y+6), col)
	fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="6" fill="transparent"/>`, f(x), f(y+4))
}

// svgEdge draws an open triangle at (x, y) pointing towards (dx, dy)
// (SVG's y grows downwards: dy +1 is up).
func svgEdge(b *strings.Builder, x, y float64, dx, dy int, col string) {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	ux, uy := float64(dx), -float64(dy)
	if dx != 0 && dy != 0 {
		ux, uy = ux*0.7071, uy*0.7071
	}
	const r = 5.0
	px, py := -uy, ux
	fmt.Fprintf(b, `<polygon points="%s,%s %s,%s %s,%s" fill="white" stroke="%s" stroke-width="1.3"/>`,
		f(x+r*ux), f(y+r*uy), f(x-r*ux+r*px), f(y-r*uy+r*py), f(x-r*ux-r*px), f(y-r*uy-r*py), col)
	fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="6" fill="transparent"/>`, f(x), f(y))
}

// pointTooltip describes one point: family, setting, TD, MR and QAP with
// their intervals.
func pointTooltip(c qos.Curve, p qos.Point) string {
	s := c.Family
	if l := figure.SettingLabel(c, p.Value); l != "" {
		s += " " + l
	}
	s += "\nTD " + msString(p.TD.Mean) + " ms"
	if p.CI != nil {
		s += " [" + msString(p.CI.TDMean[0]) + ", " + msString(p.CI.TDMean[1]) + "]"
	}
	s += "\nMR " + strconv.FormatFloat(p.MRPerSecond, 'g', 3, 64) + "/s"
	if p.CI != nil {
		s += " [" + strconv.FormatFloat(p.CI.MRPerSecond[0], 'g', 3, 64) + ", " + strconv.FormatFloat(p.CI.MRPerSecond[1], 'g', 3, 64) + "]"
	}
	s += "\nQAP " + strconv.FormatFloat(p.QAP, 'f', 6, 64)
	if p.CI != nil {
		s += " [" + strconv.FormatFloat(p.CI.QAP[0], 'f', 6, 64) + ", " + strconv.FormatFloat(p.CI.QAP[1], 'f', 6, 64) + "]"
	}
	s += "\n" + strconv.Itoa(p.Mistakes) + " mistakes in " + p.Span.Round(time.Second).String()
	return s
}

// hexColour writes c as #rrggbb.
func hexColour(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// msString writes d in milliseconds with one decimal.
func msString(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

// svgMarker draws the marker of style slot at (x, y) with radius r: the
// shape of gonum's glyph mark in SVG.
func svgMarker(b *strings.Builder, mark draw.GlyphDrawer, x, y float64, col string, r float64) {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	switch mark.(type) {
	case draw.CircleGlyph:
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s" fill="%s"/>`, f(x), f(y), f(r), col)
	case draw.BoxGlyph:
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, f(x-r), f(y-r), f(2*r), f(2*r), col)
	case draw.PyramidGlyph:
		fmt.Fprintf(b, `<polygon points="%s,%s %s,%s %s,%s" fill="%s"/>`, f(x), f(y-r*1.2), f(x-r*1.1), f(y+r*0.8), f(x+r*1.1), f(y+r*0.8), col)
	case draw.RingGlyph:
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s" fill="white" stroke="%s" stroke-width="1.5"/>`, f(x), f(y), f(r), col)
	case draw.SquareGlyph:
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="white" stroke="%s" stroke-width="1.5"/>`, f(x-r), f(y-r), f(2*r), f(2*r), col)
	case draw.TriangleGlyph:
		fmt.Fprintf(b, `<polygon points="%s,%s %s,%s %s,%s" fill="white" stroke="%s" stroke-width="1.5"/>`, f(x), f(y-r*1.2), f(x-r*1.1), f(y+r*0.8), f(x+r*1.1), f(y+r*0.8), col)
	case draw.CrossGlyph:
		fmt.Fprintf(b, `<path d="M%s %sL%s %sM%s %sL%s %s" stroke="%s" stroke-width="2"/>`, f(x-r), f(y-r), f(x+r), f(y+r), f(x-r), f(y+r), f(x+r), f(y-r), col)
	default: // draw.PlusGlyph
		fmt.Fprintf(b, `<path d="M%s %sL%s %sM%s %sL%s %s" stroke="%s" stroke-width="2"/>`, f(x-r), f(y), f(x+r), f(y), f(x), f(y-r), f(x), f(y+r), col)
	}
	// A transparent disc makes small or hollow markers easy to hover.
	fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s" fill="transparent"/>`, f(x), f(y), f(max(r, 6)))
}

// svgHistogram draws counts over log-spaced bins [edges[i], edges[i+1])
// (ms) as inline SVG bars with a tooltip per bar, heights on a
// square-root scale (a few long gaps stay visible next to thousands of
// regular intervals) with the counts written on the y axis, and the x
// axis labelled at 1, 2 and 5 of each decade and figure.LogTicks's labels
// as space allows.
func svgHistogram(edges []float64, counts []int, xlabel string) string {
	const w, h, left, right, top, bt = 760.0, 210.0, 64.0, 16.0, 10.0, 40.0
	if len(counts) == 0 {
		return ""
	}
	mx := 0
	for _, c := range counts {
		mx = max(mx, c)
	}
	pw, ph := w-left-right, h-top-bt
	lo, hi := edges[0], edges[len(edges)-1]
	X := func(v float64) float64 { return left + pw*math.Log(v/lo)/math.Log(hi/lo) }
	Y := func(c int) float64 { return top + ph - ph*math.Sqrt(float64(c)/float64(max(mx, 1))) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="hist" viewBox="0 0 %g %g" role="img" aria-label="histogram" xmlns="http://www.w3.org/2000/svg">`, w, h)
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="area"/>`, f(left), f(top), f(pw), f(ph))
	for _, c := range histCountTicks(mx, ph) {
		y := Y(c)
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="grid"/>`, f(left), f(left+pw), f(y), f(y))
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end">%d</text>`, f(left-4), f(y+3.5), c)
	}
	for i, c := range counts {
		if c == 0 {
			continue
		}
		x0, x1 := X(edges[i]), X(edges[i+1])
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="bin"><title>%s–%s ms: %d</title></rect>`,
			f(x0), f(Y(c)), f(max(x1-x0-0.5, 0.5)), f(top+ph-Y(c)), strconv.FormatFloat(edges[i], 'g', 3, 64), strconv.FormatFloat(edges[i+1], 'g', 3, 64), c)
	}
	last := math.Inf(-1)
	for _, t := range (figure.LogTicks{}).Ticks(lo, hi) {
		x := X(t.Value)
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="axisTick"/>`, f(x), f(x), f(top+ph), f(top+ph+3))
		m := t.Value / math.Pow(10, math.Floor(math.Log10(t.Value)+1e-9))
		one25 := math.Abs(m-1) < 1e-6 || math.Abs(m-2) < 1e-6 || math.Abs(m-5) < 1e-6
		if x-last >= 34 && (t.Label != "" || one25) {
			fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="middle">%s</text>`, f(x), f(top+ph+14), strconv.FormatFloat(t.Value, 'g', 4, 64))
			last = x
		}
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="axis" text-anchor="middle">%s</text>`, f(left+pw/2), f(h-6), html.EscapeString(xlabel))
	fmt.Fprintf(&b, `<text transform="translate(14 %s) rotate(-90)" class="axis" text-anchor="middle">count (√ scale)</text>`, f(top+ph/2))
	b.WriteString(`</svg>`)
	return b.String()
}

// histCountTicks returns the counts to write on a square-root axis of
// height ph (px) up to mx: 0, the 1-2-5 values below mx at least 14 px
// apart, and mx itself.
func histCountTicks(mx int, ph float64) []int {
	pos := func(c int) float64 { return ph * math.Sqrt(float64(c)/float64(max(mx, 1))) }
	ticks := []int{0}
	for dec := 1; dec <= mx; dec *= 10 {
		for _, m := range []int{1, 2, 5} {
			c := m * dec
			if c < mx && pos(c)-pos(ticks[len(ticks)-1]) >= 14 && pos(mx)-pos(c) >= 14 {
				ticks = append(ticks, c)
			}
		}
	}
	if mx > 0 {
		ticks = append(ticks, mx)
	}
	return ticks
}
