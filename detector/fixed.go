package detector

import (
	"fmt"
	"time"
)

// DefaultTimeout is the fixed-timeout detector's timeout when none is set.
const DefaultTimeout = time.Second

// FixedConfig configures a Fixed detector. The zero value means the defaults;
// pointer fields follow the package's rule on zero (nil is the default,
// new(0) is zero).
type FixedConfig struct {
	// Timeout T: the process is suspected when more than T has elapsed since
	// the newest heartbeat. Default DefaultTimeout (1 s); 0 suspects as soon
	// as any time passes after a heartbeat; must not be negative.
	Timeout *time.Duration
	// RestartJump: a sequence number more than RestartJump below the largest
	// seen means the sender restarted its numbering; the detector then starts
	// afresh from that heartbeat instead of ignoring it as stale for ever.
	// Default DefaultRestartJump (100); 0 takes every backwards number as a
	// restart.
	RestartJump *uint64
}

// DefaultRestartJump is the backwards sequence jump taken as a sender restart
// when FixedConfig.RestartJump is nil.
const DefaultRestartJump = 100

// Fixed is the fixed-timeout detector (docs/algorithms.md, “Fixed timeout”; the
// folklore baseline of Chen, Toueg and Aguilera, IEEE TC 51(5), 2002): τ =
// T_last + T.
//
// Awkward input: a heartbeat whose sequence number is not greater than the
// largest seen is stale or a duplicate and is ignored, unless it is more than
// RestartJump below it (a sender restart: the detector resets to it); a heartbeat without
// sequence number whose arrival is earlier than T_last (a clock going
// backwards) is ignored too, so τ never moves backwards. There is no warm-up.
type Fixed struct {
	timeout time.Duration
	restart uint64
	last    time.Duration
	seq     uint64
	hasSeq  bool
	seen    bool
	back    uint64
}

// NewFixed returns a fixed-timeout detector, or an error for a negative
// timeout.
func NewFixed(cfg FixedConfig) (*Fixed, error) {
	timeout := OrDefault(cfg.Timeout, DefaultTimeout)
	if timeout < 0 {
		return nil, fmt.Errorf("detector: fixed Timeout %v is negative", timeout)
	}
	return &Fixed{timeout: timeout, restart: OrDefault(cfg.RestartJump, DefaultRestartJump)}, nil
}

// BackwardArrivals returns how many heartbeats were dropped for arriving
// before T_last (BackwardCounter).
func (f *Fixed) BackwardArrivals() uint64 { return f.back }

// Timeout returns the configured timeout T.
func (f *Fixed) Timeout() time.Duration { return f.timeout }

// Observe records a heartbeat.
func (f *Fixed) Observe(hb Heartbeat) {
	if hb.HasSeq {
		if f.hasSeq && hb.Seq <= f.seq {
			if f.seq-hb.Seq <= f.restart {
				return // stale or duplicate
			}
			f.seen = false // sender restart: start afresh
		}
		f.seq, f.hasSeq = hb.Seq, true
	}
	if f.seen && hb.Arrival < f.last {
		f.back++
		return
	}
	f.last, f.seen = hb.Arrival, true
}

// FreshnessPoint returns τ = T_last + T; ok is false before the first heartbeat.
func (f *Fixed) FreshnessPoint() (time.Duration, bool) {
	if !f.seen {
		return 0, false
	}
	return AddSat(f.last, f.timeout), true
}

// WarmingUp is always false: the fixed timeout needs no samples.
func (f *Fixed) WarmingUp() bool { return false }

// Suspected reports now > τ.
func (f *Fixed) Suspected(now time.Duration) bool {
	tau, ok := f.FreshnessPoint()
	return ok && now > tau
}

// LinearForm returns Offset = T_last and Scale = 1: τ = T_last + T with T in
// nanoseconds.
func (f *Fixed) LinearForm() (time.Duration, float64, bool) {
	return f.last, 1, f.seen
}
