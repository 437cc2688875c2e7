package qos

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/require"
)

// tapeRecord is one heartbeat of a tape: its arrival, the detector's ok
// and ready, and the freshness points when ready.
type tapeRecord struct {
	a         time.Duration
	ok, ready bool
	taus      []time.Duration
}

// tapeRecords returns m records of n thresholds: warm-up first, then
// ready records whose freshness points step by a few microseconds, jump
// now and then to the extremes of time.Duration (saturated τ, arrivals
// near both ends) and sometimes repeat, and a few records not ready
// again (a detector back in warm-up).
func tapeRecords(m, n int, seed uint64) []tapeRecord {
	rng := rand.New(rand.NewPCG(seed, 7))
	recs := make([]tapeRecord, m)
	a := time.Duration(0)
	tau := make([]time.Duration, n)
	for k := range recs {
		a += time.Duration(rng.Int64N(int64(20 * time.Millisecond)))
		r := tapeRecord{a: a, ok: k >= 3, ready: k >= 7 && rng.IntN(50) != 0}
		switch rng.IntN(40) {
		case 0:
			r.a = math.MinInt64 + time.Duration(rng.Int64N(1000))
		case 1:
			r.a = math.MaxInt64 - time.Duration(rng.Int64N(1000))
		}
		if r.ready {
			r.taus = make([]time.Duration, n)
			for j := range tau {
				switch rng.IntN(60) {
				case 0:
					tau[j] = math.MaxInt64
				case 1:
					tau[j] = math.MinInt64
				case 2: // unchanged
				default:
					tau[j] = r.a + time.Duration(j+1)*ms(10) + time.Duration(rng.Int64N(int64(5*time.Microsecond)))
				}
			}
			copy(r.taus, tau)
		}
		recs[k] = r
	}
	return recs
}

// recordTape writes recs to a new tape.
func recordTape(t *testing.T, recs []tapeRecord, n int) *tauTape {
	t.Helper()
	tape, err := newTauTape(t.TempDir(), n)
	require.NoError(t, err)
	t.Cleanup(tape.close)
	for _, r := range recs {
		tape.record(r.a, r.ok, r.ready, r.taus)
	}
	return tape
}

// A tape gives back, heartbeat by heartbeat, the ok, the warm-up and the
// freshness points recorded, whatever their values (saturated, at both
// ends of time.Duration, unchanged, far apart) and their number (up to
// 300 thresholds, wider than one write).
func TestTauTapeRoundTrip(t *testing.T) {
	for _, n := range []int{1, 41, 300} {
		m := 5000
		if n == 1 {
			m = 40000
		}
		recs := tapeRecords(m, n, uint64(n))
		tape := recordTape(t, recs, n)
		pl, err := tape.play()
		require.NoError(t, err)
		require.Greater(t, tape.size, int64(64<<10), "n = %d: the player reads the tape in several parts", n)
		got := make([]time.Duration, n)
		for k, r := range recs {
			pl.Observe(detector.Heartbeat{Arrival: r.a})
			require.NoError(t, pl.err)
			require.Equal(t, r.ok, pl.Started(), "n = %d, record %d", n, k)
			require.Equal(t, !r.ready, pl.WarmingUp(), "n = %d, record %d", n, k)
			if r.ready {
				pl.fill(got)
				require.Equal(t, r.taus, got, "n = %d, record %d", n, k)
			}
		}
		pl.Observe(detector.Heartbeat{})
		require.ErrorContains(t, pl.err, fmt.Sprintf(" %d records, the pass observed more", m))
		require.False(t, pl.Started())
	}
}

