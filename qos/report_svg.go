package qos

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"
)

// svgPlot draws MR or 1 − QAP against the mean TD for one stream's curves
// as inline SVG: log axes with 1-2-5 ticks, one colour and marker per
// family (as the PNG plots), curves joined where TD is monotone in the
// parameter, 95 % intervals as error bars, and every point's setting and
// values in a tooltip (an SVG <title>). ok is false when nothing can be
// drawn on the log axes.
func svgPlot(curves []Curve, kind PlotKind, id string) (svg string, ok bool) {
	const (
		w, h                 = 760.0, 400.0
		left, right, top, bt = 64.0, 210.0, 14.0, 44.0
	)
	names := make([]string, len(curves))
	for i, c := range curves {
		names[i] = c.Family
	}
	type drawn struct {
		c    Curve
		pts  plotPoints
		vals []Point
		slot int
	}
	var ds []drawn
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, c := range curves {
		pts := curvePoints(c, kind)
		var vals []Point
		for _, pt := range c.Points {
			y := pt.MRPerSecond
			if kind == PlotQAP {
				y = 1 - pt.QAP
			}
			if y > 0 && pt.Span > 0 {
				vals = append(vals, pt)
			}
		}
		ds = append(ds, drawn{c: c, pts: pts, vals: vals, slot: familyIndex(c.Family, names)})
		for _, p := range pts {
			xmin, xmax = min(xmin, p.xLo, p.x), max(xmax, p.xHi, p.x)
			ymin, ymax = min(ymin, p.yLo, p.y), max(ymax, p.yHi, p.y)
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
	if kind == PlotQAP {
		ylabel = "unavailability 1 − QAP (log scale)"
	}
	fmt.Fprintf(&b, `<svg id="%s" class="plot" viewBox="0 0 %g %g" role="img" aria-label="%s against mean TD" xmlns="http://www.w3.org/2000/svg">`, id, w, h, html.EscapeString(ylabel))
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="area"/>`, f(left), f(top), f(pw), f(ph))
	for _, t := range (logTicks{}).Ticks(xmin, xmax) {
		x := X(t.Value)
		cls := "grid minor"
		if t.Label != "" {
			cls = "grid"
			fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="middle">%s</text>`, f(x), f(top+ph+14), t.Label)
		}
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="%s"/>`, f(x), f(x), f(top), f(top+ph), cls)
	}
	for _, t := range (logTicks{}).Ticks(ymin, ymax) {
		y := Y(t.Value)
		cls := "grid minor"
		if t.Label != "" {
			cls = "grid"
			fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end">%s</text>`, f(left-4), f(y+3.5), t.Label)
		}
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="%s"/>`, f(left), f(left+pw), f(y), f(y), cls)
	}
	xl := "mean detection time TD (ms, log scale)"
	if n := tdBasisNote(curves); n != "" {
		xl = "mean detection time TD (ms, " + n + ", log scale)"
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="axis" text-anchor="middle">%s</text>`, f(left+pw/2), f(h-8), html.EscapeString(xl))
	fmt.Fprintf(&b, `<text transform="translate(14 %s) rotate(-90)" class="axis" text-anchor="middle">%s</text>`, f(top+ph/2), html.EscapeString(ylabel))

	ly := top + 6
	for _, d := range ds {
		col, _ := familyStyle(d.slot)
		hc := hexColour(col)
		legend := d.c.Family
		if len(d.pts) == 0 {
			if len(d.c.Points) == 0 {
				continue
			}
			legend += " (none > 0)"
		}
		mono := monotoneTD(d.pts)
		if !mono && len(d.pts) > 1 {
			legend += " (points)"
		}
		fmt.Fprintf(&b, `<g class="fam" data-family="%s">`, html.EscapeString(d.c.Family))
		// Legend entry, outside the plotting area.
		svgMarker(&b, d.slot, left+pw+16, ly, hc, 4)
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="legend">%s</text>`, f(left+pw+26), f(ly+4), html.EscapeString(legend))
		ly += 16
		if len(d.pts) > 1 && mono {
			var pl []string
			for _, p := range d.pts {
				pl = append(pl, f(X(p.x))+","+f(Y(p.y)))
			}
			fmt.Fprintf(&b, `<polyline points="%s" stroke="%s" class="curve"/>`, strings.Join(pl, " "), hc)
		}
		for i, p := range d.pts {
			if p.yLo < p.y || p.yHi > p.y {
				fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" class="bar"/>`, f(X(p.x)), f(X(p.x)), f(Y(p.yLo)), f(Y(p.yHi)), hc)
			}
			if p.xLo < p.x || p.xHi > p.x {
				fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" class="bar"/>`, f(X(p.xLo)), f(X(p.xHi)), f(Y(p.y)), f(Y(p.y)), hc)
			}
			r := 3.2
			if len(d.pts) == 1 {
				r = 6
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="9" class="ring"/>`, f(X(p.x)), f(Y(p.y)))
			}
			fmt.Fprintf(&b, `<g class="pt">`)
			svgMarker(&b, d.slot, X(p.x), Y(p.y), hc, r)
			fmt.Fprintf(&b, `<title>%s</title></g>`, html.EscapeString(pointTooltip(d.c, d.vals[i])))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String(), true
}

// pointTooltip describes one point: family, setting, TD, MR and QAP with
// their intervals.
func pointTooltip(c Curve, p Point) string {
	s := c.Family
	if l := settingLabel(c, p.Value); l != "" {
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

// msString writes d in milliseconds with one decimal.
func msString(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

// svgMarker draws the marker of style slot at (x, y) with radius r: the
// shapes of familyGlyphs in SVG.
func svgMarker(b *strings.Builder, slot int, x, y float64, col string, r float64) {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	switch slot % len(familyGlyphs) {
	case 0: // circle
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s" fill="%s"/>`, f(x), f(y), f(r), col)
	case 1: // box
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, f(x-r), f(y-r), f(2*r), f(2*r), col)
	case 2: // pyramid
		fmt.Fprintf(b, `<polygon points="%s,%s %s,%s %s,%s" fill="%s"/>`, f(x), f(y-r*1.2), f(x-r*1.1), f(y+r*0.8), f(x+r*1.1), f(y+r*0.8), col)
	case 3: // ring
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s" fill="white" stroke="%s" stroke-width="1.5"/>`, f(x), f(y), f(r), col)
	case 4: // square
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="white" stroke="%s" stroke-width="1.5"/>`, f(x-r), f(y-r), f(2*r), f(2*r), col)
	case 5: // triangle
		fmt.Fprintf(b, `<polygon points="%s,%s %s,%s %s,%s" fill="white" stroke="%s" stroke-width="1.5"/>`, f(x), f(y-r*1.2), f(x-r*1.1), f(y+r*0.8), f(x+r*1.1), f(y+r*0.8), col)
	case 6: // cross
		fmt.Fprintf(b, `<path d="M%s %sL%s %sM%s %sL%s %s" stroke="%s" stroke-width="2"/>`, f(x-r), f(y-r), f(x+r), f(y+r), f(x-r), f(y+r), f(x+r), f(y-r), col)
	default: // plus
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
	for _, t := range (logTicks{}).Ticks(lo, hi) {
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
