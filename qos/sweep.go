package qos

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fdkit/fdkit/detector"
)

// Family is a detector family swept over one parameter.
type Family struct {
	// Name identifies the family ("fixed", "chen", "phi-normal", ...).
	Name string
	// Param names the swept parameter as the textual form of package spec
	// does ("timeout", "alpha", "threshold", "k", "sm1"); empty for a
	// family with a single point (Bertier).
	Param string
	// Unit is the unit of the parameter values: "ms" for durations, "" for
	// dimensionless parameters.
	Unit string
	// Values are the parameter values to evaluate, in Unit.
	Values []float64
	// Max, when positive, is the largest value the parameter can take
	// (SatzgerFamily: 1, its threshold being a quantile level): Decide
	// neither extends a range beyond it nor suggests a --range past it.
	Max float64
	// Min, when positive, is the smallest value the parameter can take
	// (PhiNormalFamily: log10 2, where z(Θ) = 0): Decide neither extends a
	// range below it nor suggests a --range under it.
	Min float64
	// New returns a fresh detector for parameter value v. The families
	// made by PhiAkkaFamily, PhiNormalFamily (with skip-suspected) and
	// SFDFamily carry a method of their own that
	// computes their points from the configuration given to the
	// constructor, without calling New (New serves the per-point replays:
	// SweepConfig.PerPointOnly and the fallback): replacing New on such a
	// family does not change its curve unless PerPointOnly is set; call the
	// constructor with the new configuration instead.
	New func(v float64) (detector.Detector, error)
	// Linear, when not nil, says that the detectors made by New implement
	// detector.Linear, differ only in the parameter, and have
	// τ = Offset + Scale·Linear(v). Sweep then computes the whole curve from
	// one replay; it falls back to one replay per point when LinearForm
	// reports ok = false on the stream (for example a clamp was active).
	Linear func(v float64) float64
	// WarmUp is the number of fresh heartbeats this family always excludes
	// at the start of a stream (on top of Config.WarmUp: the larger one
	// applies).
	WarmUp int
	// Apart, for a family with Linear set, are values whose points the
	// sweep also computes from its replay, each as the sweep of that value
	// alone computes it, field by field, into Curve.Apart; they are not
	// in Points. (A point of a linear curve comes from sums over the
	// slacks between neighbouring values, which a value more or less
	// changes in their last bits where the scale is not an integer, as
	// Jacobson's RTTVAR.) Such a point costs a fraction of a replay, not
	// a replay; one the pass cannot answer (the curve is replayed per
	// point, or the value alone would be) is left nil, for the caller to
	// replay on its own. Families without Linear ignore Apart.
	Apart []float64

	// onePass, set by the constructors of families that have a one-pass
	// method of their own (PhiAkkaFamily, PhiNormalFamily, SFDFamily, the
	// shared-state families), computes the points for values
	// from one pass, or returns errNotLinear when it does not apply on the
	// stream; method names it.
	onePass func(values []float64, src Source, cfg Config) ([]*Point, error)
	method  Method
}

// Stream is one (sender, monitor) heartbeat stream in arrival order: the
// heartbeats in memory (Heartbeats), or a Source that reads them again for
// each pass (Source, when not nil; Heartbeats is then ignored), which keeps
// a sweep's memory from growing with the stream.
type Stream struct {
	Name       string
	Heartbeats []detector.Heartbeat
	Source     Source
}

// Point is the QoS of one parameter value.
type Point struct {
	Value float64 `json:"value"`
	Result
}

// Method names how a curve was computed.
type Method string

