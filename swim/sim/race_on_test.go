//go:build race

package sim

// raceOn: the race detector slows the single-goroutine simulator tenfold
// and finds nothing in it, so the schedule checker runs fewer schedules.
const raceOn = true
