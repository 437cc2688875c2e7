package main

import (
	"time"

	"github.com/fdkit/fdkit/qos"
)

// sfdTargets returns the SFD targets: the tuner's when any is set, else
// TD ≤ 10Δ, MR ≤ 1 per minute, QAP ≥ 0.999.
func sfdTargets(t qos.Targets, interval time.Duration) qos.Targets {
	if t != (qos.Targets{}) {
		return t
	}
	return qos.Targets{MaxTD: 10 * interval, MaxMRPerSecond: 1.0 / 60, MinQAP: 0.999}
}
