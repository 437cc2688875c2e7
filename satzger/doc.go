// Package satzger implements the adaptive accrual failure detector of
// B. Satzger, A. Pietzowski, W. Trumler and T. Ungerer ("A new adaptive
// accrual failure detector for dependable distributed systems", ACM SAC
// 2007, pp. 551–555).
//
// It assumes no distribution: the suspicion level is the fraction of the
// recent inter-arrival times that are no longer than the (scaled) time
// elapsed since the newest heartbeat, an empirical probability that the
// heartbeat would already have arrived, compared with a threshold in
// (0, 1]. The freshness point is an order statistic of the window, so τ is
// piecewise constant in the threshold: qos sweeps it by evaluating every
// threshold on one shared window (see docs/algorithms.md, “Satzger's
// adaptive accrual detector”).
//
// Choices made where the paper leaves room:
//   - Scale c: the time elapsed is multiplied by c before it is compared
//     with the samples, so that τ = T_last + I_(m)/c. Default 0.9, the
//     scaling factor of the public Akka port of this detector: with c < 1
//     even the threshold 1 waits 1/c − 1 = 11 % longer than the longest
//     interval of the window, which absorbs a slowly growing delay; c = 1
//     is the plain empirical distribution of the paper's formula.
//   - Threshold θ: default 0.99, τ = T_last + (99th percentile of the
//     window)/c. A threshold near the median (0.5) suspects about half the
//     heartbeats that are only a little late.
//   - Before the first inter-arrival time, the window is taken to hold the
//     single sample BootstrapInterval (default 1 s, as phi's normal model),
//     so that a process that crashes after one heartbeat is still detected.
//   - Inter-arrival times are those of the heartbeats accepted, in arrival
//     order, as for the φ detectors: a lost heartbeat makes one long
//     interval. Stale and duplicate sequence numbers and arrivals going
//     backwards are ignored; a backwards jump of more than RestartJump
//     sequence numbers is a sender restart: the sequence numbering starts
//     afresh and no interval is recorded across it.
package satzger
