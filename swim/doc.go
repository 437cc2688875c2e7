// Package swim implements the SWIM membership protocol (Das, Gupta,
// Motivala, "SWIM: Scalable Weakly-consistent Infection-style Process Group
// Membership Protocol", DSN 2002) with the Lifeguard extensions (Dadgar,
// Phillips, Currey, "Lifeguard: Local Health Awareness for More Accurate
// Failure Detection", DSN Workshops 2018, arXiv 1707.00788), as specified in
// ALGORITHMS.md section 10.
//
// The message and update types in message.go are the contract with the wire
// codec and the transport: plain structs, kinds numbered for the wire.
package swim
