// Settings whose freshness point reached the end of time.Duration.

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/fdkit/fdkit/qos"
)

// A detector's τ saturates at math.MaxInt64 ns (292 years) when its
// parameter makes it later than that (fixed(timeout=9223372036854775807ns),
// jacobson(k=1e300), a --range up to the longest duration): the detector
// then never suspects, and TD_k = MaxInt64 − σ_k is the distance from the
// send to the end of time.Duration, not a detection time. It printed as
// "TD mean 9223372024404 ms ±3001" (user44's F10). Such a setting is left
// out of the results with a message instead.
//
// A saturated τ_{k+1} gives TD_k = MaxInt64 − b_k, where b_k is the TD's
// base (σ_k, or A_k − d̄ for an arrival-based TD), so TD max ≥ MaxInt64 −
// max_k b_k: every saturated setting is caught. Conversely a setting so
// caught has a τ within the stream's span of b_k of the end of time, for
// a trace of ordinary times a parameter of centuries.

// satWhy says why a setting that never suspects is left out.
const satWhy = "the freshness point reached the largest time.Duration (2^63−1 ns, 292 years), so TD is no measurement; give a smaller setting"

// tdBases holds the largest send and arrival instant of a stream.
type tdBases struct {
	sent, arrival time.Duration
	hasSent       bool
}

// basesOf returns the largest σ_k and A_k of in, from its trace.Stats
// (one read of the stream when it was loaded: newInput).
func basesOf(in *input) tdBases {
	return tdBases{sent: in.stats.LastSent, arrival: in.stats.LastArrival, hasSent: in.stats.HasSent}
}

// saturated reports whether r's TD can hold a saturated freshness point.
func (b tdBases) saturated(r qos.Result) bool {
	if r.Evaluated == 0 {
		return false
	}
	base := b.arrival - r.DelayOffset
	if r.TDBasis == qos.TDSend {
		if !b.hasSent {
			return false
		}
		base = b.sent
	}
	if base <= 0 {
		return r.TD.Max == math.MaxInt64
	}
	return r.TD.Max >= math.MaxInt64-base
}

// saturation finds the saturated settings of the table and the sweep of
// runs: a table row so found becomes a row without a result, naming why;
// a sweep curve loses those points (all of them: it is a failed curve).
// It returns a warning per table row so found and per sweep curve that
// lost some of its points (a curve that lost all is a failed curve, which
// sweepWarnings reports).
func saturation(runs []streamRun, table, curves []qos.Curve) []string {
	bases := map[string]tdBases{}
	for _, r := range runs {
		bases[r.in.name] = basesOf(r.in)
	}
	var warnings []string
	for i := range table {
		c := &table[i]
		if len(c.Points) != 1 {
			continue
		}
		b, ok := bases[c.Stream]
		if ok && b.saturated(c.Points[0].Result) {
			c.Points, c.Err = nil, curveError("never suspects: "+satWhy)
			warnings = append(warnings, fmt.Sprintf("fdreplay: warning: %s %s: %s", shown(c.Stream), c.Family, c.Err))
		}
	}
	for i := range curves {
		c := &curves[i]
		if c.Err != nil || len(c.Points) == 0 {
			continue
		}
		b, ok := bases[c.Stream]
		if !ok {
			continue
		}
		var left []float64
		kept := c.Points[:0:0]
		for _, p := range c.Points {
			if b.saturated(p.Result) {
				left = append(left, p.Value)
				continue
			}
			kept = append(kept, p)
		}
		switch {
		case len(left) == 0:
		case len(kept) == 0:
			c.Points, c.Err = nil, curveError("every setting never suspects: "+satWhy)
		default:
			c.Points = kept
			warnings = append(warnings, fmt.Sprintf("fdreplay: warning: %s %s: %d setting(s) left out, the first %s=%s: they never suspect: %s", shown(c.Stream), c.Family, len(left), c.Param, strconv.FormatFloat(left[0], 'g', 6, 64), satWhy))
		}
	}
	return warnings
}

// curveError returns a qos.CurveError with message msg, made the one way
// the qos API offers outside the package: from its JSON form.
func curveError(msg string) *qos.CurveError {
	var e qos.CurveError
	b, _ := json.Marshal(msg)
	_ = e.UnmarshalJSON(b)
	return &e
}
