package qos

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// errNotLinear reports that a detector's freshness point was not linear in
// its parameter somewhere on the stream (no detector.Linear, or LinearForm
// returned ok = false, for example because a clamp was active). Sweep then
// falls back to one replay per point.
var errNotLinear = errors.New("qos: freshness point not linear in the swept parameter")

// linearCollector records, during one replay of a detector.Linear, what is
// needed to answer every parameter value p at once (ALGORITHMS.md §9.4).
//
// The evaluated part of the stream is cut into segments, one per processed
// heartbeat: segment j runs from its heartbeat's arrival S_j to the next
// arrival E_j, and over it τ_j(p) = off_j + scale_j·p. With
// u_j = (E_j − off_j)/scale_j and v_j = (S_j − off_j)/scale_j (v_j ≤ u_j):
//
//   - the monitor suspects somewhere in segment j iff p < u_j, and already
//     at its start iff p < v_j;
//   - a trust→suspect transition happens in segment j iff p < u_j and not
//     (p < v_j and p < u_{j−1}), the previous segment having ended in
//     suspicion; so mistakes(p) = #{u_j > p} − #{w_j > p} with
//     w_j = min(v_j, u_{j−1}) (u before the first segment is −∞);
//   - the time suspected in segment j is E_j − max(τ_j, S_j) when positive,
//     which is scale_j·((u_j − p)⁺ − (v_j − p)⁺).
//
// Sorted u, v, w with suffix sums of scale and scale·u answer each p in
// O(log n). TD_k(p) = c_k + scale_k·p with c_k = off_k − A_k plus the
// clock-dependent base.
type linearCollector struct {
	open      bool
	off       time.Duration
	scale     float64
	start     time.Duration
	uPrev     float64
	u, w      []float64 // all segments, for counting
	us, ss    []float64 // segments with scale > 0: u and scale
	vs, sv    []float64 // segments with scale > 0: v and scale
	constSusp float64   // suspected time of segments with scale 0, ns
	c, s      []float64 // per evaluated heartbeat: τ(0) − A_k (ns) and scale
	err       error
}

func newLinearCollector() *linearCollector {
	return &linearCollector{uPrev: math.Inf(-1)}
}

func (l *linearCollector) breakChain() {
	l.open = false
	l.uPrev = math.Inf(-1)
}

func (l *linearCollector) openSegment(det detector.Detector, at time.Duration, fresh bool) error {
	ld, isLin := det.(detector.Linear)
	if !isLin {
		return errNotLinear
	}
	off, scale, ok := ld.LinearForm()
	if !ok || scale < 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		return errNotLinear
	}
	l.open, l.off, l.scale, l.start = true, off, scale, at
	if fresh {
		l.c = append(l.c, float64(off-at))
		l.s = append(l.s, scale)
	}
	return nil
}

func (l *linearCollector) closeSegment(end time.Duration) {
	if !l.open {
		return
	}
	l.open = false
	var u, v float64
	if l.scale == 0 {
		u, v = math.Inf(-1), math.Inf(-1)
		if end > l.off {
			u = math.Inf(1)
		}
		if l.start > l.off {
			v = math.Inf(1)
		}
		if end > l.off {
			l.constSusp += float64(end - max(l.off, l.start))
		}
	} else {
		u = float64(end-l.off) / l.scale
		v = float64(l.start-l.off) / l.scale
		l.us = append(l.us, u)
		l.ss = append(l.ss, l.scale)
		l.vs = append(l.vs, v)
		l.sv = append(l.sv, l.scale)
	}
	l.u = append(l.u, u)
	l.w = append(l.w, min(v, l.uPrev))
	l.uPrev = u
}

// linearCurve answers parameter values from a finished collection.
type linearCurve struct {
	base     Result // counts, span and clock decision of the pass
	u, w     []float64
	us       []float64 // sorted; sufS/sufSU suffix sums of scale, scale·u
	sufS     []float64
	sufSU    []float64
	vs       []float64
	sufSV    []float64
	sufSVV   []float64
	constS   float64
	td0      []float64 // c_k + base_k, ns
	scales   []float64
	sameS    bool // every scale equal: TD percentiles shift with p
	td0Sort  []float64
	sumTD0   float64
	sumScale float64
	buf      []float64
}

