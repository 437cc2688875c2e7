// Package detectortest is a conformance kit for implementations of
// detector.Detector, detector.Accrual and detector.Linear, in the manner of
// net/http/httptest: it imports testing and is meant for _test.go files
// only, never for non-test code.
//
// Run feeds seeded pseudo-random heartbeat streams (math/rand/v2 with fixed
// seeds, so every failure is reproducible) to detectors made by a factory
// and checks the properties every fdkit detector promises; RunConfigs does
// so for each of several configurations of one constructor; Benchmark and
// BenchmarkLevel are the standard Observe+query benchmark loops, so that the
// algorithm packages measure the same thing and their ratios mean something.
//
// The properties checked, with their source:
//
//   - Observe and every query never panic, whatever the input (doc of
//     detector.Detector: "Observe never panics"; project brief: bad input
//     never panics).
//   - FreshnessPoint's ok is false before the first heartbeat and true after
//     it; nothing is suspected before it (doc of Detector.FreshnessPoint
//     and Suspected).
//   - Suspected(t) == (ok && t > τ), probed at τ−1, τ, τ+1, at the ends of
//     the Duration range and at random instants (doc of Detector.Suspected:
//     strict).
//   - Queries have no side effects and Observe is deterministic: a twin
//     detector fed the same heartbeats but never queried reports the same
//     τ and WarmingUp (project brief: pure cores, no clock, no global
//     random source).
//   - On a clean stream (increasing sequence numbers and arrivals, no
//     restart) WarmingUp, once false, stays false: samples only accumulate
//     (doc of Detector.WarmingUp).
//   - Config.TauNonDecreasing (opt-in): τ never moves backwards when a
//     heartbeat arrives no earlier than every heartbeat before it. This is NOT
//     a property of adaptive detectors and is not checked by default:
//     Jacobson's TO shrinks as RTTVAR decays (τ = T_last + TO), Chen's EA drops
//     by (o_old − o_new)/n when a late heartbeat's offset leaves the window
//     (docs/algorithms.md, “Chen's NFD-E”), Bertier's margin shrinks with var,
//     and φ's t*(Θ) shrinks with σ; each can put the new τ before the old one.
//     It holds for the fixed timeout (τ = T_last + T, docs/algorithms.md,
//     “Fixed timeout”).
//
// For a detector.Accrual also (Défago et al., DSN 2005; doc of
// detector.Accrual):
//
//   - Level is 0 before the first heartbeat and ElapsedFor's ok false;
//     Level is never NaN or negative, at any instant including the ends of
//     the Duration range, and is non-decreasing in now between heartbeats.
//   - ElapsedFor is non-decreasing in the level, and agrees within 1 ns with
//     a bisection on Level: Level(T_last + ElapsedFor(L) + 1ns) ≥ L and
//     Level(T_last + ElapsedFor(L) − 2ns) < L, for L = Θ, fixed and random
//     levels (beyond 2^53 ns, about 104 days, where a float64 elapsed time
//     no longer resolves a nanosecond, the slack grows by a few ulps of the
//     elapsed time and of the widest gap between the heartbeats fed).
//   - FreshnessPoint == T_last + ElapsedFor(Threshold()): the kit takes
//     T_last = τ − ElapsedFor(Θ) and requires it to be the arrival instant of
//     a heartbeat it fed, then uses it for the bisection above (skipped when
//     τ saturates at math.MaxInt64, where the sum is clamped).
//
// For a detector.Linear (doc of detector.Linear, docs/algorithms.md, “Sweeping
// a parameter in one pass”): when LinearForm's ok is true, Offset + Scale·p
// reproduces τ within 2 ns (plus a few float64 ulps of the terms, which matter
// only for instants beyond about 2^53 ns), p being Config.LinearParam; on a
// clean stream LinearForm must be ok at least once, so that the check does run.
package detectortest

import (
	"time"
)

// Config tells Run what a detector needs and which optional properties it
// promises. The zero value means: Δ = 100 ms, streams with and without
// sequence numbers, no optional property, and the detector must not
// implement detector.Linear (set LinearParam or SkipLinear if it does).
type Config struct {
	// Interval is Δ, the nominal interval of the generated streams.
	// Default 100 ms.
	Interval time.Duration
	// RequiresSeq: every generated heartbeat carries a sequence number
	// (the streams without sequence numbers are skipped).
	RequiresSeq bool
	// LinearParam is the configured value of the detector's swept
	// parameter p (T or α in nanoseconds, Jacobson's K, z(Θ), Θ), used
	// when the detector implements detector.Linear. Zero is a valid p: a
	// forgotten LinearParam makes the Linear check fail loudly.
	LinearParam float64
	// SkipLinear skips the Linear check for a detector that implements
	// detector.Linear.
	SkipLinear bool
	// TauNonDecreasing asserts that τ never moves backwards when a
	// heartbeat arrives no earlier than every heartbeat before it (true of
	// the fixed timeout, not of adaptive detectors: see the package doc).
	TauNonDecreasing bool
	// NoWarmUp asserts that WarmingUp is false once a heartbeat was seen.
	NoWarmUp bool
	// Heartbeats is the length of each generated stream. Default 400, 150
	// with -short.
	Heartbeats int
}

func (o Config) withDefaults(short bool) Config {
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.Heartbeats <= 0 {
		o.Heartbeats = 400
		if short {
			o.Heartbeats = 150
		}
	}
	return o
}
