package monitor_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFixedSuspectAndTrust(t *testing.T) {
	clk := &monitor.ManualClock{}
	rec := &recorder{}
	m, err := monitor.New(monitor.Config{Factory: fixedFactory(300 * time.Millisecond), Clock: clk, OnTransition: rec.add})
	require.NoError(t, err)
	for i, at := range []float64{0, 100, 200} {
		clk.Set(ms(at))
		require.NoError(t, m.Heartbeat("a", monitor.Beat{Seq: uint64(i), HasSeq: true}))
	}
	clk.Set(ms(350))
	st, ok := m.State("a")
	require.True(t, ok)
	assert.Equal(t, monitor.Trusted, st.Status)
	assert.InDelta(t, 0.5, st.Level, 1e-12) // (350-200)/300
	assert.Equal(t, ms(500), st.FreshnessPoint)
	assert.True(t, st.HasFreshnessPoint)
	assert.Equal(t, uint64(3), st.Heartbeats)

	clk.Set(ms(500))
	s, _ := m.Status("a")
	assert.Equal(t, monitor.Trusted, s, "strict: not suspected at τ")
	clk.Set(ms(700))
	s, _ = m.Status("a")
	assert.Equal(t, monitor.Suspected, s)
	clk.Set(ms(900))
	require.NoError(t, m.Heartbeat("a", monitor.Beat{Seq: 3, HasSeq: true}))
	s, _ = m.Status("a")
	assert.Equal(t, monitor.Trusted, s)

	ts := rec.all()
	require.Len(t, ts, 2)
	assert.Equal(t, monitor.Transition{Peer: "a", Old: monitor.Trusted, New: monitor.Suspected,
		Cause: monitor.CauseFreshness, Level: 500.0 / 300, At: ms(500), Found: ms(700), Number: 1}, ts[0])
	assert.Equal(t, monitor.Transition{Peer: "a", Old: monitor.Suspected, New: monitor.Trusted,
		Cause: monitor.CauseHeartbeat, Level: 0, At: ms(900), Found: ms(900), Number: 2}, ts[1])

	_, ok = m.Status("nobody")
	assert.False(t, ok)
	assert.Equal(t, 1, m.Len())
	assert.True(t, m.Remove("a"))
	assert.False(t, m.Remove("a"))
	assert.Equal(t, 0, m.Len())
}

// A suspicion found only at the next heartbeat (no query in between) is
// reported with the instant it took effect, and the heartbeat then ends it.
func TestSuspicionFoundByHeartbeat(t *testing.T) {
	clk := &monitor.ManualClock{}
	rec := &recorder{}
	m, _ := monitor.New(monitor.Config{Factory: fixedFactory(300 * time.Millisecond), Clock: clk, OnTransition: rec.add})
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
	clk.Set(ms(1000))
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
	ts := rec.all()
	require.Len(t, ts, 2)
	assert.Equal(t, ms(300), ts[0].At)
	assert.Equal(t, ms(1000), ts[0].Found)
	assert.Equal(t, monitor.Suspected, ts[0].New)
	assert.Equal(t, ms(1000), ts[1].At)
	assert.Equal(t, monitor.Trusted, ts[1].New)
}

// Stale and duplicate sequence numbers neither move the freshness point nor
// end a suspicion (docs/algorithms.md, “Replaying a trace”).
func TestStaleHeartbeatDoesNotTrust(t *testing.T) {
	clk := &monitor.ManualClock{}
	m, _ := monitor.New(monitor.Config{Factory: fixedFactory(100 * time.Millisecond), Clock: clk})
	require.NoError(t, m.Heartbeat("a", monitor.Beat{Seq: 5, HasSeq: true}))
	clk.Set(ms(150))
	require.NoError(t, m.Heartbeat("a", monitor.Beat{Seq: 4, HasSeq: true}))
	s, _ := m.Status("a")
	assert.Equal(t, monitor.Suspected, s)
	st, _ := m.State("a")
	assert.Equal(t, ms(100), st.FreshnessPoint)
	assert.Equal(t, uint64(1), st.Heartbeats)
	require.NoError(t, m.Heartbeat("a", monitor.Beat{Seq: 6, HasSeq: true}))
	s, _ = m.Status("a")
	assert.Equal(t, monitor.Trusted, s)
}

