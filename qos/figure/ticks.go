package figure

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// LogTicks marks a log axis at every integer multiple of each power of
// ten (at the powers alone over four decades or more; over less than a
// factor 3, at the multiples of a 1-2-5 step instead). Over two decades or more it labels the powers of ten alone; over
// less, the multiples that keep about four to twelve labels: every
// multiple below 0.7 decades, 1, 2, 3, 5 and 7 below 1.2, 1, 2 and 5 up to
// two decades (gonum's own LogTicks labels only the powers of ten, which
// left a TD axis from 180 ms to 3 s with the single label 1000).
//
// A label is a plain number from 0.01 to 9999 ("0.2", "500"). Beyond, and
// for the powers of ten over two decades, it is a power of ten written
// "10^-7" (ASCII: gonum's PDF backend writes text in WinAnsi), which the
// figure draws with a raised exponent (and the report too): never
// "0.0000001". Other multiples beyond 0.01 to 9999 are not labelled.
type LogTicks struct{}

// Ticks implements plot.Ticker.
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	e0, e1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	label := map[int]bool{1: true, 2: true, 5: true}
	decades := math.Log10(hi / lo)
	if decades < 0.5 {
		return narrowTicks(lo, hi)
	}
	switch {
	case decades >= 2:
		label = map[int]bool{1: true}
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
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) || (decades >= 4 && m != 1) {
				continue
			}
			t := plot.Tick{Value: v}
			if label[m] {
				t.Label = tickLabel(m, int(e), decades >= 2)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// narrowTicks marks an axis of less than a factor 3 (TD from 95 to
// 200 ms, where the multiples of powers of ten are 100 and 200 alone) at
// the multiples of a 1-2-5 step that give three to six labels, with minor
// ticks between (labels only from 0.01 to 9999, as LogTicks's).
func narrowTicks(lo, hi float64) []plot.Tick {
	step := math.Pow(10, math.Floor(math.Log10(hi-lo)))
	for _, m := range []float64{0.1, 0.2, 0.5, 1} {
		if (hi-lo)/(step*m) <= 6 {
			step *= m
			break
		}
	}
	e := int(math.Floor(math.Log10(step) + 1e-9))
	var ts []plot.Tick
	for k := math.Ceil(lo / (step / 2)); k*step/2 <= hi*(1+1e-9); k++ {
		v := k * step / 2
		t := plot.Tick{Value: v}
		if int(k)%2 == 0 && v >= 0.01 && v < 1e4 {
			t.Label = strconv.FormatFloat(v, 'f', max(0, -e), 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// tickLabel writes m·10^e: as a plain number from 0.01 to 9999 (unless
// power, which an axis over several decades asks for, and m is 1), else
// as a power of ten, or "" for another multiple.
func tickLabel(m, e int, power bool) string {
	v := float64(m) * math.Pow(10, float64(e))
	switch {
	case (!power || m != 1) && v >= 0.01 && v < 1e4:
		// m·10^e written with e's decimals: 0.3, not
		// 0.30000000000000004.
		return strconv.FormatFloat(v, 'f', max(0, -e), 64)
	case m == 1:
		return "10^" + strconv.Itoa(e)
	}
	return ""
}

// powerText draws tick labels: a label "b^e" as b with e raised and
// smaller, any other as text.Plain does.
type powerText struct{ text.Plain }

// expScale and expRise size and raise an exponent, in units of the base
// text's size.
const expScale, expRise = 0.7, 0.42

// Box implements text.Handler.
func (h powerText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	base, exp, ok := strings.Cut(txt, "^")
	if !ok {
		return h.Plain.Box(txt, fnt)
	}
	bw, bh, bd := h.Plain.Box(base, fnt)
	small := fnt
	small.Size = fnt.Size * expScale
	ew, eh, _ := h.Plain.Box(exp, small)
	return bw + ew, max(bh, eh+expRise*fnt.Size), bd
}

// Draw implements text.Handler (unrotated text, as tick labels are).
func (h powerText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	base, exp, ok := strings.Cut(txt, "^")
	if !ok || sty.Rotation != 0 {
		h.Plain.Draw(c, txt, sty, pt)
		return
	}
	bw, _, _ := h.Plain.Box(base, sty.Font)
	small := sty
	small.Font.Size = sty.Font.Size * expScale
	ew, _, _ := h.Plain.Box(exp, small.Font)
	x0 := pt.X + vg.Length(sty.XAlign)*(bw+ew)
	sty.XAlign, small.XAlign = text.XLeft, text.XLeft
	h.Plain.Draw(c, base, sty, vg.Point{X: x0, Y: pt.Y})
	h.Plain.Draw(c, exp, small, vg.Point{X: x0 + bw, Y: pt.Y + expRise*sty.Font.Size})
}
