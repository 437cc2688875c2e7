package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fdkit/fdkit/qos"
)

// withPM appends " ±h" to a formatted value, h being half the width of its
// 95 % interval [lo, hi] written with the same precision (the bootstrap
// intervals need not be symmetric: the CSV and JSON outputs give both ends).
// An interval whose ends lie more than 1.5 times farther on one side than
// the other (a few mistakes: the exact Poisson interval of one mistake is
// [0.025, 5.57]/T_obs around 1/T_obs) is written "+up/−down" instead, so
// that it never reads as reaching below 0; so is one whose ± would reach
// below 0 or, for a QAP (isQAP), above 1.
func withPM(v string, x, lo, hi float64, isQAP bool, format func(float64) string) string {
	up, down, h := hi-x, x-lo, (hi-lo)/2
	if up > 1.5*down || down > 1.5*up || x-h < 0 || (isQAP && x+h > 1) {
		return v + " +" + format(max(up, 0)) + "/−" + format(max(down, 0))
	}
	return v + " ±" + format(h)
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
	return withPM(v, r.MRPerSecond, r.CI.MRPerSecond[0], r.CI.MRPerSecond[1], false, func(x float64) string { return strconv.FormatFloat(x, 'g', 2, 64) })
}

func qapCell(r qos.Result) string {
	v := fmtQAP(r.QAP)
	if r.CI == nil || r.Suspected == 0 {
		return v
	}
	return withPM(v, r.QAP, r.CI.QAP[0], r.CI.QAP[1], true, func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) })
}

func tdCell(r qos.Result) string {
	v := fmtMS(r.TD.Mean)
	if r.CI == nil {
		return v
	}
	return withPM(v, float64(r.TD.Mean), float64(r.CI.TDMean[0]), float64(r.CI.TDMean[1]), false, func(x float64) string { return fmtMS(time.Duration(x)) })
}

// plotTitle names the trace and the sender of a stream, as plot and
// report titles do ("jitter.fdkit.gz, sender p").
func plotTitle(in *input) string {
	return fmt.Sprintf("%s, sender %s", filepath.Base(in.file), displaySender(in))
}