// A binary detector whose new freshness point is already past at the arrival
// leaves the peer suspected, as replay does (docs/algorithms.md, “Replaying a
// trace”, "after == S").
func TestFreshnessPointBeforeArrival(t *testing.T) {
	clk := &monitor.ManualClock{}
	off := 100 * time.Millisecond
	rec := &recorder{}
	m, err := monitor.New(monitor.Config{Clock: clk, OnTransition: rec.add,
		Factory: func() (detector.Detector, error) { return &earlyTau{offset: &off}, nil }})
	require.NoError(t, err)
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
	clk.Set(ms(50))
	off = -10 * time.Millisecond
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
	st, _ := m.State("a")
	assert.Equal(t, monitor.Suspected, st.Status)
	assert.True(t, math.IsInf(st.Level, 1))
	ts := rec.all()
	require.Len(t, ts, 1)
	assert.Equal(t, ms(50), ts[0].At, "T→S right at the arrival")
	off = 100 * time.Millisecond
	clk.Set(ms(60))
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
	s, _ := m.Status("a")
	assert.Equal(t, monitor.Trusted, s)
}

func TestHysteresis(t *testing.T) {
	base := 0.0
	factory := func() (detector.Detector, error) {
		return &rampAccrual{unit: 100 * time.Millisecond, threshold: 8, base: &base}, nil
	}
	run := func(low float64) []monitor.Status {
		clk := &monitor.ManualClock{}
		m, err := monitor.New(monitor.Config{Factory: factory, Clock: clk, Low: low})
		require.NoError(t, err)
		base = 0
		require.NoError(t, m.Heartbeat("p", monitor.Beat{}))
		var got []monitor.Status
		clk.Set(ms(800)) // level 8: not yet above High
		s, _ := m.Status("p")
		got = append(got, s)
		clk.Set(ms(801))
		s, _ = m.Status("p")
		got = append(got, s)
		base = 5 // a heartbeat leaves the level at 5: between Low and High
		clk.Set(ms(900))
		require.NoError(t, m.Heartbeat("p", monitor.Beat{}))
		s, _ = m.Status("p")
		got = append(got, s)
		base = 3 // below Low after the heartbeat, but it arrived at level 5.5
		clk.Set(ms(950))
		require.NoError(t, m.Heartbeat("p", monitor.Beat{}))
		s, _ = m.Status("p")
		got = append(got, s)
		clk.Set(ms(960)) // arrives at level 3.1, leaves it at 3: both below Low
		require.NoError(t, m.Heartbeat("p", monitor.Beat{}))
		s, _ = m.Status("p")
		got = append(got, s)
		return got
	}
	T, S := monitor.Trusted, monitor.Suspected
	assert.Equal(t, []monitor.Status{T, S, S, S, T}, run(4), "High 8, Low 4: level 5 keeps the suspicion")
	assert.Equal(t, []monitor.Status{T, S, T, T, T}, run(0), "no hysteresis: level 5 < 8 trusts again")

	_, err := monitor.New(monitor.Config{Factory: factory, Low: 9})
	assert.Error(t, err, "Low above the detector's threshold")
	_, err = monitor.New(monitor.Config{Factory: factory, High: 4, Low: 5})
	assert.Error(t, err)
}

// For a binary detector the level is elapsed/(τ − T_last); High scales the
// timeout.
func TestBinaryHighScalesTimeout(t *testing.T) {
	clk := &monitor.ManualClock{}
	m, err := monitor.New(monitor.Config{Factory: fixedFactory(100 * time.Millisecond), Clock: clk, High: 2, Low: 1})
	require.NoError(t, err)
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
	st, _ := m.State("a")
	assert.Equal(t, ms(200), st.FreshnessPoint)
	clk.Set(ms(150))
	st, _ = m.State("a")
	assert.Equal(t, monitor.Trusted, st.Status, "the detector alone would suspect at 150 ms")
	assert.InDelta(t, 1.5, st.Level, 1e-12)
	clk.Set(ms(201))
	s, _ := m.Status("a")
	assert.Equal(t, monitor.Suspected, s)
}

