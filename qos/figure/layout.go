package figure

import (
	"image/color"
	"math"
	"slices"
	"time"

	"github.com/fdkit/fdkit/qos"
	"gonum.org/v1/plot/vg/draw"
)

// Point is one drawn point: X the mean TD in milliseconds, Y the MR or
// 1 − QAP, their 95 % intervals [XLo, XHi] and [YLo, YHi] (the point itself
// when the replay had no intervals), Label the setting ("α=100ms") and Of
// the replayed point it draws.
//
// Bound marks a point of an MR figure without mistakes: Y is then not a
// measurement but the one-sided 95 % upper bound 3/T on the mistake rate
// over the observed time T (the "rule of three": a Poisson count of 0 has
// probability 5 % when its mean is −ln 0.05 ≈ 3), drawn as a marker that
// points down. AfterGap marks a point whose predecessor in parameter order
// is not drawn (no observed time, or no suspicion on a 1 − QAP figure):
// no line joins across that gap.
type Point struct {
	X, Y     float64
	XLo, XHi float64
	YLo, YHi float64
	Label    string
	Of       qos.Point
	Bound    bool
	AfterGap bool
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

// Runs returns the maximal runs of measured points (not bounds) that a
// line may join: consecutive in parameter order, with no point left out
// between them and no jump in TD that the sweep did not sample. A line
// never crosses a range where no point was computed: κ's TD, for one, steps
// by a whole Δ where its threshold passes an integer, and a line across
// the step would show settings that do not exist.
func Runs(pts Points) []Points {
	jump := tdJump(pts)
	var runs []Points
	var cur Points
	for _, p := range pts {
		broken := p.Bound || p.AfterGap
		if len(cur) > 0 && !p.Bound && math.Abs(math.Log10(p.X/cur[len(cur)-1].X)) > jump {
			broken = true
		}
		if broken {
			if len(cur) > 1 {
				runs = append(runs, cur)
			}
			cur = nil
		}
		if !p.Bound {
			cur = append(cur, p)
		}
	}
	if len(cur) > 1 {
		runs = append(runs, cur)
	}
	return runs
}

// tdJump is the step in log10 TD between consecutive points beyond which
// Runs breaks a line: five times the curve's median step, and at least
// 0.05 decade (12 %), so that an evenly swept curve is never broken.
func tdJump(pts Points) float64 {
	var steps []float64
	for i := 1; i < len(pts); i++ {
		if !pts[i].Bound && !pts[i-1].Bound {
			steps = append(steps, math.Abs(math.Log10(pts[i].X/pts[i-1].X)))
		}
	}
	if len(steps) == 0 {
		return math.Inf(1)
	}
	slices.Sort(steps)
	return max(5*steps[len(steps)/2], 0.05)
}

// maxBars is how many points of a curve carry error bars at most.
const maxBars = 8

// Barred returns the points of a curve that carry error bars: all of
// them up to eight, else every k-th from the first, so that about eight
// do (error bars on forty close points hid the curves behind a wall).
func Barred(pts Points) Points {
	k := max(1, (len(pts)+maxBars-1)/maxBars)
	var out Points
	for i := 0; i < len(pts); i += k {
		out = append(out, pts[i])
	}
	return out
}

// CurvePoints returns the drawable points of c for kind, in parameter
// order, with their intervals (clamped into the positive range of a log
// axis) and setting labels. On an MR figure a point without mistakes is a
// Bound at 3/T; on a 1 − QAP figure a point that never suspects is left
// out (the next drawn point is AfterGap).
func CurvePoints(c qos.Curve, kind Kind) Points {
	var pts Points
	gap := false
	for _, pt := range c.Points {
		p := Point{X: float64(pt.TD.Mean) / float64(time.Millisecond), Label: SettingLabel(c, pt.Value), Of: pt, AfterGap: gap}
		p.XLo, p.XHi = p.X, p.X
		switch kind {
		case MR:
			p.Y = pt.MRPerSecond
		default:
			p.Y = 1 - pt.QAP
		}
		if pt.Span <= 0 || !(p.X > 0) || (!(p.Y > 0) && kind != MR) {
			gap = len(pts) > 0
			continue
		}
		gap = false
		if !(p.Y > 0) {
			p.Y, p.Bound = 3/pt.Span.Seconds(), true
		}
		p.YLo, p.YHi = p.Y, p.Y
		if ci := pt.CI; ci != nil {
			p.XLo = float64(ci.TDMean[0]) / float64(time.Millisecond)
			p.XHi = float64(ci.TDMean[1]) / float64(time.Millisecond)
			if !p.Bound {
				if kind == MR {
					p.YLo, p.YHi = ci.MRPerSecond[0], ci.MRPerSecond[1]
				} else {
					p.YLo, p.YHi = 1-ci.QAP[1], 1-ci.QAP[0]
				}
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

// Series is one curve as a figure draws it.
type Series struct {
	Curve  qos.Curve
	Colour color.RGBA
	Glyph  draw.GlyphDrawer
	// Points are the drawable points in parameter order; Joined says
	// whether lines join them (TD monotone in the parameter, Runs).
	Points Points
	Joined bool
}

// Axes are the ranges of a figure's log axes: TD in milliseconds on X, MR
// or 1 − QAP on Y.
type Axes struct {
	XMin, XMax, YMin, YMax float64
}

// Off reports on which sides of the axes (x, y) lies: −1 below the range,
// +1 above it, 0 inside.
func (a Axes) Off(x, y float64) (dx, dy int) {
	side := func(v, lo, hi float64) int {
		switch {
		case v < lo*(1-1e-9):
			return -1
		case v > hi*(1+1e-9):
			return 1
		}
		return 0
	}
	return side(x, a.XMin, a.XMax), side(y, a.YMin, a.YMax)
}

// Clamp returns (x, y) moved onto the nearest border of the axes.
func (a Axes) Clamp(x, y float64) (float64, float64) {
	return min(max(x, a.XMin), a.XMax), min(max(y, a.YMin), a.YMax)
}

// Layout returns the series of curves for kind (one per curve, in order,
// styled by family) and the axes that show them.
//
// The axes zoom to where the families differ: on each axis, to the
// measured points (bounds count only when no point has a mistake) that
// lie within the spans of at least a third of the families (two at
// least; a span runs from a family's smallest to its largest value,
// widened by a tenth of a decade), with a margin. A setting that few
// families come near (φ Cassandra suspecting ten times a second at a TD
// no other family reaches) is then off the scale, and a figure marks it at
// the border instead of stretching the axis for it. With a single family,
// or when no value is shared, the axes cover every point. The x axis has
// a margin of 8 % of its range (at least 0.04 decade) each side; the y
// axis spans whole decades. ok is false when nothing can be drawn.
func Layout(curves []qos.Curve, kind Kind) (ax Axes, series []Series, ok bool) {
	names := make([]string, len(curves))
	for i, c := range curves {
		names[i] = c.Family
	}
	var xs, ys, bxs, bys [][]float64
	for _, c := range curves {
		col, glyph := Style(c.Family, names)
		pts := CurvePoints(c, kind)
		series = append(series, Series{Curve: c, Colour: col, Glyph: glyph, Points: pts, Joined: Monotone(pts)})
		var x, y, bx, by []float64
		for _, p := range pts {
			if p.Bound {
				bx, by = append(bx, p.X), append(by, p.Y)
			} else {
				x, y = append(x, p.X), append(y, p.Y)
			}
		}
		if len(x) > 0 {
			xs, ys = append(xs, x), append(ys, y)
		}
		if len(bx) > 0 {
			bxs, bys = append(bxs, bx), append(bys, by)
		}
	}
	if len(xs) == 0 {
		xs, ys = bxs, bys
	}
	if len(xs) == 0 {
		return Axes{}, series, false
	}
	ax.XMin, ax.XMax = zoom(xs)
	ax.YMin, ax.YMax = zoom(ys)
	m := max(0.08*math.Log10(ax.XMax/ax.XMin), 0.04)
	ax.XMin, ax.XMax = ax.XMin/math.Pow(10, m), ax.XMax*math.Pow(10, m)
	ax.YMin = math.Pow(10, math.Floor(math.Log10(ax.YMin)+1e-9))
	ax.YMax = math.Pow(10, math.Ceil(math.Log10(ax.YMax)-1e-9))
	if ax.YMin >= ax.YMax {
		ax.YMin, ax.YMax = ax.YMin/10, ax.YMax*10
	}
	return ax, series, true
}

// zoom returns the log-axis range of the values of several families (one
// slice each, all positive): the range of the values that lie within the
// spans (widened by 0.1 decade) of at least a third of the families and
// two, or of all values when none does.
func zoom(fams [][]float64) (lo, hi float64) {
	const widen = 0.1 // decades
	need := max(2, (len(fams)+2)/3)
	span := make([][2]float64, len(fams))
	for i, vs := range fams {
		span[i] = [2]float64{math.Log10(slices.Min(vs)) - widen, math.Log10(slices.Max(vs)) + widen}
	}
	all := [2]float64{math.Inf(1), math.Inf(-1)}
	shared := all
	for _, vs := range fams {
		for _, v := range vs {
			l := math.Log10(v)
			all = [2]float64{min(all[0], l), max(all[1], l)}
			n := 0
			for _, sp := range span {
				if l >= sp[0] && l <= sp[1] {
					n++
				}
			}
			if n >= need {
				shared = [2]float64{min(shared[0], l), max(shared[1], l)}
			}
		}
	}
	if math.IsInf(shared[0], 1) {
		shared = all
	}
	return math.Pow(10, shared[0]), math.Pow(10, shared[1])
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
