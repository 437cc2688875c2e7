// Package kappa implements the κ accrual failure detector of N. Hayashibara,
// X. Défago and T. Katayama ("Flexible failure detection with κ-FD", JAIST
// research report IS-RR-2004-006, 2004; N. Hayashibara and M. Takizawa,
// ICDCS Workshops 2006).
//
// Every heartbeat that is expected but has not arrived contributes a value
// in [0, 1] that grows with its lateness, and the suspicion level κ is the
// sum of the contributions: roughly, the number of heartbeats that have
// probably been missed. A threshold of K suspects once about K heartbeats
// are missing.
//
// Choices made where the papers leave room (see docs/algorithms.md, “κ-FD”):
//   - Expected arrivals are NFD-E's (package chen): EA_i = EA_{ℓ+1} +
//     (i − ℓ − 1)·Δ for every i > ℓ, from sequence numbers, so that losses
//     and reordering do not bias them. Only heartbeats after the newest one
//     received count as missing: an older lost heartbeat is not evidence of
//     a crash once a newer one has arrived.
//   - The contribution of heartbeat i is the probability that it would
//     have arrived by t if arrivals scatter normally around their expected
//     arrivals: Φ((t − EA_i)/σ), with σ the standard deviation of the
//     window's A_j − Δ·s_j (at least MinStdDev, default Δ/100). This is the
//     complement of φ's P_later applied to each missing heartbeat. The
//     alternative ContributionStep counts a heartbeat fully as soon as it
//     is overdue (t > EA_i), the "k missed heartbeats" rule of many
//     systems, which makes κ-FD NFD-E with α = (⌈K⌉ − 1)·Δ.
//   - The default threshold is 2.5. With the normal contribution and
//     σ ≪ Δ, κ is a staircase, κ ≈ ⌊u⌋ + Φ((u − ⌊u⌋)/s) with u = (t −
//     EA_{ℓ+1})/Δ and s = σ/Δ: a half-integer K = k + 1/2 is reached at
//     τ ≈ EA_{ℓ+1} + k·Δ where κ is steep, while an integer K lies on a
//     plateau where κ is within float64 rounding of K over a wide range of
//     t, so that τ is ill-conditioned there (it is still exact for Level).
//     K = 2.5 waits about two intervals past the expected arrival: a single
//     lost heartbeat, the most common cause of mistakes on the LIP6 traces,
//     does not make the process suspected.
//   - Sums are exact over the terms within 9σ of t; terms further late
//     count 1 and terms further early 0 (both exact in float64). When σ
//     exceeds 4Δ (a window holding an outage), the sum of about 18σ/Δ
//     terms is replaced by its integral with the first Euler–Maclaurin
//     correction, whose error is of order 10⁻³·(Δ/σ)³ (below 2·10⁻⁵).
package kappa