func TestRestartResetsHistory(t *testing.T) {
	clk := &monitor.ManualClock{}
	rec := &recorder{}
	made := 0
	factory := func() (detector.Detector, error) {
		made++
		return detector.NewFixed(detector.FixedConfig{Timeout: new(300 * time.Millisecond)})
	}
	m, err := monitor.New(monitor.Config{Factory: factory, Clock: clk, OnTransition: rec.add})
	require.NoError(t, err)
	assert.Equal(t, 1, made, "New probes the factory once")
	for i := range 5 {
		clk.Set(ms(float64(100 * i)))
		require.NoError(t, m.Heartbeat("a", monitor.Beat{Incarnation: 7, Seq: uint64(100 + i), HasSeq: true}))
	}
	assert.Equal(t, 2, made)
	clk.Set(ms(5000)) // a long outage: the peer is suspected
	s, _ := m.Status("a")
	assert.Equal(t, monitor.Suspected, s)
	// It restarts with a new incarnation and sequence numbers from 0: a
	// sequence-aware detector would ignore them without the reset.
	require.NoError(t, m.Heartbeat("a", monitor.Beat{Incarnation: 8, Seq: 0, HasSeq: true}))
	assert.Equal(t, 3, made, "a fresh detector for the new incarnation")
	st, _ := m.State("a")
	assert.Equal(t, monitor.Trusted, st.Status)
	assert.Equal(t, uint64(8), st.Incarnation)
	assert.Equal(t, uint64(1), st.Heartbeats)
	assert.Equal(t, ms(5300), st.FreshnessPoint)
	ts := rec.all()
	require.Len(t, ts, 2)
	assert.Equal(t, monitor.CauseRestart, ts[1].Cause)
	assert.Equal(t, uint64(8), ts[1].Incarnation)
	assert.Equal(t, ms(5000), ts[1].At)
	// Heartbeats of the old incarnation are rejected.
	err = m.Heartbeat("a", monitor.Beat{Incarnation: 7, Seq: 200, HasSeq: true})
	assert.ErrorIs(t, err, monitor.ErrStaleIncarnation)
	st, _ = m.State("a")
	assert.Equal(t, uint64(1), st.Heartbeats)
}

func TestLocalPauseGuard(t *testing.T) {
	m, clk, rec := steadyPair(t)
	// The monitor freezes for 6 s (> the 5 s limit): both peers look dead.
	clk.Set(8 * time.Second)
	assert.Equal(t, 0, m.Sweep(), "nobody convicted right after a local pause")
	assert.True(t, m.InGrace())
	assert.Equal(t, uint64(1), m.LocalPauses())
	s, _ := m.Status("a")
	assert.Equal(t, monitor.Trusted, s, "queries convict nobody during the grace period")
	// b resumes; a really is dead.
	for at := 8 * time.Second; at < 13*time.Second; at += 100 * time.Millisecond {
		clk.Set(at)
		require.NoError(t, m.Heartbeat("b", monitor.Beat{}))
		assert.Equal(t, 0, m.Sweep())
	}
	clk.Set(13*time.Second - 1) // the grace period is [8 s, 13 s)
	assert.Equal(t, 0, m.Sweep())
	clk.Set(13 * time.Second)
	assert.Equal(t, 1, m.Sweep())
	assert.False(t, m.InGrace())
	ts := rec.all()
	require.Len(t, ts, 1)
	assert.Equal(t, "a", ts[0].Peer)
	assert.Equal(t, 13*time.Second, ts[0].At, "held-back conviction takes effect at the end of the grace period")
	s, _ = m.Status("b")
	assert.Equal(t, monitor.Trusted, s)

	// A gap of exactly the limit is not a pause; with the guard disabled the
	// same freeze convicts at once.
	m2, _ := monitor.New(monitor.Config{Factory: fixedFactory(time.Second), Clock: clk, PauseLimit: new(time.Duration(0))})
	clk.Set(0)
	require.NoError(t, m2.Heartbeat("a", monitor.Beat{}))
	m2.Sweep()
	clk.Set(6 * time.Second)
	assert.Equal(t, 1, m2.Sweep())
	m3, _ := monitor.New(monitor.Config{Factory: fixedFactory(time.Second), Clock: clk})
	clk.Set(0)
	require.NoError(t, m3.Heartbeat("a", monitor.Beat{}))
	m3.Sweep()
	clk.Set(5 * time.Second)
	assert.Equal(t, 1, m3.Sweep(), "a 5 s gap is not longer than the 5 s limit")
	assert.Equal(t, uint64(0), m3.LocalPauses())
}

