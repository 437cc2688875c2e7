// Package jacobson implements the Jacobson/Karels mean and deviation filter
// (V. Jacobson, "Congestion avoidance and control", SIGCOMM 1988, CCR
// 18(4):314–329, appendix A; RFC 6298 §2, 2011) as a reusable Estimator, and
// a heartbeat failure detector that applies it to inter-arrival times
// (docs/algorithms.md, “Jacobson's estimator”).
//
// The Estimator is shared: package bertier filters its expected-arrival
// error with it (gain γ for both mean and deviation, zero initial state) and
// swim filters ping round-trip times with it.
//
// Arithmetic is float64 in nanoseconds: the integer shifts of the 1988 code
// truncate and stop converging, which a detector that runs for days cannot
// afford. Durations handed out are rounded to the nearest nanosecond.
package jacobson
