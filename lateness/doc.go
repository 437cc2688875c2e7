// Package lateness measures how late the local host runs, so that a live
// failure detector does not convict a peer for a silence its own host
// caused.
//
// A heartbeat that reached the socket on time is still judged late when the
// receiving process runs late: the kernel did not schedule it, the Go
// runtime stopped the world for its garbage collector, or the goroutine
// that reads the socket waited behind others. The receiver cannot tell such
// a heartbeat from a late one, but it can measure its own lateness: how late
// its periodic timers fire (Source Timer), and the Go runtime's own
// histograms of stop-the-world pauses and of goroutine scheduling latency
// (runtime/metrics; Sources GCPause, OtherPause, Scheduling). A Meter keeps
// the largest lateness measured over a sliding window (Bound, default the
// last 10 s, capped at 5 s).
//
// The live wrappers use Bound as a margin on the freshness point: package
// monitor convicts a peer only once now > τ + Bound, and the SWIM agent's
// detector mode asks its per-peer detectors about now − Bound. This extends
// Cassandra's local-pause rule (its FailureDetector convicts nobody for a
// while after its own process paused for more than 5 s; docs/algorithms.md,
// “φ accrual: Cassandra's variant”) from rare long stalls to the
// millisecond-scale lateness of a busy host, which the rule's 5 s limit
// does not see; Lifeguard's local health multiplier (Dadgar, Phillips and
// Currey, "Lifeguard: Local Health Awareness for More Accurate Failure
// Detection", DSN-W 2018) is the same idea for SWIM, driven by missed acks
// rather than measured delays. The detectors themselves stay pure: the
// margin is applied by the wrapper that owns the clock, so trace replay
// (package qos) keeps the papers' models. docs/live.md says how the live
// wrappers use it.
//
// The price is detection time: a crash is reported up to Bound later, at
// most Cap (5 s).
package lateness