// Between heartbeats the level never decreases and is never NaN or
// negative; at a heartbeat a binary level falls back to 0.
func TestLevelProperties(t *testing.T) {
	clk := &monitor.ManualClock{}
	m, _ := monitor.New(monitor.Config{Factory: fixedFactory(250 * time.Millisecond), Clock: clk})
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
	prev := -1.0
	for at := time.Duration(0); at < 2*time.Second; at += 7 * time.Millisecond {
		clk.Set(at)
		l, ok := m.Level("a")
		require.True(t, ok)
		assert.False(t, math.IsNaN(l))
		assert.GreaterOrEqual(t, l, max(prev, 0))
		prev = l
	}
	// It does grow: elapsed over timeout at the last instant, 1995 ms.
	assert.InDelta(t, 1995.0/250, prev, 1e-12)
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
	l, _ := m.Level("a")
	assert.Equal(t, 0.0, l)
	// The clock going backwards (a broken Clock) gives level 0, not negative.
	clk.Set(0)
	l, _ = m.Level("a")
	assert.Equal(t, 0.0, l)
}

func TestConfigErrors(t *testing.T) {
	bad := []monitor.Config{
		{High: -1},
		{High: math.NaN()},
		{Low: -1},
		{Low: 2}, // above the fixed detector's High of 1
		{Shards: -1},
		{Shards: 1 << 20},
		{PauseGrace: new(-time.Second)}, {PauseLimit: new(-time.Second)},
		{Factory: func() (detector.Detector, error) { return nil, errors.New("boom") }},
		{Factory: func() (detector.Detector, error) { return nil, nil }},
	}
	for i, c := range bad {
		_, err := monitor.New(c)
		assert.Error(t, err, "config %d", i)
	}
	m, err := monitor.New(monitor.Config{Shards: 3})
	require.NoError(t, err)
	assert.ErrorIs(t, m.Heartbeat("", monitor.Beat{}), monitor.ErrEmptyPeer)

	// A factory that fails after New: the heartbeat is refused with an error.
	calls := 0
	m, err = monitor.New(monitor.Config{Factory: func() (detector.Detector, error) {
		calls++
		if calls > 1 {
			return nil, errors.New("out of detectors")
		}
		return detector.NewFixed(detector.FixedConfig{})
	}})
	require.NoError(t, err)
	assert.ErrorContains(t, m.Heartbeat("x", monitor.Beat{}), "out of detectors")
	assert.Equal(t, 0, m.Len())
}

func TestRun(t *testing.T) {
	m, _ := monitor.New(monitor.Config{Factory: fixedFactory(20 * time.Millisecond)})
	assert.Error(t, m.Run(context.Background(), 0))
	// Sweeps at least PauseLimit apart would each start a grace period.
	assert.ErrorContains(t, m.Run(context.Background(), monitor.DefaultPauseLimit), "PauseLimit")
	rec := make(chan monitor.Transition, 4)
	m, _ = monitor.New(monitor.Config{Factory: fixedFactory(20 * time.Millisecond),
		OnTransition: func(tr monitor.Transition) { rec <- tr }})
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx, 5*time.Millisecond) }()
	select {
	case tr := <-rec:
		assert.Equal(t, monitor.Suspected, tr.New, "the sweeper found the suspicion with no query")
	case <-time.After(5 * time.Second):
		t.Fatal("no transition from the sweeper")
	}
	cancel()
	assert.NoError(t, <-done)
}

func TestStrings(t *testing.T) {
	assert.Equal(t, "unknown", monitor.Unknown.String())
	assert.Equal(t, "trusted", monitor.Trusted.String())
	assert.Equal(t, "suspected", monitor.Suspected.String())
	assert.Equal(t, "Status(9)", monitor.Status(9).String())
	assert.Equal(t, "freshness-point", monitor.CauseFreshness.String())
	assert.Equal(t, "heartbeat", monitor.CauseHeartbeat.String())
	assert.Equal(t, "restart", monitor.CauseRestart.String())
}

