// Package bertier implements the adaptable failure detector of M. Bertier, O.
// Marin and P. Sens ("Implementation and performance evaluation of an adaptable
// failure detector", DSN 2002, 354–363; "Performance analysis of a hierarchical
// failure detector", DSN 2003, 635–644), docs/algorithms.md, “Bertier's
// adaptive margin”.
//
// It combines Chen, Toueg and Aguilera's NFD-E expected arrival (package
// chen) with a dynamic safety margin α = β·delay + φ·var, where delay and
// var are a Jacobson filter (package jacobson) of the error between the
// actual and the expected arrival, with one gain γ. Defaults γ = 0.1, β = 1,
// φ = 4.
//
// Choices where the papers are unsure or silent (docs/algorithms.md,
// “Bertier's adaptive margin”):
//   - After a loss the error compares A_k with EA(k) of the sequence number
//     received (ErrorVsReceived, default); ErrorVsNext is the other reading.
//   - delay and var start at 0, so the first margins are near 0 and the
//     first freshness points too early; WarmingUp is true until the window
//     holds MinSamples samples (default: full), as the literature does.
//   - The "moderation step" of one public implementation (enlarging the
//     timeout after each false suspicion) is not part of the algorithm and
//     is not offered.
package bertier
