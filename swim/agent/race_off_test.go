//go:build !race

package agent

const raceOn = false
