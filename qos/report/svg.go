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
// as inline SVG: log axes with 1-2-5 ticks, one colour and marker per
// family (as the PNG plots), curves joined where TD is monotone in the
// parameter, 95 % intervals as error bars, and every point's setting and
// values in a tooltip (an SVG <title>). ok is false when nothing can be
// drawn on the log axes.
func svgPlot(curves []qos.Curve, kind figure.Kind, id string) (svg string, ok bool) {
	const (
		w, h                 = 760.0, 400.0
		left, right, top, bt = 64.0, 210.0, 14.0, 44.0
	)
	names := make([]string, len(curves))
	for i, c := range curves {
		names[i] = c.Family
	}
	type drawn struct {
		c    qos.Curve
		pts  figure.Points
		col  color.RGBA
		mark draw.GlyphDrawer
	}
	var ds []drawn
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, c := range curves {
		pts := figure.CurvePoints(c, kind)
		col, mark := figure.Style(c.Family, names)
		ds = append(ds, drawn{c: c, pts: pts, col: col, mark: mark})
		for _, p := range pts {
			xmin, xmax = min(xmin, p.XLo, p.X), max(xmax, p.XHi, p.X)
			ymin, ymax = min(ymin, p.YLo, p.Y), max(ymax, p.YHi, p.Y)
		}
	}
	if math.IsInf(xmin, 1) {
		return "", false
	}
	ymin = math.Pow(10, math.Floor(math.Log10(ymin)))
	ymax = math.Pow(10, math.Ceil(math.Log10(ymax)))
	if ymin == ymax {
		ymin, ymax = ymin/10, ymax*10
	}
	xmin, xmax = xmin/1.08, xmax*1.08
	if xmin == xmax {
		xmin, xmax = xmin/2, xmax*2
	}
	pw, ph := w-left-right, h-top-bt
	X := func(v float64) float64 { return left + pw*math.Log(v/xmin)/math.Log(xmax/xmin) }
	Y := func(v float64) float64 { return top + ph*(1-math.Log(v/ymin)/math.Log(ymax/ymin)) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

	var b strings.Builder
	ylabel := "mistake rate MR (1/s, log scale)"
	if kind == figure.QAP {
		ylabel = "unavailability 1 − QAP (log scale)"
	}
	fmt.Fprintf(&b, `<svg id="%s" class="plot" viewBox="0 0 %g %g" role="img" aria-label="%s against mean TD" xmlns="http://www.w3.org/2000/svg">`, id, w, h, html.EscapeString(ylabel))
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="area"/>`, f(left), f(top), f(pw), f(ph))
	for _, t := range (figure.LogTicks{}).Ticks(xmin, xmax) {
		x := X(t.Value)
		cls := "grid minor"
		if t.Label != "" {
			cls = "grid"
			fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="middle">%s</text>`, f(x), f(top+ph+14), t.Label)
		}
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="%s"/>`, f(x), f(x), f(top), f(top+ph), cls)
	}
	for _, t := range (figure.LogTicks{}).Ticks(ymin, ymax) {
		y := Y(t.Value)
		cls := "grid minor"
		if t.Label != "" {
			cls = "grid"
			fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end">%s</text>`, f(left-4), f(y+3.5), t.Label)
		}
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="%s"/>`, f(left), f(left+pw), f(y), f(y), cls)
	}
	xl := "mean detection time TD (ms, log scale)"
	if n := figure.TDBasisNote(curves); n != "" {
		xl = "mean detection time TD (ms, " + n + ", log scale)"
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="axis" text-anchor="middle">%s</text>`, f(left+pw/2), f(h-8), html.EscapeString(xl))
	fmt.Fprintf(&b, `<text transform="translate(14 %s) rotate(-90)" class="axis" text-anchor="middle">%s</text>`, f(top+ph/2), html.EscapeString(ylabel))

	ly := top + 6
	for _, d := range ds {
		hc := hexColour(d.col)
		legend := d.c.Family
		if len(d.pts) == 0 {
			if len(d.c.Points) == 0 {
				continue
			}
			legend += " (none > 0)"
		}
		mono := figure.Monotone(d.pts)
		if !mono && len(d.pts) > 1 {
			legend += " (points)"
		}
		fmt.Fprintf(&b, `<g class="fam" data-family="%s">`, html.EscapeString(d.c.Family))
		// Legend entry, outside the plotting area.
		svgMarker(&b, d.mark, left+pw+16, ly, hc, 4)
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="legend">%s</text>`, f(left+pw+26), f(ly+4), html.EscapeString(legend))
		ly += 16
		if len(d.pts) > 1 && mono {
			var pl []string
			for _, p := range d.pts {
				pl = append(pl, f(X(p.X))+","+f(Y(p.Y)))
			}
			fmt.Fprintf(&b, `<polyline points="%s" stroke="%s" class="curve"/>`, strings.Join(pl, " "), hc)
		}
		for _, p := range d.pts {
			if p.YLo < p.Y || p.YHi > p.Y {
				fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" class="bar"/>`, f(X(p.X)), f(X(p.X)), f(Y(p.YLo)), f(Y(p.YHi)), hc)
			}
			if p.XLo < p.X || p.XHi > p.X {
				fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" class="bar"/>`, f(X(p.XLo)), f(X(p.XHi)), f(Y(p.Y)), f(Y(p.Y)), hc)
			}
			r := 3.2
			if len(d.pts) == 1 {
				r = 6
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="9" class="ring"/>`, f(X(p.X)), f(Y(p.Y)))
			}
			fmt.Fprintf(&b, `<g class="pt">`)
			svgMarker(&b, d.mark, X(p.X), Y(p.Y), hc, r)
			fmt.Fprintf(&b, `<title>%s</title></g>`, html.EscapeString(pointTooltip(d.c, p.Of)))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String(), true
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
// (ms) as inline SVG bars with a tooltip per bar.
func svgHistogram(edges []float64, counts []int, xlabel string) string {
	const w, h, left, right, top, bt = 760.0, 200.0, 64.0, 210.0, 10.0, 40.0
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
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="hist" viewBox="0 0 %g %g" role="img" aria-label="histogram" xmlns="http://www.w3.org/2000/svg">`, w, h)
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="area"/>`, f(left), f(top), f(pw), f(ph))
	for i, c := range counts {
		if c == 0 {
			continue
		}
		// Square-root height: a few long gaps stay visible next to
		// thousands of regular intervals.
		bh := ph * math.Sqrt(float64(c)/float64(mx))
		x0, x1 := X(edges[i]), X(edges[i+1])
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="bin"><title>%s–%s ms: %d</title></rect>`,
			f(x0), f(top+ph-bh), f(max(x1-x0-0.5, 0.5)), f(bh), strconv.FormatFloat(edges[i], 'g', 3, 64), strconv.FormatFloat(edges[i+1], 'g', 3, 64), c)
	}
	for _, t := range (figure.LogTicks{}).Ticks(lo, hi) {
		if t.Label == "" {
			continue
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="middle">%s</text>`, f(X(t.Value)), f(top+ph+14), t.Label)
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="axis" text-anchor="middle">%s</text>`, f(left+pw/2), f(h-6), html.EscapeString(xlabel))
	fmt.Fprintf(&b, `<text transform="translate(14 %s) rotate(-90)" class="axis" text-anchor="middle">count (√ scale)</text>`, f(top+ph/2))
	b.WriteString(`</svg>`)
	return b.String()
}
