package lateness_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/fdkit/fdkit/lateness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bound is the largest lateness of the last Window, in slots of Window/10:
// with W = 10 s, a lateness measured in slot [0, 1 s) counts until the
// window reaches slot [10 s, 11 s).
func TestBoundSlidesOverTheWindow(t *testing.T) {
	m, err := lateness.New(lateness.Config{})
	require.NoError(t, err)
	assert.Zero(t, m.Bound())
	ms := time.Millisecond
	m.Observe(0, 30*ms, lateness.Timer)
	assert.Equal(t, 30*ms, m.Bound())
	m.Observe(5*time.Second, 10*ms, lateness.Scheduling)
	assert.Equal(t, 30*ms, m.Bound())
	m.Tick(9900*ms, 9999*ms) // 99 ms late, slot 9
	assert.Equal(t, 99*ms, m.Bound())
	m.Observe(10*time.Second, 0, lateness.Timer) // slot 10: slot 0 leaves
	assert.Equal(t, 99*ms, m.Bound())
	m.Observe(19*time.Second+999*ms, -5*ms, lateness.Timer) // slot 19: only slots 10..19 count
	assert.Zero(t, m.Bound(), "a lateness leaves the window W after its slot")
	st := m.Stats()
	assert.Equal(t, lateness.SourceStats{Count: 2, Max: 99 * ms, Last: 99 * ms, Total: 129 * ms}, st.Sources[lateness.Timer], "non-positive lateness is not counted")
	assert.Equal(t, lateness.SourceStats{Count: 1, Max: 10 * ms, Last: 10 * ms, Total: 10 * ms}, st.Sources[lateness.Scheduling])
	assert.Equal(t, 10*time.Second, st.Window)
	assert.Equal(t, 5*time.Second, st.Cap)
}

// A jump of the instants past the whole window clears it; Bound never
// exceeds Cap; instants before 0 are slots like any others. A lateness counts
// while its slot is among the last ten: for between W − W/10 and W.
func TestBoundCapAndJumps(t *testing.T) {
	m, err := lateness.New(lateness.Config{Window: time.Second, Cap: 200 * time.Millisecond})
	require.NoError(t, err)
	m.Observe(-50*time.Millisecond, time.Hour, lateness.GCPause)
	assert.Equal(t, 200*time.Millisecond, m.Bound())
	m.Observe(850*time.Millisecond, time.Millisecond, lateness.GCPause)
	assert.Equal(t, 200*time.Millisecond, m.Bound(), "slot −1 [−100 ms, 0) is among the ten slots up to slot 8")
	m.Observe(950*time.Millisecond, time.Millisecond, lateness.GCPause)
	assert.Equal(t, time.Millisecond, m.Bound(), "slot 9 pushes slot −1 out")
	m.Observe(time.Hour, 0, lateness.OtherPause)
	assert.Zero(t, m.Bound())
	assert.Equal(t, time.Hour, m.Stats().Sources[lateness.GCPause].Max, "the totals are not capped")
}

func TestNewRefusesNegative(t *testing.T) {
	_, err := lateness.New(lateness.Config{Window: -1})
	assert.ErrorContains(t, err, "Window -1ns is negative")
	_, err = lateness.New(lateness.Config{Cap: -time.Second})
	assert.ErrorContains(t, err, "Cap -1s is negative")
}

// ReadRuntime sees a garbage collection's stop-the-world pauses, and only
// those after its first call.
func TestReadRuntimeSeesGCPauses(t *testing.T) {
	m, err := lateness.New(lateness.Config{})
	require.NoError(t, err)
	runtime.GC()
	m.ReadRuntime(0)
	assert.Zero(t, m.Stats().Sources[lateness.GCPause].Count, "the first read takes the counts as they are")
	runtime.GC()
	m.ReadRuntime(time.Millisecond)
	gc := m.Stats().Sources[lateness.GCPause]
	assert.Equal(t, uint64(1), gc.Count, "one measurement per read: the longest new pause")
	assert.Positive(t, gc.Max)
	assert.Less(t, gc.Max, time.Second)
	assert.GreaterOrEqual(t, m.Bound(), gc.Max)
}

func TestProbe(t *testing.T) {
	m, err := lateness.New(lateness.Config{})
	require.NoError(t, err)
	assert.ErrorContains(t, m.Probe(context.Background(), 0, nil), "probe interval 0s must be positive")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.NoError(t, m.Probe(ctx, time.Millisecond, nil))
	assert.Positive(t, m.Stats().Sources[lateness.Timer].Count, "every tick runs at least a little late")
}

func TestSourceString(t *testing.T) {
	var names []string
	for _, s := range lateness.Sources() {
		names = append(names, s.String())
	}
	assert.Equal(t, []string{"timer", "gc-pause", "other-pause", "scheduling"}, names)
	assert.Equal(t, "Source(9)", lateness.Source(9).String())
}

// Two feeders of one Meter (a monitor's Run and a Probe, or the sweep and
// the socket reader) read their clock before they take the lock, so a
// measurement can arrive an instant older than the newest one. It counts
// like the others and does not push the newer slot out of the window; a
// clock that goes back by more than the window starts the window afresh, as
// a jump forward does.
func TestBoundKeepsNewerSlotsOnAnOlderInstant(t *testing.T) {
	ms := time.Millisecond
	m, err := lateness.New(lateness.Config{}) // slots of 1 s
	require.NoError(t, err)
	m.Observe(5*time.Second, 300*ms, lateness.Timer) // slot 5
	m.Observe(4999*ms, 2*ms, lateness.Scheduling)    // slot 4, read just before
	assert.Equal(t, 300*ms, m.Bound(), "slot 5 still counts")
	m.Observe(4998*ms, 400*ms, lateness.GCPause) // slot 4 again
	assert.Equal(t, 400*ms, m.Bound())
	m.Observe(14500*ms, 0, lateness.Timer) // slot 14: slots 5..14 count
	assert.Equal(t, 300*ms, m.Bound(), "slot 4 left, slot 5 stays")
	m.Observe(4600*ms, 50*ms, lateness.Timer) // slot 4 is outside the newest window
	assert.Equal(t, 50*ms, m.Bound(), "a clock back by more than the window restarts it")
	m.Observe(4700*ms, 0, lateness.Timer)
	assert.Equal(t, 50*ms, m.Bound())
}

// Feeders on several goroutines and readers at once (run with -race): every
// measurement is counted, Bound is the largest, and Probe's goroutine is
// gone once its context is done.
func TestConcurrentFeedersAndProbeStops(t *testing.T) {
	m, err := lateness.New(lateness.Config{})
	require.NoError(t, err)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	probed := make(chan error)
	go func() { probed <- m.Probe(ctx, time.Millisecond, nil) }()
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 1000 {
				m.Observe(time.Duration(i)*time.Millisecond, time.Duration(g*1000+i)*time.Microsecond, lateness.Scheduling)
				_ = m.Bound()
				_ = m.Stats()
			}
		}()
	}
	for range 4 {
		<-done
	}
	cancel()
	require.NoError(t, <-probed)
	st := m.Stats()
	assert.Equal(t, uint64(3999), st.Sources[lateness.Scheduling].Count, "all but the one of 0")
	assert.Equal(t, 3999*time.Microsecond, st.Sources[lateness.Scheduling].Max)
	assert.GreaterOrEqual(t, m.Bound(), 3999*time.Microsecond, "the largest of the window's slots")
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "no goroutine left behind")
}
