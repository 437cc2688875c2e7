package qos

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"sync"
)

// The methods that compute one curve's points: a replay per point (in
// batches on a shared read), the one-pass linear sweep, and a family's own
// sweep.

// replayPoint replays a fresh detector of family f at its i-th value.
func replayPoint(f *Family, i int, hbs Source, cfg Config) (*Point, error) {
	v := f.Values[i]
	det, err := f.New(v)
	if err != nil {
		return nil, f.pointErr(v, err)
	}
	res, err := ReplaySource(det, hbs, cfg)
	if err != nil {
		return nil, f.pointErr(v, err)
	}
	return &Point{Value: v, Result: res}, nil
}

// sweepLinear computes all of f's points from one replay, or falls back to
// one replay per point when the freshness point is not linear on hbs. It
// returns the points indexed like f.Values (nil where a replay failed).
//
// The one-pass method keeps the linear form of TD_k per heartbeat: on a
// Source that is not a slice and holds more than Config.Spill.InMemory heartbeats it
// keeps it in a temporary file read back sequentially (replayLinear), in
// memory that does not grow with the stream. The replay's per-heartbeat
// data in memory goes to sc (linearScratch), which nothing reads once
// sweepLinear has returned.
func sweepLinear(f *Family, hbs Source, cfg Config, progress func(int), sc *linearScratch) ([]*Point, []*Point, Method, error) {
	pts := make([]*Point, len(f.Values))
	det, err := f.New(f.Values[0])
	if err != nil {
		progress(len(f.Values))
		return pts, nil, OnePass, f.pointErr(f.Values[0], err)
	}
	ps := make([]float64, len(f.Values))
	for i, v := range f.Values {
		ps[i] = f.Linear(v)
		if math.IsNaN(ps[i]) || math.IsInf(ps[i], 0) {
			progress(len(f.Values))
			return pts, nil, OnePass, fmt.Errorf("qos: %s %s=%g: parameter maps to %g", f.Name, f.Param, v, ps[i])
		}
	}
	var apart []float64 // the query points of f.Apart answered with ps
	var at []int        // their index in f.Apart
	for j, v := range f.Apart {
		p := f.Linear(v)
		if _, err := f.New(v); err == nil && !math.IsNaN(p) && !math.IsInf(p, 0) {
			apart, at = append(apart, p), append(at, j)
		}
	}
	var own []*Point
	if len(f.Apart) > 0 {
		own = make([]*Point, len(f.Apart))
	}
	lc, err := replayLinearApart(det, hbs, cfg, ps, apart, func(j int, lc *linearCurve) error {
		res, err := lc.at(apart[j])
		own[at[j]] = &Point{Value: f.Apart[at[j]], Result: res}
		return err
	}, sc)
	if err == nil {
		for i, v := range f.Values {
			res, err := lc.at(ps[i])
			if err != nil {
				progress(len(f.Values))
				return pts, nil, OnePass, err
			}
			pts[i] = &Point{Value: v, Result: res}
		}
		progress(len(f.Values))
		return pts, own, OnePass, nil
	}
	if !errors.Is(err, errNotLinear) {
		progress(len(f.Values))
		return pts, nil, OnePass, f.pointErr(math.NaN(), err)
	}
	*sc = linearScratch{} // the replays per point take storage of their own
	pts, m, err := replayEach(f, hbs, cfg, progress)
	return pts, nil, m, err
}

// fanReplays bounds the per-point replays that run at once on a fanSource.
// Each holds up to Config.Spill.After evaluated heartbeats in memory (17
// bytes each) and then a spill file with its buffers, about 0.4 MB and one
// open file with the default bound, so a curve's replays take about 13 MB
// and 32 files whatever the number of points; the stream is read once per
// batch, each read feeding the batch's replays and the other sweeps of the
// stream.
const fanReplays = 32

// replayEach computes f's points with one replay each, indexed like
// f.Values (nil where a replay failed), and returns the first failure in
// value order. On a fanSource the replays run in batches of fanReplays,
// each replay of a batch on its own goroutine, so that they share the
// stream's reads (replayBatches).
func replayEach(f *Family, hbs Source, cfg Config, progress func(int)) ([]*Point, Method, error) {
	pts := make([]*Point, len(f.Values))
	errs := make([]error, len(f.Values))
	each := func(i int) {
		pts[i], errs[i] = replayPoint(f, i, hbs, cfg)
		progress(1)
	}
	if fan, ok := hbs.(*fanSource); ok {
		replayBatches(fan, len(f.Values), fanReplays, each)
	} else {
		for i := range f.Values {
			each(i)
		}
	}
	return pts, PerPoint, cmp.Or(errs...)
}

// replayBatches runs each(0) to each(n−1), each a reader of fan, at most
// batch at once, for a caller that is a member of fan and makes no pass
// meanwhile: for each batch the caller's membership goes to the batch's
// goroutines, so that a read never waits for the caller (which only waits
// for the batch), whatever number of passes each replay makes, none
// included (a value New rejects).
func replayBatches(fan *fanSource, n, batch int, each func(int)) {
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		fan.join(hi - lo) // the caller is a member: no read starts without them
		fan.leave()       // the caller's own membership
		var wg sync.WaitGroup
		for i := lo; i < hi; i++ {
			wg.Go(func() {
				defer fan.leave()
				each(i)
			})
		}
		wg.Wait()
		fan.join(1) // the caller's membership back (reads since went without it)
	}
}

// sweepOwn computes f's points with the family's own one-pass method, or
// falls back to one replay per point where that method does not apply.
func sweepOwn(f *Family, hbs Source, cfg Config, progress func(int)) ([]*Point, Method, error) {
	pts, err := f.onePass(f.Values, hbs, cfg)
	switch {
	case err == nil:
		progress(len(f.Values))
		return pts, f.method, nil
	case errors.Is(err, errNotLinear):
		return replayEach(f, hbs, cfg, progress)
	}
	progress(len(f.Values))
	return make([]*Point, len(f.Values)), f.method, f.pointErr(math.NaN(), err)
}
