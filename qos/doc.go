// Package qos replays recorded heartbeat streams through failure detectors and
// measures their quality of service as defined by Chen, Toueg and Aguilera
// ("On the quality of service of failure detectors", IEEE Trans. Computers
// 51(5), 2002): detection time TD, mistake rate MR (per second), query
// accuracy probability QAP, mean mistake duration E[TM], mean mistake
// recurrence time E[TMR] and mean good period E[TG].
//
// # Usage
//
// Replay one detector over one sender's heartbeats, or sweep a family over
// its parameter to draw a TD-vs-MR curve:
//
//	d, _ := chen.New(chen.Config{Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond}})
//	res, err := qos.ReplaySlice(d, heartbeats, qos.Config{})
//	// res.TD.Mean, res.MRPerSecond, res.QAP, res.MeanTM, res.MeanTMR
//
//	fam := qos.ChenFamily(chen.Config{...}, []time.Duration{10 * time.Millisecond, 50 * time.Millisecond})
//	curves, err := qos.Sweep([]qos.Stream{{Name: "p", Heartbeats: heartbeats}}, []qos.Family{fam}, qos.SweepConfig{})
//
// Heartbeats come from package trace (a recorded or generated trace) or are
// built by hand; ExampleReplaySlice and ExampleSweep run these calls.
//
// # Replay
//
// Replay follows docs/algorithms.md, “Replaying a trace”. It makes one pass
// over a stream of detector.Heartbeat in arrival order and never steps time:
// every fdkit detector has a freshness point τ that changes only when a
// heartbeat is observed, so between two arrivals the output is trust until τ
// and suspect after it. The monitored process is alive throughout a recorded
// trace, so every suspicion is a mistake; mistakes are counted as trust→suspect
// transitions and the suspected time is the measure of the suspect periods. TD
// is computed per heartbeat k as if the sender crashed right after sending it:
// TD_k = τ_{k+1} − σ_k (send-based, synchronized clocks) or, when the sender's
// and monitor's clocks are not synchronized (the LIP6 PlanetLab traces), the
// arrival-based TD_k = τ_{k+1} − A_k + d̄ with a configured mean one-way delay
// d̄ (default 0). The Result says which was used. When τ_{k+1} precedes A_k
// (Chen's EA lags after a sender pause) the monitor suspects from A_k, so
// τ_{k+1} is replaced by A_k: TD_k is never below the delay (or d̄), where the
// formula of docs/algorithms.md, “Replaying a trace”, would give a negative TD.
//
// # Sweeps
//
// Sweep computes QoS curves: each detector family over its parameter (fixed
// timeout T, Chen's and 2W-FD's α, the φ threshold Φ, Jacobson's K, SFD's
// initial margin, Satzger's θ, κ-FD's K; Bertier as one point). When the family's detector implements detector.Linear
// (τ = Offset + Scale·p with no feedback of p into the state) the whole curve
// comes from one pass: the slack of every gap is placed among the sorted
// parameter values and prefix-summed (docs/algorithms.md, “Sweeping a parameter
// in one pass”), which answers every value at once (Curve.Method OnePass).
// Akka's φ is not linear, since an interval enters its history only while φ at
// its arrival is below the threshold, but for a fixed history its freshness
// point is: its sweep replays the thresholds that have recorded the same
// intervals as one detector, splits such a group at an arrival whose φ lies
// between its thresholds, and evaluates every threshold of a group from the
// group's state (OnePassGroups; equal to one replay per threshold in every
// field). SFD's margin adapts to its own output, but its expected arrivals do
// not depend on the margin: the NFD-E estimator runs once for all initial
// margins, each margin's control and QoS are then replayed from it
// (SharedEstimator; equal to one replay per margin in every field).
// Satzger's detector and κ-FD are not linear in their thresholds, but their
// state does not depend on them: one detector observes the stream and one
// replay engine per threshold steps through it, reading that threshold's
// freshness point from the shared state (SharedState; equal to one replay per
// threshold in every field; Satzger's thresholds of equal rank are replayed
// once). The normal φ with skip-suspected shares histories between
// thresholds as Akka's does (kept side by side, phi.NormalHistories), and
// reads every threshold's freshness point from them into one such replay
// engine (SharedState). 2W-FD is linear in α (OnePass). Bertier, and these families when
// their method does not apply on a stream, get one replay per point
// (PerPoint). Curve.Method says which method was used.
// Families and streams run in parallel on a bounded pool of goroutines.
//
// # Streams longer than memory
//
// A Stream may give its heartbeats as a Source read again for each pass
// (for example a trace.Spool, a compact temporary file) instead of a
// slice. Its sweeps then run together: each read of the Source feeds every
// family and point at once, so a stream is read a few times (one to
// three), not once per point. Replays of such a Source move their
// per-heartbeat data to unlinked temporary files past the bounds of
// Config.Spill, which also names their directory, so that memory does not
// grow with the stream; the results are the same as in memory.
//
// Curves are written as CSV or JSON, drawn by package qos/figure (MR and
// 1 − QAP against TD, with gonum/plot) and shown in an HTML page by package
// qos/report; qos itself computes and draws nothing. Tune searches curves
// for the setting of each family that meets targets on TD, MR and QAP with
// the smallest TD (docs/algorithms.md, “Tuning a detector to QoS targets”).
// Decide solves each family for its operating point at the targets and
// compares the families there, with a bootstrap that solves the settings
// again in each resample, Holm's correction and a practical threshold, and
// returns a Verdict whose String is fdreplay's last word (docs/algorithms.md,
// “Comparing detectors at an operating point”). Measured results
// of replays and of the confidence intervals' coverage are in
// docs/experiments.md.
package qos
