// Sweeping while the table is replayed.

package main

import (
	"io"
	"sync"

	"github.com/fdkit/fdkit/qos"
)

// earlySweep is the sweep of every stream read, started with the table's
// replay so that neither waits for the other's last tasks with a core
// idle. The streams the table then drops are swept for nothing and left
// out (result); the curves of the others are those of a sweep started
// after the table.
type earlySweep struct {
	runs   []streamRun
	sw     sweep
	total  int
	err    error
	done   chan struct{}
	cancel chan struct{} // closed by stop
}

// startSweep starts the sweep of runs, or returns nil when it is to wait
// for the table as usual (sweepRuns): when a stream is spooled (two
// replays at once would hold twice the streams read back into memory),
// or when the sweep of every stream cannot be planned (a sweep error, or
// more than --max-sweep-memory: the sweep of the streams kept may still
// fit, and sweepRuns says so after the table, as without this).
func startSweep(o options, runs []streamRun, cfg qos.Config, progress func(done, total int)) *earlySweep {
	for _, r := range runs {
		if r.in.spool != nil {
			return nil
		}
	}
	sw, total, err := planSweep(o, runs)
	if err != nil {
		return nil
	}
	e := &earlySweep{runs: runs, sw: sw, total: total, done: make(chan struct{}), cancel: make(chan struct{})}
	go func() {
		defer close(e.done)
		e.sw.curves, e.err = qos.SweepEach(sw.streams, sw.fams, qos.SweepConfig{Config: cfg, Progress: progress, Cancel: e.cancel})
	}()
	return e
}

// wait waits for the sweep to end; a nil e has nothing to wait for.
func (e *earlySweep) wait() {
	if e != nil {
		<-e.done
	}
}

// stop ends the sweep of a run that failed: the tasks not started are
// left out, and stop returns once those running have finished (they read
// the streams, which the run then releases). A nil e has nothing to stop.
func (e *earlySweep) stop() {
	if e != nil {
		close(e.cancel)
		<-e.done
	}
}

// result waits for the sweep and returns that of the streams kept, in
// their order (a subsequence of e.runs), printing its warnings as
// sweepRuns does.
func (e *earlySweep) result(kept []streamRun, progress func(done, total int), stderr io.Writer) (sweep, error) {
	e.wait()
	if e.err != nil {
		return sweep{}, e.err
	}
	var sw sweep
	j, first := 0, 0 // the next stream kept; the stream's first curve
	for i, r := range e.runs {
		n := len(e.sw.fams[i])
		if j < len(kept) && kept[j].in == r.in {
			j++
			sw.streams = append(sw.streams, e.sw.streams[i])
			sw.fams = append(sw.fams, e.sw.fams[i])
			sw.curves = append(sw.curves, e.sw.curves[first:first+n]...)
		}
		first += n
	}
	progress(-1, e.total)
	sweepWarnings(stderr, sw.curves)
	return sw, nil
}

// heldProgress passes a sweep's progress on to draw, but holds it until
// release: the sweep started early reports while the table is replayed
// and printed, and a bar redrawn on the terminal meanwhile would break
// into the table's lines. Held reports are kept as the last one, which
// release draws. Its methods may be called from any goroutine.
type heldProgress struct {
	mu          sync.Mutex
	draw        func(done, total int)
	released    bool
	held        bool // a report came while held
	done, total int
}

// report is the sweep's progress function.
func (h *heldProgress) report(done, total int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.released {
		h.held, h.done, h.total = true, done, total
		return
	}
	h.draw(done, total)
}

// release draws the last report held and passes the next ones on.
func (h *heldProgress) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.released = true
	if h.held {
		h.draw(h.done, h.total)
	}
}
