package main

import (
	"time"

	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/traces"
)

// loadDefault returns the embedded default trace (traces.Default) with its
// name and the nominal interval from its header.
func loadDefault() (string, []trace.Record, time.Duration, error) {
	recs, hdr, err := traces.ReadAll(traces.Default)
	if err != nil {
		return "", nil, 0, err
	}
	return "traces/" + traces.Default, recs, hdr.Interval, nil
}
