// Package chen implements NFD-E, the heartbeat failure detector of W. Chen,
// S. Toueg and M. K. Aguilera for processes with unsynchronised, drift-free
// clocks ("On the quality of service of failure detectors", IEEE Trans.
// Computers 51(5):561–580, 2002; DSN 2000), docs/algorithms.md, “Chen's NFD-E”.
//
// It has two exported pieces. Estimator computes the expected arrival
// EA(k) = mean_{j∈W}(A_j − Δ·s_j) + k·Δ from sequence numbers, so that lost,
// duplicated and reordered heartbeats do not bias it; bertier and sfd build on
// it. Detector adds Chen's constant safety margin α: τ_{ℓ+1} = EA_{ℓ+1} + α.
//
// Choices made where the paper leaves room (docs/algorithms.md, “Chen's NFD-E”,
// edge cases):
//   - Δ has a default of 100 ms rather than being required, so that the zero
//     Config is usable; it must be set to the sender's real interval.
//   - Warm-up defaults to a full window (the papers wait for n samples);
//     FreshnessPoint still returns τ during warm-up and WarmingUp is true.
//   - Heartbeats without sequence numbers are numbered by arrival, which is
//     exactly the simplified formula mean(A) + ((n'+1)/2)·Δ.
//   - A late heartbeat enters the window but does not move τ; a backwards
//     jump of more than 100 sequence numbers is a sender restart and resets,
//     and so is a forward jump so large that Δ·(s − s0) would overflow
//     (beyond 2^62 ns, about 146 years of heartbeats).
package chen
