package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/monitor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A local pause of the receiver (found by the monitors' guard) is logged
// once; before, recv gave the monitors no logger and said nothing.
func TestRecvLogsLocalPause(t *testing.T) {
	clk := &monitor.ManualClock{}
	m, err := monitor.New(monitor.Config{Clock: clk})
	require.NoError(t, err)
	var logs syncBuffer
	r := &receiver{log: slog.New(slog.NewTextHandler(&logs, nil)), mons: []namedMon{{"timeout-1s", m}}}
	m.Sweep()
	r.notePauses()
	clk.Set(7 * time.Second)
	m.Sweep()
	r.notePauses()
	r.notePauses()
	assert.Equal(t, 1, strings.Count(logs.String(), "the receiver itself was paused"), logs.String())
}
