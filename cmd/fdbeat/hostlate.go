package main

import (
	"time"

	"github.com/fdkit/fdkit/lateness"
)

// latenessEvery is how often recv logs the host's lateness: the margin its
// monitors wait past a freshness point, as measured (package lateness).
const latenessEvery = time.Minute

// noteLateness tracks the largest margin in effect since the last "host
// lateness" line and logs one every latenessEvery. Called by the sweep loop
// at now (monitor clock) after its sweep.
func (r *receiver) noteLateness(now time.Duration) {
	r.lateMax = max(r.lateMax, r.late.Bound())
	if r.lateNext == 0 {
		r.lateNext = now + latenessEvery
	}
	if now < r.lateNext {
		return
	}
	r.lateNext += latenessEvery
	if r.lateNext <= now { // the loop stalled for longer than a period
		r.lateNext = now + latenessEvery
	}
	r.logLateness("host lateness", r.late.Stats(), r.lateMax)
	r.lateMax = 0
}

// logLateness logs st: the margin now, the largest in the last period (when
// periodMax > 0), each source's largest lateness since the start, and the
// late heartbeats excused.
func (r *receiver) logLateness(msg string, st lateness.Stats, periodMax time.Duration) {
	var excused uint64
	for _, nm := range r.mons {
		excused += nm.m.Excused()
	}
	args := []any{"margin", st.Bound}
	if periodMax > 0 {
		args = append(args, "margin_max", periodMax, "period", latenessEvery)
	}
	for _, src := range lateness.Sources() {
		args = append(args, src.String()+"_max", st.Sources[src].Max)
	}
	args = append(args, "timer_ticks", st.Sources[lateness.Timer].Count, "excused", excused)
	r.log.Info(msg, args...)
}

// latenessBound is the margin the monitors wait now (0 for receivers tests
// build by hand without a meter).
func (r *receiver) latenessBound() time.Duration {
	if r.late == nil {
		return 0
	}
	return r.late.Bound()
}
