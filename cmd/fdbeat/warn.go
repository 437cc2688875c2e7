package main

import (
	"log/slog"
	"sync"
	"time"
)

// warnLimiter bounds the warnings a flood of bad packets can log: at most
// burst lines of each message per window; the rest are counted and said in
// one summary line when the window ends (at the next warning of that kind,
// or at the next flush). Times are the receiver's monotonic clock. Safe for
// concurrent use; memory is one entry per distinct message, and messages
// are constant strings.
type warnLimiter struct {
	log    *slog.Logger
	window time.Duration
	burst  int

	mu    sync.Mutex
	kinds map[string]*warnState
}

type warnState struct {
	start      time.Duration // of the current window
	n          int           // lines logged in it
	suppressed uint64        // warnings not logged in it
}

// Defaults of warnLimiter: 5 lines of a kind per 10 s, so a flood logs at
// most 6 lines (5 and a summary) per kind per 10 s. Transition lines (each
// forged name is suspected by every detector once its heartbeat is old) get
// transitionBurst per 10 s: a cluster's worth, not a flood's.
const (
	warnWindow      = 10 * time.Second
	warnBurst       = 5
	transitionBurst = 200
)

func newWarnLimiter(log *slog.Logger) *warnLimiter {
	return &warnLimiter{log: log, window: warnWindow, burst: warnBurst, kinds: map[string]*warnState{}}
}

// Warn logs msg with args at now unless burst lines of msg were logged in
// the current window already.
func (w *warnLimiter) Warn(now time.Duration, msg string, args ...any) {
	if w.Allow(now, msg) {
		w.log.Warn(msg, args...)
	}
}

// Allow reports whether a line of kind may be logged at now, and counts it
// either way.
func (w *warnLimiter) Allow(now time.Duration, kind string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.kinds[kind]
	if s == nil {
		s = &warnState{start: now}
		w.kinds[kind] = s
	}
	w.roll(now, kind, s)
	if s.n < w.burst {
		s.n++
		return true
	}
	s.suppressed++
	return false
}

// roll ends s's window if it is over, summarising what it suppressed.
// Called with w.mu held.
func (w *warnLimiter) roll(now time.Duration, msg string, s *warnState) {
	if now-s.start < w.window {
		return
	}
	if s.suppressed > 0 {
		w.log.Warn("similar log lines suppressed", "msg", msg, "count", s.suppressed, "window", w.window)
	}
	s.start, s.n, s.suppressed = now, 0, 0
}

// Flush summarises the windows that are over (call it now and then, and at
// the end with a far instant to say everything).
func (w *warnLimiter) Flush(now time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for msg, s := range w.kinds {
		w.roll(now, msg, s)
	}
}
