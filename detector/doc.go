// Package detector defines what every fdkit failure detector has in common:
// the heartbeat record, the Detector and Accrual interfaces, the sliding
// window of samples that the adaptive detectors share, and the fixed-timeout
// detector, the folklore baseline discussed by Chen, Toueg and Aguilera
// ("On the quality of service of failure detectors", IEEE Trans. Computers
// 51(5), 2002).
//
// # Time
//
// Detectors are pure: they never read a clock, start a goroutine or use a
// global random source. Instants are time.Duration offsets from an origin
// chosen by the caller (a monotonic clock reading in live use, the trace's
// first timestamp in replay). A detector is told the arrival instant of each
// heartbeat and asked about an instant "now"; the same inputs always give the
// same outputs, which is what makes replay exact.
//
// # Freshness point
//
// Every detector in fdkit has a freshness point τ that changes only when a
// heartbeat is observed: the monitor trusts the monitored process until τ and
// suspects it strictly after τ (Suspected(now) is now > τ). Accrual detectors
// additionally expose a suspicion level that is non-decreasing while no
// heartbeat arrives; their τ is the instant the level reaches the configured
// threshold.
//
// # Configuration: zero and defaults
//
// Every configuration struct in fdkit (this package's FixedConfig, jacobson,
// chen, bertier, sfd, phi, monitor and swim) follows one rule, so that zero
// can always be said:
//
//   - A field of plain type (int, float64, time.Duration, bool) means its
//     documented default when it is zero. Zero is then either the default
//     itself (no cap, no warm-up, off) or not a valid setting (a window of no
//     samples, a gain of 0), so nothing is lost. The zero value of a
//     configuration struct is therefore always its defaults.
//   - A field whose zero is a valid setting different from its default (an
//     acceptable pause of 0, no warm-up where the default warms up, no σ
//     floor, no seed interval, no suspicion confirmations) is a pointer: nil
//     means the default, and new(v) says any value, zero included (Go 1.26's
//     new(expr)). OrDefault reads such a field.
//
// Negative values are never sentinels: a negative duration or count that the
// field does not define is an error naming the field.
package detector