func TestHandle(t *testing.T) {
	clk := &monitor.ManualClock{}
	m, _ := monitor.New(monitor.Config{Factory: fixedFactory(100 * time.Millisecond), Clock: clk})
	_, err := m.Handle("", 0)
	assert.ErrorIs(t, err, monitor.ErrEmptyPeer)
	h, err := m.Handle("a", 3)
	require.NoError(t, err)
	assert.Equal(t, "a", h.Peer())
	st := h.State()
	assert.Equal(t, monitor.Trusted, st.Status)
	assert.False(t, st.HasFreshnessPoint, "no heartbeat yet")
	require.NoError(t, h.Heartbeat(monitor.Beat{Incarnation: 3}))
	clk.Set(ms(101))
	assert.Equal(t, monitor.Suspected, h.Status())
	s, _ := m.Status("a")
	assert.Equal(t, monitor.Suspected, s, "same peer by name")
	assert.ErrorIs(t, h.Heartbeat(monitor.Beat{Incarnation: 2}), monitor.ErrStaleIncarnation)
	require.NoError(t, h.HeartbeatAt(monitor.Beat{Incarnation: 3}, ms(150)))
	assert.Equal(t, monitor.Trusted, h.Status())
	h2, _ := m.Handle("a", 0)
	assert.Equal(t, uint64(3), h2.State().Incarnation)
}

func TestMaxPeers(t *testing.T) {
	_, err := monitor.New(monitor.Config{MaxPeers: -1})
	assert.Error(t, err)
	m, err := monitor.New(monitor.Config{MaxPeers: 2})
	require.NoError(t, err)
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
	require.NoError(t, m.Heartbeat("b", monitor.Beat{}))
	assert.ErrorIs(t, m.Heartbeat("c", monitor.Beat{}), monitor.ErrTooManyPeers)
	_, err = m.Handle("c", 0)
	assert.ErrorIs(t, err, monitor.ErrTooManyPeers)
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}), "known peers still beat")
	assert.Equal(t, 2, m.Len())
	assert.True(t, m.Remove("a"))
	require.NoError(t, m.Heartbeat("c", monitor.Beat{}))
	assert.Equal(t, 2, m.Len())
}

// After a local pause the goroutine handling heartbeats often runs before
// the sweeping one: the first heartbeat (or query) after the stall must not
// convict its peer (fdbeat recv stopped for 7 s suspected every sender on
// every detector, one suspicion and one trust each).
func TestLocalPauseSeenByHeartbeatBeforeSweep(t *testing.T) {
	m, clk, rec := steadyPair(t)
	clk.Set(9 * time.Second) // frozen 7 s; b's queued heartbeat is handled first
	require.NoError(t, m.Heartbeat("b", monitor.Beat{}))
	s, _ := m.Status("a")
	assert.Equal(t, monitor.Trusted, s)
	assert.Equal(t, 0, m.Sweep())
	assert.Empty(t, rec.all(), "nobody convicted right after a local pause")
	assert.Equal(t, uint64(1), m.LocalPauses())
	assert.True(t, m.InGrace())
	// a is really gone: convicted when the grace period [9 s, 14 s) ends.
	for at := 9 * time.Second; at <= 14*time.Second; at += 100 * time.Millisecond {
		clk.Set(at)
		require.NoError(t, m.Heartbeat("b", monitor.Beat{}))
		m.Sweep()
	}
	ts := rec.all()
	require.Len(t, ts, 1)
	assert.Equal(t, "a", ts[0].Peer)
	assert.Equal(t, 14*time.Second, ts[0].At)

	// Without any Sweep the guard is off: a late heartbeat finds the
	// suspicion first (nothing tells a stall from a silent peer).
	m2, err := monitor.New(monitor.Config{Factory: fixedFactory(time.Second), Clock: clk})
	require.NoError(t, err)
	clk.Set(0)
	require.NoError(t, m2.Heartbeat("a", monitor.Beat{}))
	clk.Set(9 * time.Second)
	s, _ = m2.Status("a")
	assert.Equal(t, monitor.Suspected, s)
}