// replayLinear runs one replay of det collecting slacks; it returns
// errNotLinear when det's freshness point is not linear on this stream.
func replayLinear(det detector.Detector, hbs []detector.Heartbeat, cfg Config) (*linearCurve, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.RecordMistakes = false
	lin := newLinearCollector()
	r := newReplayer(det, cfg, lin)
	for _, hb := range hbs {
		if err := r.step(hb); err != nil {
			return nil, err
		}
	}
	res, err := r.finish()
	if err != nil {
		return nil, err
	}
	lc := &linearCurve{base: res, u: lin.u, w: lin.w, constS: lin.constSusp, scales: lin.s}
	slices.Sort(lc.u)
	slices.Sort(lc.w)
	lc.us, lc.sufS, lc.sufSU = sortedSuffix(lin.us, lin.ss)
	lc.vs, lc.sufSV, lc.sufSVV = sortedSuffix(lin.vs, lin.sv)
	sync := res.ClockSync
	lc.td0 = lin.c
	lc.sameS = true
	for k := range lc.td0 {
		lc.td0[k] += float64(r.tdBase(sync, k))
		lc.sumTD0 += lc.td0[k]
		lc.sumScale += lin.s[k]
		if lin.s[k] != lin.s[0] {
			lc.sameS = false
		}
	}
	if len(lc.td0) != res.Evaluated {
		return nil, fmt.Errorf("qos: internal error: %d linear TD samples for %d evaluated heartbeats", len(lc.td0), res.Evaluated)
	}
	if lc.sameS {
		lc.td0Sort = slices.Clone(lc.td0)
		slices.Sort(lc.td0Sort)
	}
	return lc, nil
}

// sortedSuffix sorts (x, s) pairs by x and returns x sorted with suffix sums
// of s and s·x (index i sums elements i..n−1; index n is 0).
func sortedSuffix(x, s []float64) (xs, sufS, sufSX []float64) {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	n := len(x)
	xs = make([]float64, n)
	sufS = make([]float64, n+1)
	sufSX = make([]float64, n+1)
	for i, j := range idx {
		xs[i] = x[j]
	}
	for i := n - 1; i >= 0; i-- {
		j := idx[i]
		sufS[i] = sufS[i+1] + s[j]
		sufSX[i] = sufSX[i+1] + s[j]*x[j]
	}
	return xs, sufS, sufSX
}

// above returns the index of the first element of sorted a that is > p.
func above(a []float64, p float64) int {
	i, _ := slices.BinarySearchFunc(a, p, func(e, t float64) int {
		if e <= t {
			return -1
		}
		return 1
	})
	return i
}

// at returns the QoS for parameter value p (in the detector's LinearForm
// units).
func (lc *linearCurve) at(p float64) Result {
	res := lc.base
	res.MistakeIntervals = nil
	res.Mistakes = (len(lc.u) - above(lc.u, p)) - (len(lc.w) - above(lc.w, p))
	i := above(lc.us, p)
	j := above(lc.vs, p)
	susp := (lc.sufSU[i] - p*lc.sufS[i]) - (lc.sufSVV[j] - p*lc.sufSV[j]) + lc.constS
	res.Suspected = time.Duration(math.Round(max(susp, 0)))

	n := len(lc.td0)
	if n > 0 {
		res.TD.Mean = time.Duration(math.Round((lc.sumTD0 + p*lc.sumScale) / float64(n)))
		res.LastTD = time.Duration(math.Round(lc.td0[n-1] + lc.scales[n-1]*p))
		if lc.sameS {
			sh := lc.scales[0] * p
			res.TD.P50 = time.Duration(math.Round(lc.td0Sort[rank(0.50, n)] + sh))
			res.TD.P99 = time.Duration(math.Round(lc.td0Sort[rank(0.99, n)] + sh))
			res.TD.Max = time.Duration(math.Round(lc.td0Sort[n-1] + sh))
		} else {
			if lc.buf == nil {
				lc.buf = make([]float64, n)
			}
			mx := math.Inf(-1)
			for k, c := range lc.td0 {
				v := c + lc.scales[k]*p
				lc.buf[k] = v
				mx = max(mx, v)
			}
			res.TD.Max = time.Duration(math.Round(mx))
			res.TD.P50 = time.Duration(math.Round(selectRank(lc.buf, rank(0.50, n))))
			res.TD.P99 = time.Duration(math.Round(selectRank(lc.buf, rank(0.99, n))))
		}
	}
	res.setRates()
	return res
}
