package spec

import (
	"strconv"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// restartFamilies are the families with a restart rule (restart-jump).
var restartFamilies = []string{"fixed", "jacobson", "chen", "bertier", "sfd", "2w-fd", "satzger", "kappa"}

// lateStream is 800 heartbeats at Δ = 100 ms, 10–14 ms in the network,
// 450 to 452 lost, and heartbeat 300 arriving 15 s late, 120 ms after 449:
// 149 below the largest number, a sender restart for the rule at its
// default (100), which moves T_last into the gap, and a late heartbeat for
// a stream of one incarnation.
func lateStream() []detector.Heartbeat {
	const delta = 100 * time.Millisecond
	at := func(i int) time.Duration {
		return time.Duration(i)*delta + 10*time.Millisecond + time.Duration(i%5)*time.Millisecond
	}
	var hbs []detector.Heartbeat
	for i := range 800 {
		if i == 300 || i >= 450 && i <= 452 {
			continue
		}
		hbs = append(hbs, detector.Heartbeat{Seq: uint64(i), HasSeq: true, Sent: time.Duration(i) * delta, HasSent: true, Arrival: at(i)})
		if i == 449 {
			hbs = append(hbs, detector.Heartbeat{Seq: 300, HasSeq: true, Sent: 300 * delta, HasSent: true, Arrival: at(449) + 120*time.Millisecond})
		}
	}
	return hbs
}

// A spec for a stream of one incarnation (Stream.Incarnation) prints as
// the live setting and builds its restart rule off while restart-jump is
// unset: its table point and its sweep (one pass where the family has
// one) are those of the spec with restart-jump=2^64−1 (Effective), and not
// the live spec's, which takes the late heartbeat for a restart. A
// restart-jump given is kept. Families without the rule are unchanged.
func TestIncarnationTurnsRestartRuleOff(t *testing.T) {
	live := Stream{Interval: 100 * time.Millisecond, Window: 50, Timeout: 150 * time.Millisecond}
	inc := live
	inc.Incarnation = true
	streams := []qos.Stream{{Name: "s", Heartbeats: lateStream()}}
	sweep := func(f qos.Family) []qos.Point {
		t.Helper()
		c, err := qos.Sweep(streams, []qos.Family{f}, qos.SweepConfig{})
		require.NoError(t, err)
		require.Empty(t, c[0].Err)
		return c[0].Points
	}
	off := strconv.FormatUint(RestartsOff, 10)
	for _, f := range Algorithms() {
		s, l := f.ForStream(inc), f.ForStream(live)
		assert.Equal(t, l.String(), s.String(), f.Name)
		assert.Equal(t, l.Brief(), s.Brief(), f.Name)
		e := s.Effective()
		if _, has := f.Param(RestartJump); !has {
			assert.Equal(t, s.String(), e.String(), f.Name)
			continue
		}
		assert.Contains(t, restartFamilies, f.Name)
		v, set := e.Value(RestartJump)
		assert.Equal(t, []any{off, true}, []any{v, set}, f.Name)
		assert.False(t, s.IsSet(RestartJump), f.Name)
		given, err := s.With(RestartJump, "100")
		require.NoError(t, err)
		v, _ = given.Effective().Value(RestartJump)
		assert.Equal(t, "100", v, f.Name)

		pt, err := s.Point()
		require.NoError(t, err)
		pe, err := e.Point()
		require.NoError(t, err)
		pl, err := l.Point()
		require.NoError(t, err)
		assert.Equal(t, s.String(), pt.Name, f.Name)
		want := sweep(pe)
		assert.Equal(t, want, sweep(pt), f.Name)
		assert.NotEqual(t, want, sweep(pl), "%s: the late heartbeat must matter, or the test is weak", f.Name)
		if f.Swept == "" {
			continue
		}
		w, err := s.DefaultSweep(live.Interval)
		require.NoError(t, err)
		fs, err := w.Family(5)
		require.NoError(t, err)
		w.Spec = e
		fe, err := w.Family(5)
		require.NoError(t, err)
		w.Spec = l
		fl, err := w.Family(5)
		require.NoError(t, err)
		want = sweep(fe)
		assert.Equal(t, want, sweep(fs), f.Name)
		assert.NotEqual(t, want, sweep(fl), f.Name)
	}
	assert.Len(t, restartFamilies, 8)
}

// fixed's sweep over T keeps its restart-jump (qos.FixedFamilyWith): a
// table row of fixed(restart-jump=1000) replays with it.
func TestFixedSweepKeepsRestartJump(t *testing.T) {
	streams := []qos.Stream{{Name: "s", Heartbeats: lateStream()}}
	points := func(text string) []qos.Point {
		t.Helper()
		s, err := Parse(text)
		require.NoError(t, err)
		f, err := s.Point()
		require.NoError(t, err)
		c, err := qos.Sweep(streams, []qos.Family{f}, qos.SweepConfig{})
		require.NoError(t, err)
		return c[0].Points
	}
	on, off := points("fixed(timeout=150ms)"), points("fixed(timeout=150ms, restart-jump=1000)")
	assert.NotEqual(t, on, off)
	assert.Equal(t, points("fixed(timeout=150ms, restart-jump=100)"), on)
}
