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
// chen, bertier, sfd, twowfd, satzger, kappa, phi, monitor, lateness and
// swim) follows one rule, so that zero can always be said:
//
//   - A field of plain type (int, float64, time.Duration, bool) means its
//     documented default when it is zero. Zero is then either the default
//     itself (no cap, no warm-up, off) or not a valid setting (a window of no
//     samples, a gain of 0), so nothing is lost. The zero value of a
//     configuration struct is therefore always its defaults.
//   - A field whose zero is a valid setting different from its default (an
//     acceptable pause of 0, no warm-up where the default warms up, no σ
//     floor, no bootstrap interval, no suspicion confirmations) is a
//     pointer: nil means the default, and new(v) says any value, zero
//     included (Go 1.26's new(expr)). OrDefault reads such a field.
//
// Negative values are never sentinels: a negative duration or count that the
// field does not define is an error naming the field. A constructor reads
// each field once, checks it and keeps the plain resolved value; nothing
// after the constructor looks at the configuration again.
//
// # Configuration: one name and one type for one knob
//
// A knob that several detectors share has the same field name and the same
// Go type in each of their configurations, so that moving from one
// detector to another changes the struct's name only. When the knob's zero
// is a valid setting different from the default in any of them, it is a
// pointer in all of them. The shared knobs are:
//
//	WindowSize        int             samples kept (phi, chen, satzger)
//	Threshold         float64         level at which the process is suspected
//	MinStdDev         *time.Duration  σ floor (phi, kappa)
//	AcceptablePause   *time.Duration  added to the expected interval (phi)
//	BootstrapInterval *time.Duration  interval assumed before one is known
//	MaxInterval       *time.Duration  longer intervals are not recorded
//	MinSamples        *int            samples needed before WarmingUp is false
//	RelearnAfter      *int            the relearn rule (phi)
//	Margin            *time.Duration  safety margin α (chen, twowfd)
//	Interval          time.Duration   nominal heartbeat interval Δ
//	RestartJump       *uint64         a larger backwards jump is a restart
//	DivideBySeqGap    bool            divide an interval by its sequence gap
//
// A default constant is named after its field, prefixed by the model when a
// package has several (phi.DefaultAkkaAcceptablePause). docs/api-conventions.md
// states the whole rule, the word Config included.

package detector
