// Package twowfd implements 2W-FD, the two-window failure detector of
// L. Tomsic, P. Sens, J. Garcia, L. Arantes and J. Sopena ("2W-FD: A
// failure detector algorithm with QoS", IEEE IPDPS 2015, pp. 885–893).
//
// 2W-FD runs Chen, Toueg and Aguilera's NFD-E expected-arrival estimate
// (package chen) over two windows of the most recent heartbeats, a short
// one of n1 and a long one of n2, and waits for the later of the two
// estimates plus a constant safety margin α:
//
//	τ_{ℓ+1} = max(EA^(n1)_{ℓ+1}, EA^(n2)_{ℓ+1}) + α
//
// The long window gives a stable estimate while the network is steady; the
// short one follows a sudden increase of the delay within n1 heartbeats, so
// that the detector does not keep suspecting for about n2 heartbeats as
// NFD-E does after a delay step (see docs/algorithms.md, “2W-FD”).
//
// Choices made where the paper leaves room:
//   - The windows default to n1 = 1 and n2 = 1000. The long window is the
//     window of Chen's and the φ detector's experiments on the same
//     PlanetLab traces, so that 2W-FD and NFD-E differ only by the short
//     window; n1 = 1 reacts at the very next heartbeat. A short window of a
//     few heartbeats (for example 10) reacts a little later but is not
//     moved by a single late heartbeat: set Config.ShortWindowSize.
//   - Everything else (Δ, sequence numbers, losses, duplicates, late
//     heartbeats, restarts, warm-up) is NFD-E's, from chen.Estimator: both
//     estimators see every heartbeat.
package twowfd