const (
	// OnePass: all points from one replay (sorted slacks, docs/algorithms.md,
	// “Sweeping a parameter in one pass”).
	OnePass Method = "one-pass"
	// OnePassGroups: all points from one pass in which the thresholds whose
	// replays have recorded the same history share one detector, split
	// where their histories part (Akka's and the normal φ: see
	// PhiAkkaFamily, PhiNormalFamily). Equal to
	// PerPoint in every field.
	OnePassGroups Method = "one-pass-groups"
	// SharedEstimator: one estimator pass shared by every point, then each
	// point's control and QoS replayed from it (SFD: see SFDFamily). Equal
	// to PerPoint in every field.
	SharedEstimator Method = "shared-estimator"
	// SharedState: one detector shared by every threshold, whose state
	// does not depend on it, and one replay engine per threshold reading
	// that threshold's freshness point from it (Satzger, κ-FD: see
	// SatzgerFamily, KappaFamily); for the normal φ with skip-suspected,
	// one set of detectors shared by groups of thresholds, as in
	// OnePassGroups, read the same way (PhiNormalFamily). Equal to
	// PerPoint in every field.
	SharedState Method = "shared-state"
	// PerPoint: one replay per point.
	PerPoint Method = "replay-per-point"
)

// Curve is one family's QoS over its parameter on one stream. Points are in
// the order of Family.Values, without those whose replay failed; Err holds
// the failure of the first value that failed, in Values order (for example
// ErrNoEvaluation on a stream shorter than the warm-up).
type Curve struct {
	Stream string      `json:"stream"`
	Family string      `json:"family"`
	Param  string      `json:"param"`
	Unit   string      `json:"unit"`
	Method Method      `json:"method"`
	Points []Point     `json:"points"`
	Err    *CurveError `json:"error,omitempty"`
	// Apart holds the points of Family.Apart, in its order (nil where not
	// computed, and when the family has none).
	Apart []*Point `json:"-"`
}

// SweepConfig configures Sweep. The zero value replays with the default
// Config on GOMAXPROCS workers, using the faster methods where they apply.
type SweepConfig struct {
	Config Config
	// Workers bounds the goroutines; default runtime.GOMAXPROCS(0).
	Workers int
	// PerPointOnly disables the one-pass, grouped and shared-estimator
	// methods: every point is a replay of its own (for comparisons and
	// benchmarks).
	PerPointOnly bool
	// Progress, if not nil, is called after each finished unit of work with
	// the number of points done and the total; calls are serialized.
	Progress func(done, total int)
	// Cancel, if not nil, ends the sweep early once closed: the tasks not
	// started by then (a curve, or a point of a curve replayed per point)
	// are not run and fail with ErrCanceled, those running finish, and
	// SweepEach returns when they have.
	Cancel <-chan struct{}
}

// ErrCanceled is the failure of the curves and points a sweep did not
// run because SweepConfig.Cancel was closed.
var ErrCanceled = errors.New("qos: sweep canceled")

type sweepTask struct {
	curve  int
	stream *Stream
	fam    *Family
	point  int // −1: the whole curve (one-pass with fallback)
}

// Sweep evaluates every family on every stream. It returns the curves in
// stream-major order (for each stream, the families in the order given).
// Families with Linear set are computed in one pass per stream, the φ
// models with a skip rule and SFD with methods of their own
// (PhiAkkaFamily, PhiNormalFamily, SFDFamily), the others
// with one replay per point; Curve.Method says which. Work is spread over a bounded pool of
// goroutines. The error is non-nil only for invalid arguments; failures of
// single replays are reported in Curve.Err.
func Sweep(streams []Stream, fams []Family, opt SweepConfig) ([]Curve, error) {
	per := make([][]Family, len(streams))
	for i := range per {
		per[i] = fams
	}
	return SweepEach(streams, per, opt)
}

