package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/fdkit/fdkit/lateness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recv's sweep loop feeds one lateness meter shared by its monitors: every
// sweep tick is a Timer measurement, and the summary reports the maxima
// and the heartbeats excused.
func TestRecvFeedsHostLateness(t *testing.T) {
	sc := sendConfig{Name: "a", Interval: 20 * time.Millisecond, Count: 50, DelayDist: "constant"}
	rc := recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead,
		TableSenders: defaultTableSenders, Interval: 20 * time.Millisecond, Sweep: 5 * time.Millisecond,
		Timeouts: []time.Duration{time.Second}, Phis: []float64{8}, PhiWindow: 100}
	lr := loopback(t, sc, rc, 100*time.Millisecond)
	l := lr.recv.Lateness
	// 1.1 s of 5 ms ticks: 220 on an idle host, fewer when ticks are dropped.
	assert.GreaterOrEqual(t, l.Sources[lateness.Timer].Count, uint64(50))
	assert.Equal(t, lateness.DefaultCap, l.Cap)
	assert.Equal(t, lateness.DefaultWindow, l.Window)
	assert.LessOrEqual(t, l.Bound, l.Cap)

	var out, errs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	require.Equal(t, 0, run(ctx, []string{"recv", "--listen", "127.0.0.1:0", "--refresh", "0"}, &out, &errs), errs.String())
	assert.Contains(t, out.String(), "host lateness (the margin the detectors waited past τ, at most 5s): timer ")
	assert.Contains(t, errs.String(), "msg=\"host lateness at the end\" margin=")
	assert.Contains(t, errs.String(), "clock_origin_unix_ns=")
}