// Hysteresis with real detectors, whose level falls to about 0 at every
// heartbeat: comparing Low with the level after the heartbeat never held a
// suspicion, so Low changed nothing. A suspected peer is trusted again only
// at a heartbeat that arrives while its level is below Low (one interval on
// time); with Low = High the first fresh heartbeat trusts, as in replay.
func TestHysteresisRealDetectors(t *testing.T) {
	// Fixed timeout 100 ms, High 1 (the freshness point), Low 0.5: a gap
	// must be shorter than 50 ms to trust again.
	arrivals := []float64{0, 250, 330, 370, 420}
	run := func(low float64) []monitor.Status {
		clk := &monitor.ManualClock{}
		m, err := monitor.New(monitor.Config{Factory: fixedFactory(100 * time.Millisecond), Clock: clk, Low: low})
		require.NoError(t, err)
		var got []monitor.Status
		for i, a := range arrivals {
			clk.Set(ms(a))
			require.NoError(t, m.Heartbeat("p", monitor.Beat{Seq: uint64(i), HasSeq: true}))
			s, _ := m.Status("p")
			got = append(got, s)
		}
		return got
	}
	T, S := monitor.Trusted, monitor.Suspected
	assert.Equal(t, []monitor.Status{T, T, T, T, T}, run(0), "no hysteresis: every fresh heartbeat trusts")
	// 250: late (level 2.5); 330: gap 80 ms, level 0.8 ≥ 0.5; 370: gap
	// 40 ms, level 0.4 < 0.5: trusted; 420: gap 50 ms, level 0.5 < High.
	assert.Equal(t, []monitor.Status{T, S, S, T, T}, run(0.5), "Low 0.5")

	// φ: a peer that comes back after a silence is trusted again at the
	// first heartbeat whose φ at arrival is below Low.
	clk := &monitor.ManualClock{}
	rec := &recorder{}
	m, err := monitor.New(monitor.Config{Clock: clk, Low: 1, OnTransition: rec.add, Factory: func() (detector.Detector, error) {
		return phi.NewNormal(phi.NormalConfig{WindowSize: 50, Threshold: 8, BootstrapInterval: new(100 * time.Millisecond),
			MinStdDev: new(10 * time.Millisecond)})
	}})
	require.NoError(t, err)
	at := time.Duration(0)
	for i := range 30 {
		clk.Set(at)
		require.NoError(t, m.Heartbeat("p", monitor.Beat{Seq: uint64(i), HasSeq: true}))
		at += 100 * time.Millisecond
	}
	at += time.Second // silence: suspected
	clk.Set(at)
	s, _ := m.Status("p")
	require.Equal(t, S, s)
	require.NoError(t, m.Heartbeat("p", monitor.Beat{Seq: 30, HasSeq: true}))
	s, _ = m.Status("p")
	assert.Equal(t, S, s, "the heartbeat ending the silence arrived at φ ≥ Low")
	at += 100 * time.Millisecond
	clk.Set(at)
	require.NoError(t, m.Heartbeat("p", monitor.Beat{Seq: 31, HasSeq: true}))
	s, _ = m.Status("p")
	assert.Equal(t, T, s, "the next one came on time")
	ts := rec.all()
	require.Len(t, ts, 2)
	assert.Equal(t, at, ts[1].At)
	assert.Less(t, ts[1].Level, 1.0)
}

// steadyPair returns a monitor (fixed 1 s timeouts, a manual clock, a
// transition recorder) after 2 s of heartbeats from a and b with a sweep
// every 100 ms, none of which found anything to do.
func steadyPair(t *testing.T) (*monitor.Monitor, *monitor.ManualClock, *recorder) {
	t.Helper()
	clk := &monitor.ManualClock{}
	rec := &recorder{}
	m, err := monitor.New(monitor.Config{Factory: fixedFactory(time.Second), Clock: clk, OnTransition: rec.add})
	require.NoError(t, err)
	for at := time.Duration(0); at <= 2*time.Second; at += 100 * time.Millisecond {
		clk.Set(at)
		require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
		require.NoError(t, m.Heartbeat("b", monitor.Beat{}))
		assert.Equal(t, 0, m.Sweep())
	}
	return m, clk, rec
}
