//go:build race

package agent

// raceOn: the race detector slows the agents tenfold; the flood tests
// use smaller views under it.
const raceOn = true