// SweepEach is Sweep with a list of families per stream (fams[i] for
// streams[i]), for streams that need their own settings (for example their
// own nominal interval Δ). All streams share one pool of goroutines.
//
// A stream given as a Source that is not held in memory (for example a
// trace.Spool) of at most Config.Spill.InMemory heartbeats is read into
// memory once and swept as a stream in memory, at most two such streams
// at a time (32 bytes a heartbeat, plus the sweeps' per-heartbeat data of
// the tasks running), so that memory is bounded by the longest streams,
// not by the whole input. A longer one is read by all its families and
// points together: every read of it feeds all of them at once (see
// fanSource), so that it is read a small constant number of times
// whatever the number of families and points. One such stream is swept
// at a time (its sweeps keep both cores busy), so that memory is that of
// one stream's sweeps. The curves do not depend on which way a stream is
// read.
func SweepEach(streams []Stream, fams [][]Family, opt SweepConfig) ([]Curve, error) {
	if err := checkSweep(streams, fams, opt.Config); err != nil {
		return nil, err
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sw := newSweepRun(streams, fams, opt)
	var wg sync.WaitGroup
	pool := longestFirst(sw.tasks)
	ch := make(chan queuedTask)
	n := len(pool)
	for _, g := range sw.loads {
		n += len(g)
	}
	for range min(workers, max(n, 1)) {
		wg.Go(func() {
			var lin workerScratch
			for q := range ch {
				if sw.canceled() {
					sw.fail(q.t, ErrCanceled)
				} else {
					sw.do(q.t, q.src, &lin)
				}
				if q.release != nil {
					q.release()
				}
			}
		})
	}
	sem := make(chan struct{}, 1)
	for _, g := range sw.groups {
		wg.Go(func() {
			sem <- struct{}{}
			sw.fanOut(g)
			<-sem
		})
	}
	for _, t := range pool {
		ch <- queuedTask{t: t, src: t.stream.source()}
	}
	sw.feedLoads(ch)
	close(ch)
	wg.Wait()
	return sw.collect(), nil
}

// loadAhead is how many streams read into memory (sweepRun.loads) a sweep
// holds at once: while the last tasks of one run, those of the next can
// start, so that both cores stay busy from one stream to the next.
const loadAhead = 2

// queuedTask is a task handed to SweepEach's workers with the stream to
// read; release, when not nil, is called once the task is done.
type queuedTask struct {
	t       sweepTask
	src     Source
	release func()
}

// feedLoads reads the streams of sw.loads into memory one after the
// other, at most loadAhead at a time, and hands their tasks to the
// workers; a stream is dropped once all its tasks are done. A stream that
// cannot be read fails each of its curves with the read's error.
func (sw *sweepRun) feedLoads(ch chan<- queuedTask) {
	held := make(chan struct{}, loadAhead)
	for _, g := range sw.loads {
		held <- struct{}{}
		var hbs []detector.Heartbeat
		err := ErrCanceled
		if !sw.canceled() { // else fail the stream's tasks unread
			hbs, _, err = heartbeatsOf(g[0].stream.source(), math.MaxInt)
		}
		if err != nil {
			for _, t := range g {
				sw.fail(t, err)
			}
			<-held
			continue
		}
		var left atomic.Int64
		left.Store(int64(len(g)))
		release := func() {
			if left.Add(-1) == 0 {
				<-held
			}
		}
		for _, t := range longestFirst(g) {
			ch <- queuedTask{t: t, src: sliceSource(hbs), release: release}
		}
	}
}

// fail records err as task t's outcome: the failure of its point, or of
// its whole curve.
func (sw *sweepRun) fail(t sweepTask, err error) {
	if t.point >= 0 {
		sw.setErr(t.curve, t.point, t.fam.pointErr(t.fam.Values[t.point], err))
		sw.report(1)
		return
	}
	sw.setErr(t.curve, -1, t.fam.pointErr(math.NaN(), err))
	sw.report(len(t.fam.Values))
}

// checkSweep validates SweepEach's arguments.
func checkSweep(streams []Stream, fams [][]Family, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if len(fams) != len(streams) {
		return fmt.Errorf("qos: %d family lists for %d streams", len(fams), len(streams))
	}
	for _, fs := range fams {
		for i := range fs {
			f := &fs[i]
			switch {
			case f.New == nil:
				return fmt.Errorf("qos: family %q has no constructor", f.Name)
			case len(f.Values) == 0:
				return fmt.Errorf("qos: family %q has no parameter values", f.Name)
			case f.WarmUp < 0:
				return fmt.Errorf("qos: family %q warm-up %d is negative", f.Name, f.WarmUp)
			}
		}
	}
	return nil
}

// sweepRun is the state of one SweepEach: the curves being filled, their
// points by value, the first failure of each, and the tasks.
type sweepRun struct {
	opt    SweepConfig
	curves []Curve
	slots  [][]*Point // per curve, per value
	mu     sync.Mutex
	errs   []error
	errAt  []int // the value of errs[ci] (−1: the whole curve)
	tasks  []sweepTask
	groups [][]sweepTask // the tasks of each stream read through a fanSource
	loads  [][]sweepTask // the tasks of each stream read into memory first
	total  int
	done   atomic.Int64
	progMu sync.Mutex
}

func newSweepRun(streams []Stream, fams [][]Family, opt SweepConfig) *sweepRun {
	nc := 0
	for _, fs := range fams {
		nc += len(fs)
	}
	sw := &sweepRun{opt: opt, curves: make([]Curve, nc), slots: make([][]*Point, nc), errs: make([]error, nc), errAt: make([]int, nc)}
	ci := -1
	for si := range streams {
		_, inMemory := streams[si].source().(sliceSource)
		first := len(sw.tasks)
		for fi := range fams[si] {
			ci++
			sw.addCurve(ci, &streams[si], &fams[si][fi])
		}
		if !inMemory && len(sw.tasks) > first {
			g := slices.Clone(sw.tasks[first:])
			sw.tasks = sw.tasks[:first]
			if streams[si].source().Len() <= opt.Config.Spill.inMemory() {
				sw.loads = append(sw.loads, g)
			} else {
				sw.groups = append(sw.groups, g)
			}
		}
	}
	return sw
}

// addCurve sets up curve ci, of family f on stream s, and its tasks: the
// whole curve, or one per point.
func (sw *sweepRun) addCurve(ci int, s *Stream, f *Family) {
	sw.curves[ci] = Curve{Stream: s.Name, Family: f.Name, Param: f.Param, Unit: f.Unit, Method: PerPoint}
	sw.slots[ci] = make([]*Point, len(f.Values))
	sw.total += len(f.Values)
	// Every family's own one-pass method keeps the per-time-cell
	// breakdown the intervals need (the grouped φ pass, SFD's shared
	// estimator, the shared-state passes).
	if (f.Linear != nil || f.onePass != nil) && !sw.opt.PerPointOnly {
		sw.curves[ci].Method = OnePass
		if f.onePass != nil {
			sw.curves[ci].Method = f.method
		}
		sw.tasks = append(sw.tasks, sweepTask{curve: ci, stream: s, fam: f, point: -1})
		return
	}
	for pi := range f.Values {
		sw.tasks = append(sw.tasks, sweepTask{curve: ci, stream: s, fam: f, point: pi})
	}
}

// longestFirst sorts tasks (of streams in memory) longest first, stably:
// linear one-pass curves and per-point replays are each about one replay
// long, the curves of families with a method of their own (Akka, SFD: a
// pass plus work per point) several, so those go first; otherwise the
// given order.
func longestFirst(tasks []sweepTask) []sweepTask {
	slices.SortStableFunc(tasks, func(a, b sweepTask) int {
		ea, eb := a.point < 0 && a.fam.onePass != nil, b.point < 0 && b.fam.onePass != nil
		switch {
		case ea && !eb:
			return -1
		case eb && !ea:
			return 1
		}
		return 0
	})
	return tasks
}

// fanOut runs the tasks of one stream read through a fanSource, each on
// its own goroutine, so that every read of the stream feeds all of them.
func (sw *sweepRun) fanOut(g []sweepTask) {
	if sw.canceled() {
		for _, t := range g {
			sw.fail(t, ErrCanceled)
		}
		return
	}
	src := newFanSource(g[0].stream.source(), len(g))
	var wg sync.WaitGroup
	for _, t := range g {
		wg.Go(func() {
			defer src.leave()
			sw.do(t, src, new(workerScratch))
		})
	}
	wg.Wait()
}

// canceled reports whether SweepConfig.Cancel is closed.
func (sw *sweepRun) canceled() bool {
	select {
	case <-sw.opt.Cancel:
		return true
	default:
		return false
	}
}

// report counts n more points done.
func (sw *sweepRun) report(n int) {
	d := sw.done.Add(int64(n))
	if sw.opt.Progress != nil {
		sw.progMu.Lock()
		sw.opt.Progress(int(d), sw.total)
		sw.progMu.Unlock()
	}
}

// setErr keeps, for each curve, the failure of its first value (point −1:
// the whole curve, one task), not the first to happen: per-point replays
// finish in any order.
func (sw *sweepRun) setErr(ci, point int, err error) {
	sw.mu.Lock()
	if sw.errs[ci] == nil || point < sw.errAt[ci] {
		sw.errs[ci], sw.errAt[ci] = err, point
	}
	sw.mu.Unlock()
}

// workerScratch is what one of SweepEach's workers keeps from one task to
// the next: the storage of the linear curves (linearScratch), kept while
// it sweeps linear curves and let go when it takes another task.
type workerScratch struct {
	linear *linearScratch
}

// do runs task t reading the stream from src, with the storage ws of the
// worker that runs it.
func (sw *sweepRun) do(t sweepTask, src Source, ws *workerScratch) {
	if t.point >= 0 || t.fam.onePass != nil {
		ws.linear = nil // not a linear curve: let its storage go
	} else if ws.linear == nil {
		ws.linear = new(linearScratch)
	}
	cfg := sw.opt.Config
	cfg.WarmUp = max(cfg.WarmUp, t.fam.WarmUp)
	if t.point >= 0 {
		p, err := replayPoint(t.fam, t.point, src, cfg)
		if err != nil {
			sw.setErr(t.curve, t.point, err)
		} else {
			sw.slots[t.curve][t.point] = p
		}
		sw.report(1)
		return
	}
	var pts []*Point
	var method Method
	var err error
	if t.fam.onePass != nil {
		pts, method, err = sweepOwn(t.fam, src, cfg, sw.report)
	} else {
		pts, sw.curves[t.curve].Apart, method, err = sweepLinear(t.fam, src, cfg, sw.report, ws.linear)
	}
	sw.curves[t.curve].Method = method
	if err != nil {
		sw.setErr(t.curve, -1, err)
	}
	copy(sw.slots[t.curve], pts)
}

// collect returns the curves with their points in value order.
func (sw *sweepRun) collect() []Curve {
	for ci := range sw.curves {
		for _, p := range sw.slots[ci] {
			if p != nil {
				sw.curves[ci].Points = append(sw.curves[ci].Points, *p)
			}
		}
		if err := sw.errs[ci]; err != nil {
			var ce *CurveError
			if !errors.As(err, &ce) || ce != err {
				c := &sw.curves[ci]
				ce = &CurveError{Family: c.Family, Value: math.NaN(), Err: err, msg: err.Error()}
			}
			sw.curves[ci].Err = ce
		}
	}
	return sw.curves
}

// CurveError is why a curve lacks points (Curve.Err): the failure of the
// first value that failed, in Values order. errors.Is and errors.As reach
// its cause (ErrNoEvaluation, a constructor's error, a Source's read
// error). Its message is "qos: FAMILY PARAM=VALUE: cause", without
// PARAM=VALUE when the whole curve failed (Value NaN) or the family has a
// single point; in JSON it is that message (a CurveError read back from
// JSON has the message and no cause).
type CurveError struct {
	Family string
	Param  string  // the swept parameter ("" for a single-point family)
	Value  float64 // the failed value; NaN: the whole curve
	Err    error   // the cause
	msg    string
}

func (e *CurveError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.msg
}

func (e *CurveError) Unwrap() error { return e.Err }

// MarshalJSON writes the message.
func (e *CurveError) MarshalJSON() ([]byte, error) { return json.Marshal(e.Error()) }

// UnmarshalJSON reads a message written by MarshalJSON.
func (e *CurveError) UnmarshalJSON(b []byte) error {
	*e = CurveError{Value: math.NaN()}
	return json.Unmarshal(b, &e.msg)
}

// pointErr wraps err, from a replay or constructor of f at value v (NaN:
// the whole curve), as "qos: NAME PARAM=v: err" without repeating the
// "qos: " prefix of err and without "PARAM=v" for a single-point family.
func (f *Family) pointErr(v float64, err error) error {
	where := f.Name
	if f.Param != "" && !math.IsNaN(v) {
		where += fmt.Sprintf(" %s=%g", f.Param, v)
	}
	return &CurveError{Family: f.Name, Param: f.Param, Value: v, Err: err,
		msg: "qos: " + where + ": " + strings.TrimPrefix(err.Error(), "qos: ")}
}
