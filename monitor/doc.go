// Package monitor is fdkit's per-peer failure detector for live services.
//
// A Monitor keeps one detector per monitored peer, created on the peer's first
// heartbeat from a Factory, so any fdkit detector (fixed timeout, Jacobson,
// Chen, Bertier, SFD, φ in its three variants) can be used. It is safe for
// concurrent use by many goroutines: peers live in a sharded hash table
// whose lookups take no lock (a mutex per shard serialises adding and
// removing peers) and each peer has its own mutex, so heartbeats and queries
// for different peers never contend on a global lock.
//
// # Status and hysteresis
//
// Every peer has a suspicion level and a status, Trusted or Suspected. For an
// accrual detector (detector.Accrual) the level is the detector's own (φ for
// the φ detectors). For a binary detector the level is the elapsed time since
// the newest heartbeat divided by the detector's timeout at that heartbeat,
// (now − T_last)/(τ − T_last): 0 at the heartbeat, 1 at the freshness point τ
// (+Inf after τ when τ ≤ T_last, which Chen-style detectors can produce after
// a late heartbeat).
//
// A trusted peer becomes suspected strictly after the instant its level reaches
// Config.High (for the default High, exactly the detector's freshness point:
// suspected iff now > τ, the convention of docs/algorithms.md, “Conventions and
// the common trace”). Between heartbeats the level never decreases, so a
// suspicion can only end at a heartbeat (or a restart). With Low = High (the
// default) a suspected peer is trusted again at the first fresh heartbeat that
// leaves its level below High: the monitor's output is exactly the detector's,
// and the transitions it reports are the mistakes that trace replay (package
// qos, docs/algorithms.md, “Replaying a trace”) finds on the same arrivals,
// as long as the host's lateness is not counted (see Host lateness).
//
// With Low < High (hysteresis) a suspected peer is trusted again only at a
// heartbeat that arrives while its level is below Low, and leaves it below
// Low. Every detector's level falls to about 0 at a heartbeat, so it is the
// level at arrival (before the detector takes the heartbeat in) that holds
// the suspicion: the heartbeat ending a silence does not trust; one that
// then comes early enough does. A peer whose heartbeats keep arriving
// between Low and High stays suspected instead of flapping.
//
// Transitions are found when a heartbeat arrives, when a peer is queried and
// when Sweep runs (Run calls it from a ticker). Each Transition carries the
// instant it took effect (At: the freshness point for a suspicion, the
// arrival for a trust), which does not depend on how often the monitor looks,
// and the instant it was found.
//
// # Restarts
//
// A heartbeat with a larger incarnation (generation) number than the peer's
// current one means the peer restarted: its detector is replaced by a fresh
// one from the factory, so the statistics of the old incarnation (and the
// long outage before the restart) do not poison the new one. Heartbeats of an
// older incarnation are rejected with ErrStaleIncarnation.
//
// # Local-pause guard
//
// When the monitoring process itself is paused (a long GC, SIGSTOP, a VM
// migration), every peer looks late when it resumes. Like Apache Cassandra's
// FailureDetector (docs/algorithms.md, “φ accrual: Cassandra's variant”), the
// monitor measures the gap between its own consecutive Sweep calls; a gap
// longer than Config.PauseLimit (default 5 s) starts a grace period of
// Config.PauseGrace (default 5 s) during which nobody is convicted. Heartbeats
// and trusts proceed normally. The guard is driven by Sweep: run Run (or call
// Sweep regularly) to use it. A heartbeat or query that would convict a peer
// more than PauseLimit after the last Sweep also starts the grace period, since
// after a stall the goroutine handling heartbeats often runs before the
// sweeping one.
//
// # Host lateness
//
// A heartbeat that reached the socket in time is still judged late when the
// monitoring host runs late: the kernel did not schedule the process, the Go
// runtime stopped the world, or the goroutine reading the socket waited
// behind others. The monitor measures its own lateness with a
// lateness.Meter (Config.Lateness; Run feeds it with how late each sweep
// fires and, once a second, the Go runtime's pause and scheduling
// histograms) and waits the meter's Bound, the largest lateness of the last
// 10 s (at most 5 s), past a freshness point before it convicts: a trusted
// peer is suspected once now > τ + Bound. A crash is found up to Bound
// later; the suspicion still takes effect at τ (Transition.At). A heartbeat
// that arrives within the margin leaves the peer trusted and is counted
// (Excused). This is the local-pause guard below for the millisecond-scale
// lateness of a busy host; Config.IgnoreHostLateness turns it off, and
// with it off (or a meter that measured nothing, as in tests that do not
// call Run) the transitions are exactly the mistakes of trace replay.
// Monitor.Lateness exposes the measurements; promfd exports them.
//
// # Time
//
// The monitor reads time only from its Clock (default: the monotonic clock,
// time.Since a fixed start, so wall-clock steps never cause suspicion).
// Tests inject a ManualClock. HeartbeatAt lets a caller share one clock
// reading among several monitors.
//
// Throughput with 100,000 peers, and the command that measures it, is in
// docs/experiments.md, “Monitor throughput”.
package monitor
