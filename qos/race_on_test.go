//go:build race

package qos

// raceOn: built with the race detector (see raceFree).
const raceOn = true
