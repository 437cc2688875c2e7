package phi

import (
	"fmt"
	"slices"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// DefaultRelearnAfter is the default K of the relearn rule of all three
// models (NormalConfig.RelearnAfter, AkkaConfig.RelearnAfter,
// CassandraConfig.RelearnAfter), capped at the window size.
//
// Reasoning: an outage, a loss burst and a pause of the sender each end in one
// long interval, so any K ≥ 2 keeps them out of the window; a run of K
// intervals that each end after τ(Θ = 8) has, under the model, probability
// below 10^−8K, so K = 10 is not reached by jitter. With the normal model's
// defaults (n = 1000, Θ = 8) a step to any slower rate is trusted only once
// 1000/(1 + z(8)²) ≈ 31 slow intervals are in the window, so any K ≤ 31 gives
// the same time to trust; K = 10 starts learning well before that
// (docs/algorithms.md, “Not locking out a sender whose rate changed”).
const DefaultRelearnAfter = 10

// relearn is the rule that keeps a skip rule (Akka's skip-if-suspected,
// Cassandra's interval cap) from locking out a sender whose rate changed
// for good (docs/algorithms.md, “Not locking out a sender whose rate
// changed”). A skip rule leaves out an interval that looks like an outage;
// one such interval is an outage, but K of them with fewer than K recorded
// intervals in a row between any two are the sender's new rhythm (a slower
// rate, or heartbeats that now come in pairs or bursts). So the intervals
// left out are kept, up to K − 1 of them, and the K-th records the whole
// run; every further interval left out is recorded too until the run ends.
// K intervals in a row recorded by the ordinary rule end the run and discard
// what was kept.
type relearn struct {
	k   int             // K; 0: never relearn (the source's rule as is)
	run []time.Duration // the run's intervals while it is shorter than K
	n   int             // intervals left out in the current run, saturating at K
	ok  int             // intervals recorded in a row since the last left out
}

// newRelearn validates K (nil means min(DefaultRelearnAfter, window)) for
// model with the given window size.
func newRelearn(model string, k *int, window int) (relearn, error) {
	v := detector.OrDefault(k, min(DefaultRelearnAfter, window))
	if v < 0 || v > window {
		return relearn{}, fmt.Errorf("phi: %s RelearnAfter %d is outside [0, window size=%d]", model, v, window)
	}
	return relearn{k: v}, nil
}

// skipped takes an interval the skip rule left out and records into w what
// the rule says to record now; it returns how many intervals it recorded.
func (r *relearn) skipped(iv time.Duration, w *detector.Window) int {
	run, rec := r.skip(iv)
	if !rec {
		return 0
	}
	for _, v := range run {
		w.Add(v)
	}
	w.Add(iv)
	return len(run) + 1
}

// skip takes an interval the skip rule left out and reports whether the
// rule records it now (rec) and, if so, the run's earlier intervals to
// record before it, oldest first (run aliases r's storage: use it before
// the next call).
func (r *relearn) skip(iv time.Duration) (run []time.Duration, rec bool) {
	r.ok = 0
	switch {
	case r.k == 0:
		return nil, false
	case r.n >= r.k:
		return nil, true
	}
	r.n++
	if r.n < r.k {
		r.run = append(r.run, iv)
		return nil, false
	}
	run = r.run
	r.run = r.run[:0]
	return run, true
}

// skipAlone reports whether skip would record the next interval left out
// alone (a run that has reached K: skip returns no run and rec true) and,
// if so, does to r what skip would.
func (r *relearn) skipAlone() bool {
	if r.k == 0 || r.n < r.k {
		return false
	}
	r.ok = 0
	return true
}

// recorded notes an interval the ordinary rule recorded; the K-th in a row
// ends the run.
func (r *relearn) recorded() {
	if r.n == 0 {
		return
	}
	r.ok++
	if r.ok >= r.k {
		r.n, r.ok = 0, 0
		r.run = r.run[:0]
	}
}

// clone returns an independent copy.
func (r *relearn) clone() relearn {
	c := *r
	c.run = slices.Clone(r.run)
	return c
}

// cloneInto returns an independent copy of r whose run reuses the array
// of run (of another relearn, whose state is then lost).
func (r *relearn) cloneInto(run []time.Duration) relearn {
	c := *r
	c.run = append(run[:0], r.run...)
	return c
}

// equal reports whether r and o are in the same state.
func (r *relearn) equal(o *relearn) bool {
	return r.k == o.k && r.n == o.n && r.ok == o.ok && slices.Equal(r.run, o.run)
}