// A tape cut short or with a bad width is an error of the player, which
// then reports not started, not a panic or made-up freshness points.
func TestTauTapeTruncated(t *testing.T) {
	const n = 41
	recs := tapeRecords(3000, n, 5)
	for _, cut := range []int64{1, 40, 5000} {
		tape := recordTape(t, recs, n)
		tape.flush(true)
		require.NoError(t, tape.w.Flush())
		tape.size -= cut
		pl, err := tape.play()
		require.NoError(t, err)
		for _, r := range recs {
			pl.Observe(detector.Heartbeat{Arrival: r.a})
			if pl.err != nil {
				break
			}
		}
		require.Error(t, pl.err, "cut %d", cut)
		require.False(t, pl.Started())
		require.True(t, pl.WarmingUp())
	}
	tape := recordTape(t, recs, n)
	tape.flush(true)
	require.NoError(t, tape.w.Flush())
	_, err := tape.f.WriteAt([]byte{tapeOK | tapeReady | 9}, 0) // width 9
	require.NoError(t, err)
	pl, err := tape.play()
	require.NoError(t, err)
	pl.Observe(detector.Heartbeat{})
	require.ErrorContains(t, pl.err, "record 1 is truncated")
}

// With a tape, sweepRanked builds the normal φ's set once (the second
// pass replays the first's tape), and every field of every point equals
// the sweep that runs the set in both passes, which equals a replay per
// point (TestNormalSetPassesEqualReplays).
func TestSweepRankedTapeEqualsTwoRuns(t *testing.T) {
	for _, cfg := range []Config{{}, {WarmUp: 37, RecordMistakes: true, Intervals: true}} {
		want, built := sweepRankedNormal(t, cfg, false)
		require.Equal(t, 2, built)
		got, built := sweepRankedNormal(t, cfg, true)
		require.Equal(t, 1, built, "taped: sets built")
		require.Equal(t, want, got, "%+v", cfg)
	}
}

// A tape that cannot be made, or whose writes are lost (it reads back
// short), costs sweepRanked a second run of the set, not its results.
func TestSweepRankedTapeFails(t *testing.T) {
	cfg := Config{WarmUp: 37, RecordMistakes: true, Intervals: true}
	want, _ := sweepRankedNormal(t, cfg, false)
	t.Cleanup(func() { newTape = newTauTape })
	fails := map[string]func(dir string, n int) (*tauTape, error){
		"not made": func(string, int) (*tauTape, error) { return nil, errors.New("no room") },
		"writes lost": func(dir string, n int) (*tauTape, error) {
			tape, err := newTauTape(dir, n)
			if err == nil {
				tape.w = bufio.NewWriter(io.Discard)
			}
			return tape, err
		},
	}
	for name, fail := range fails {
		newTape = fail
		got, built := sweepRankedNormal(t, cfg, true)
		require.Equal(t, 2, built, name)
		require.Equal(t, want, got, name)
	}
}

// sweepRankedNormal runs sweepRanked on a normal φ's set of twelve
// thresholds over a stream of 4000 heartbeats with losses, duplicates and
// pauses, and returns the results and how many sets it built.
func sweepRankedNormal(t *testing.T, cfg Config, taped bool) ([]Result, int) {
	t.Helper()
	const n = 4000
	rankedTwoPerPass(t, n)
	hbs := generate(genOpts{n: n, interval: ms(100), delay: ms(40), spread: ms(15), loss: 0.03, dup: 0.02, pause: 0.01, seed: 11})
	vals := []float64{16, 0.5, 1, 2, 3, 5, 8, 12, math.Log10(2), 1.5, 4, 10}
	reps := make([]int, len(vals))
	for i := range reps {
		reps[i] = i
	}
	built := 0
	newDet := func(v float64) (thresholdDetector, error) {
		built++
		return newNormalSet(phi.NormalConfig{WindowSize: 200}, v, new(bool))
	}
	fillOf := func(src thresholdDetector, chunk []int) func([]time.Duration) {
		ths := make([]float64, len(chunk))
		for j, k := range chunk {
			ths[j] = vals[k]
		}
		return src.(*normalSet).track(ths)
	}
	res := make([]Result, len(vals))
	missed, err := sweepRanked(newDet, fillOf, vals, reps, res, sliceSource(hbs), cfg, newSpanMemo(sliceSource(hbs)), taped)
	require.NoError(t, err)
	require.Empty(t, missed)
	return res, built
}
