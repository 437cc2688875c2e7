package monitor_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A backward step of the caller's clock through HeartbeatAt records no
// sample of zero or less. Heartbeats every 100 ms up to 1 s, then the clock
// steps back 500 ms and goes on: the five heartbeats at 0.6–1.0 s (again;
// 1.0 s equals the last arrival) are dropped and counted, the window holds only the ten 100 ms intervals
// before the step and the positive ones after the clock caught up: a
// backward arrival taken as equal to the last would feed the detector
// zero-length intervals.
func TestBackwardClockStepRecordsNoSample(t *testing.T) {
	var det *phi.Normal
	m, err := monitor.New(monitor.Config{Factory: func() (detector.Detector, error) {
		d, err := phi.NewNormal(phi.NormalConfig{WindowSize: 100, SkipIfSuspected: new(false)})
		det = d
		return d, err
	}})
	require.NoError(t, err)
	beat := func(seq uint64, at time.Duration) {
		require.NoError(t, m.HeartbeatAt("p", monitor.Beat{Seq: seq, HasSeq: true}, at))
	}
	seq := uint64(0)
	for i := 0; i <= 10; i++ {
		beat(seq, time.Duration(i)*100*time.Millisecond)
		seq++
	}
	for i := 6; i <= 15; i++ { // the clock stepped back 500 ms
		beat(seq, time.Duration(i)*100*time.Millisecond)
		seq++
	}
	w := det.Window()
	for i := range w.Len() {
		assert.Positive(t, w.At(i), "sample %d", i)
	}
	assert.Equal(t, 15, w.Len(), "10 before the step, 5 after the clock caught up (1.1–1.5 s)")
	assert.Equal(t, uint64(5), m.BackwardArrivals())
	st, ok := m.State("p")
	require.True(t, ok)
	assert.Equal(t, uint64(5), st.BackwardArrivals)
	assert.Equal(t, uint64(16), st.Heartbeats)
	assert.Equal(t, 1500*time.Millisecond, st.LastArrival)
}
