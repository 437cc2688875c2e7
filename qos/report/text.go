package report

// The texts of the report's cells: durations for a reader, settings, and
// values with the half-width of their 95 % interval.

import (
	"fmt"
	"strconv"
	"time"

	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/figure"
)

// longDuration writes d for a reader: in years or days when it is that
// long (a clock offset between unsynchronized hosts is often years: the
// epochs differ), with the exact duration after it; else as
// time.Duration writes it, to the microsecond.
func longDuration(d time.Duration) string {
	const day = 24 * time.Hour
	const year = 365.25 * 24 * float64(time.Hour)
	abs := d
	if abs < 0 {
		abs = -abs
	}
	exact := d.Round(time.Microsecond).String()
	switch {
	case abs < 0:
		// math.MinInt64 has no positive counterpart: it is −292 years.
		return fmt.Sprintf("%.1f years (%s)", float64(d)/year, exact)
	case float64(abs) >= year:
		return fmt.Sprintf("%.2f years (%s)", float64(d)/year, exact)
	case abs >= 2*day:
		return fmt.Sprintf("%.1f days (%s)", float64(d)/float64(day), exact)
	}
	return exact
}

func choiceSetting(c qos.Choice) string {
	if c.Param == "" {
		return "(single point)"
	}
	return figure.ParamSymbol(c.Family, c.Param) + " = " + strconv.FormatFloat(c.Point.Value, 'g', 4, 64) + c.Unit
}

// pmText returns " ±h", h half the width of the interval [lo, hi] around
// x, or " +up/−down" when one end lies more than 1.5 times farther from x
// than the other (few mistakes, QAP near 1) or when a ± would reach
// below 0 or, for a QAP (isQAP), above 1, so that the text never reads
// as reaching below 0 or above 1.
func pmText(x, lo, hi float64, isQAP bool, format func(float64) string) string {
	up, down, h := hi-x, x-lo, (hi-lo)/2
	if up > 1.5*down || down > 1.5*up || x-h < 0 || (isQAP && x+h > 1) {
		return " +" + format(max(up, 0)) + "/−" + format(max(down, 0))
	}
	return " ±" + format(h)
}

// The texts of a Result's metrics are "–" where the metric is undefined,
// as fdreplay's table and qos.WriteCSV (an empty cell) have them: MR and
// QAP without observed time (Span 0: one evaluated heartbeat; qos holds
// MR 0 and QAP 1 there by convention), TD without an evaluated heartbeat,
// E[TM] without a mistake. Their cells (metricCell) then carry no sort key.

func tdText(r qos.Result) string {
	if r.Evaluated == 0 {
		return "–"
	}
	s := msString(r.TD.Mean)
	if r.CI != nil {
		s += pmText(float64(r.TD.Mean), float64(r.CI.TDMean[0]), float64(r.CI.TDMean[1]), false, func(x float64) string { return msString(time.Duration(x)) })
	}
	return s
}

func mrText(r qos.Result) string {
	if r.Span <= 0 {
		return "–"
	}
	s := strconv.FormatFloat(r.MRPerSecond, 'g', 3, 64)
	switch {
	case r.CI == nil:
	case r.Mistakes == 0:
		s += " (≤" + strconv.FormatFloat(r.CI.MRPerSecond[1], 'g', 2, 64) + ")"
	default:
		s += pmText(r.MRPerSecond, r.CI.MRPerSecond[0], r.CI.MRPerSecond[1], false, func(x float64) string { return strconv.FormatFloat(x, 'g', 2, 64) })
	}
	return s
}

func qapText(r qos.Result) string {
	if r.Span <= 0 {
		return "–"
	}
	s := strconv.FormatFloat(r.QAP, 'f', 6, 64)
	if r.CI != nil && r.Suspected > 0 {
		s += pmText(r.QAP, r.CI.QAP[0], r.CI.QAP[1], true, func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) })
	}
	return s
}

func tmText(r qos.Result) string {
	if r.Mistakes == 0 {
		return "–"
	}
	return msString(r.MeanTM)
}

// tdP99Text is the TD p99 cell's text.
func tdP99Text(r qos.Result) string {
	if r.Evaluated == 0 {
		return "–"
	}
	return msString(r.TD.P99)
}

// metricCell is a metric's cell: its text, sorted by key where the
// metric is defined; an undefined one ("–") has no key, and the page's
// script sorts it after every defined value in either direction.
func metricCell(text string, key float64) cell {
	if text == "–" {
		return cell{Text: text}
	}
	return numCell(text, key)
}
