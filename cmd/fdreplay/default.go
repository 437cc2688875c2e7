package main

import (
	"time"

	"github.com/fdkit/fdkit/trace"
)

// loadDefault returns the embedded default trace.
func loadDefault() (string, []trace.Record, time.Duration, error) {
	p, err := trace.LookupPreset("jitter")
	if err != nil {
		return "", nil, 0, err
	}
	recs, err := trace.Generate(p.Config, trace.NewRand(1))
	return "preset jitter", recs, p.Config.Interval, err
}
