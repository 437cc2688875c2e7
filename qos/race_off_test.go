//go:build !race

package qos

const raceOn = false
