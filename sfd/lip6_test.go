package sfd_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace/tracetest"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/sfd"
	"github.com/stretchr/testify/require"
)

// readSender returns the heartbeats of one sender, arrival relative to the
// first record of the file (raw timestamps near 4.8e16 ns).
func readSender(t *testing.T, path string, sender string) []detector.Heartbeat {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []detector.Heartbeat
	var base int64
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fs := strings.Fields(sc.Text())
		require.Len(t, fs, 5, "%s:%d", path, line)
		recv, err := strconv.ParseInt(fs[3], 10, 64)
		require.NoError(t, err, "%s:%d: t_recv", path, line)
		if line == 1 {
			base = recv
		}
		if fs[0] != sender {
			continue
		}
		seq, err := strconv.ParseUint(fs[1], 10, 64)
		require.NoError(t, err, "%s:%d: seq", path, line)
		out = append(out, detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: time.Duration(recv - base)})
	}
	require.NoError(t, sc.Err())
	return out
}

// On the noisy LIP6 links (senders 2 and 4), SFD's online QoS measurement of
// its own output agrees with a 100 µs scan of Suspected, and asking for a
// lower mistake rate makes SFD raise SM and meet it.
func TestLIP6NoisyLinks(t *testing.T) {
	path := tracetest.Shared(t, tracetest.LIP6Excerpt)
	for _, sender := range []string{"2", "4"} {
		hbs := readSender(t, path, sender)
		fixed := newDet(t, sfd.Config{InitialMargin: new(time.Duration(1)), MinSamples: new(100)})
		var mistakes int
		var suspected time.Duration
		const step = 100 * time.Microsecond
		measuring, prevSusp, suspectGaps := false, false, 0
		for i, h := range hbs {
			if measuring {
				for at := hbs[i-1].Arrival + step; at < h.Arrival; at += step {
					s := fixed.Suspected(at)
					if s && !prevSusp {
						mistakes++
					}
					if s {
						suspected += step
					}
					prevSusp = s
				}
				// Exactly at the arrival, before observing it: catches every
				// suspicion, however short.
				if fixed.Suspected(h.Arrival) {
					if !prevSusp {
						mistakes++
					}
					suspectGaps++
					prevSusp = true
				}
			}
			fixed.Observe(h)
			if !measuring && !fixed.WarmingUp() {
				measuring = true
			}
			// A heartbeat can arrive after its successor's freshness point:
			// then the suspicion starts right at its arrival.
			s := fixed.Suspected(h.Arrival)
			if measuring && s && !prevSusp {
				mistakes++
			}
			prevSusp = s
		}
		st := fixed.Status()
		require.Positive(t, st.Mistakes, "sender %s", sender)
		require.Equal(t, mistakes, st.Mistakes, "sender %s", sender)
		require.InDelta(t, float64(suspected), float64(st.Suspected), float64(suspectGaps)*float64(step), "sender %s", sender)

		target := st.Measured.MistakesPerSecond / 4
		adaptive := newDet(t, sfd.Config{
			InitialMargin: new(time.Duration(1)), MinSamples: new(100), Step: 5 * time.Millisecond, SlotHeartbeats: 50,
			Targets: sfd.Targets{MaxTD: time.Second, MaxMistakesPerSecond: target},
		})
		for _, h := range hbs {
			adaptive.Observe(h)
		}
		ast := adaptive.Status()
		t.Logf("sender %s: fixed %d mistakes (%.3f/s); adaptive SM %v, %v, %.3f/s (target %.3f/s)",
			sender, st.Mistakes, st.Measured.MistakesPerSecond, ast.SafetyMargin, ast.State, ast.Measured.MistakesPerSecond, target)
		require.Greater(t, ast.SafetyMargin, time.Duration(1))
		require.Less(t, ast.Measured.MistakesPerSecond, st.Measured.MistakesPerSecond/2)
		require.LessOrEqual(t, ast.Measured.MistakesPerSecond, target, "sender %s: the requested rate is met", sender)
		require.NotEqual(t, sfd.CannotMeet, ast.State)
		require.Equal(t, sfd.Steady, ast.State, "sender %s", sender)
	}
}
