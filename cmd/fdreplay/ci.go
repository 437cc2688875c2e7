package main

import (
	"strconv"
	"time"

	"github.com/fdkit/fdkit/qos"
)

// withPM appends " ±h" to a formatted value, h being half the width of its
// 95 % interval [lo, hi] written with the same precision (the bootstrap
// intervals need not be symmetric: the CSV and JSON outputs give both ends).
func withPM(v string, lo, hi float64, format func(float64) string) string {
	return v + " ±" + format((hi-lo)/2)
}

// mrCell, qapCell and tdCell format a table cell with its interval when
// the result has one.
func mrCell(r qos.Result) string {
	v := fmtMR(r.MRPerSecond)
	switch {
	case r.CI == nil:
		return v
	case r.Mistakes == 0:
		// No mistake: a one-sided bound (rule of three), not a ±.
		return v + " (≤" + strconv.FormatFloat(r.CI.MRPerSecond[1], 'g', 2, 64) + ")"
	}
	return withPM(v, r.CI.MRPerSecond[0], r.CI.MRPerSecond[1], func(x float64) string { return strconv.FormatFloat(x, 'g', 2, 64) })
}

func qapCell(r qos.Result) string {
	v := fmtQAP(r.QAP)
	if r.CI == nil || r.Suspected == 0 {
		return v
	}
	return withPM(v, r.CI.QAP[0], r.CI.QAP[1], func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) })
}

func tdCell(r qos.Result) string {
	v := fmtMS(r.TD.Mean)
	if r.CI == nil {
		return v
	}
	return withPM(v, float64(r.CI.TDMean[0]), float64(r.CI.TDMean[1]), func(x float64) string { return fmtMS(time.Duration(x)) })
}
