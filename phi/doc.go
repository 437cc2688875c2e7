// Package phi implements the φ accrual failure detector in three models,
// each a detector.Accrual:
//
//   - Normal: Hayashibara, Défago, Yared and Katayama, "The φ accrual failure
//     detector", SRDS 2004 (JAIST IS-RR-2004-010), in the accrual framework of
//     Défago, Urbán, Hayashibara and Katayama, "Definition and specification of
//     accrual failure detectors", DSN 2005. Inter-arrival times are modelled as
//     normal with the window mean μ and standard deviation σ, and φ(t) = −log10
//     Q((t − T_last − μ)/σ), Q the standard normal upper tail
//     (docs/algorithms.md, “φ accrual: normal model”). φ is computed stably
//     (docs/algorithms.md, “Computing φ stably”): finite and accurate far
//     beyond the 15.95 ceiling of the naive −log10(1 − F).
//   - Akka: the variant of Akka's PhiAccrualFailureDetector
//     (docs/algorithms.md, “φ accrual: Akka's variant”): a logistic
//     approximation of Q, a minimum standard deviation, an acceptable heartbeat
//     pause added to the mean, a two-sample bootstrap on the first heartbeat,
//     and intervals recorded only while the process is trusted.
//   - Cassandra: the exponential model of Apache Cassandra's FailureDetector
//     (gms/FailureDetector.java, CASSANDRA-2597; docs/algorithms.md, “φ
//     accrual: Cassandra's variant”): φ = (t − T_last)/(μ ln 10).
//
// The pure functions LevelOfZ and ZOfLevel convert between a standardized
// elapsed time z and the normal-model level; AkkaLevelOfY and AkkaYOfLevel do
// the same for Akka's logistic approximation. The qos package uses ZOfLevel for
// threshold sweeps of the normal model (docs/algorithms.md, “Sweeping a
// parameter in one pass”).
//
// # Common rules
//
// All three detectors are pure (time is passed in; see package detector) and
// share the treatment of awkward input:
//
//   - Stale or duplicate heartbeats (sequence number not greater than the
//     largest seen) are ignored.
//   - A heartbeat whose arrival is earlier than T_last (the monitor's clock
//     went backwards, or reordering without sequence numbers) is ignored: no
//     interval is recorded and T_last stays, so τ never moves backwards. Its
//     sequence number, if any, still counts as seen. Such heartbeats are
//     counted: BackwardArrivals (detector.BackwardCounter).
//   - A heartbeat without sequence number arriving exactly at T_last is not
//     distinguishable from a burst and records a zero interval.
//   - Level(now) with now earlier than T_last uses an elapsed time of 0.
//   - An outage is not learnt by default: no model records, as an ordinary
//     sample, the interval that ends it. Akka and Normal skip an interval
//     that ends after τ (the process was suspected: Akka's rule, kept from
//     its PhiAccrualFailureDetector, where the first heartbeat after a
//     failure is left out of the history); Cassandra skips intervals longer
//     than its cap (fd_max_interval_ms, 2 s). Normal can also cap
//     (MaxInterval). Levels stay finite, and freshness points saturate
//     instead of overflowing.
//   - A rate change is learnt: the relearn rule (RelearnAfter, default K =
//     10, an fdkit addition) records a run of K intervals left out, fewer
//     than K recorded in a row between any two, and every further one left
//     out until K in a row are not, so that a sender that slowed down for
//     good, or now sends in pairs or bursts, is not suspected for ever (docs/algorithms.md,
//     “Not locking out a sender whose rate changed”).
//   - A burst of losses shows as one long interval (Normal can divide it by
//     the sequence gap as an option).
//
// ElapsedFor and FreshnessPoint round the crossing time up to the
// nanosecond: τ is the first whole nanosecond at which the level has reached
// the threshold, and Suspected(now) is now > τ.
package phi
