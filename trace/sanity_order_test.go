package trace

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// steadyStream returns n heartbeats of sender, Δ = 100 ms, synchronized
// clocks, every one-way delay 20 ms (atk25's c.fdkit: fdgen --delay
// constant --delay-base 20ms), in sequence order.
func steadyStream(sender string, n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		σ := time.Duration(i) * 100 * time.Millisecond
		recs[i] = Record{Sender: sender, Seq: uint64(i), HasSeq: true, Sent: σ, HasSent: true, Arrival: σ + 20*time.Millisecond, HasArrival: true}
	}
	return recs
}

// moveAfter takes heartbeat seq out of recs, adds late to its arrival and
// puts it back after heartbeat after (at the end when after is -1).
func moveAfter(recs []Record, seq uint64, after int, late time.Duration) []Record {
	i := slices.IndexFunc(recs, func(r Record) bool { return r.Seq == seq })
	r := recs[i]
	r.Arrival += late
	recs = slices.Delete(recs, i, i+1)
	j := len(recs)
	if after >= 0 {
		j = slices.IndexFunc(recs, func(r Record) bool { return r.Seq == uint64(after) }) + 1
	}
	return slices.Insert(recs, j, r)
}

func noSent(recs []Record) []Record {
	for i := range recs {
		recs[i].HasSent = false
	}
	return recs
}

// atk25's F1: a record more than R = 32 below the front had no neighbour
// of its run, so nothing judged its arrival, and the late-heartbeat rule
// (kept only when overtaken and the records after it arrive no earlier
// than it) did not hold there. Each of these was kept without a word:
// the last record, heartbeat 266, an hour late (fdreplay then took the
// trace as 1 h long and switched to unsynchronized clocks); heartbeat 200
// written after 233 (33 below) and after 250, its arrival 20 s, 2 s or
// 50 s late, so that the records after it arrive before it (or, at +2 s,
// it arrives 1.3 s before 233, which the file says came first). Each is
// an arrival finding now, left out, with and without send times.
func TestSanityFarBelowFrontArrivalJudged(t *testing.T) {
	cases := []struct {
		name  string
		seq   uint64
		after int
		late  time.Duration
		want  string
	}{
		{"H266", 266, -1, time.Hour, "no record of its sender after it"},
		{"H200", 200, -1, time.Hour, "no record of its sender after it"},
		{"K33+20s", 200, 233, 20 * time.Second, "arrives 16.6s before it"},
		{"K33+2s", 200, 233, 2 * time.Second, "arrives 1.3s after it"},
		{"Hmid50", 200, 250, 50 * time.Second, "arrives 44.9s before it"},
	}
	for _, tc := range cases {
		for _, sent := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/sent=%v", tc.name, sent), func(t *testing.T) {
				recs := moveAfter(steadyStream("p", 300), tc.seq, tc.after, tc.late)
				if !sent {
					recs = noSent(recs)
				}
				line := lineOf(recs, tc.seq)
				fs := findings(checkRecords(recs))
				require.Len(t, fs, 1, "%v", fs)
				assert.Equal(t, line, fs[0].Line)
				assert.Equal(t, FindingArrival, fs[0].Kind)
				assert.True(t, fs[0].Excluded)
				assert.Contains(t, fs[0].Detail, tc.want)
			})
		}
	}
}

// The same with two senders, p0's heartbeat 200 at the end of the file,
// an hour late (atk25's two-sender case): p0's finding, nothing for p1.
func TestSanityFarBelowFrontTwoSenders(t *testing.T) {
	p0, p1 := steadyStream("p0", 300), steadyStream("p1", 300)
	var recs []Record
	for i := range p0 {
		recs = append(recs, p0[i], p1[i])
	}
	i := slices.IndexFunc(recs, func(r Record) bool { return r.Sender == "p0" && r.Seq == 200 })
	r := recs[i]
	r.Arrival += time.Hour
	recs = append(slices.Delete(recs, i, i+1), r)
	fs := findings(checkRecords(recs))
	require.Len(t, fs, 1, "%v", fs)
	assert.Equal(t, "p0", fs[0].Sender)
	assert.Equal(t, 600, fs[0].Line)
	assert.Equal(t, FindingArrival, fs[0].Kind)
}

// What the limit of R below the front is for: heartbeats delayed by
// many intervals, in arrival order in the file, are late heartbeats and
// kept, however far below the front: one heartbeat 5 s late (50 numbers
// below the front when it arrives), a burst of 12 delayed 5 s together
// (their arrivals 1 ms apart), and a burst of 40 delayed 8 s (each
// arriving between two of the front's); with and without send times,
// but for the burst of 12: without send times, the k = 8 records after
// its first one continue from it, as a restart's do (the limit
// docs/algorithms.md, “Input sanity”, states), and it is split there.
func TestSanityFarBelowFrontReorderingKept(t *testing.T) {
	delays := map[string]func(seq int) time.Duration{
		"one": func(seq int) time.Duration {
			if seq == 100 {
				return 5 * time.Second
			}
			return 0
		},
		"burst12": func(seq int) time.Duration {
			if seq >= 100 && seq < 112 {
				return 5*time.Second - time.Duration(seq-100)*99*time.Millisecond
			}
			return 0
		},
		"burst40": func(seq int) time.Duration {
			if seq >= 100 && seq < 140 {
				return 8 * time.Second
			}
			return 0
		},
	}
	for name, delay := range delays {
		for _, sent := range []bool{true, false} {
			if name == "burst12" && !sent {
				continue
			}
			t.Run(fmt.Sprintf("%s/sent=%v", name, sent), func(t *testing.T) {
				recs := steadyStream("p", 600)
				for i := range recs {
					recs[i].Arrival += delay(i)
				}
				slices.SortStableFunc(recs, func(a, b Record) int { return cmp.Compare(a.Arrival, b.Arrival) })
				require.Greater(t, lineOf(recs, 100), 130, "heartbeat 100 arrives after 130")
				if !sent {
					recs = noSent(recs)
				}
				got := checkRecords(recs)
				require.Len(t, got, 600)
				assert.Empty(t, findings(got))
			})
		}
	}
}

// atk25's F2: without send times, heartbeat 150's number corrupted to 15,
// in place (13.5 s after 15 arrived): 134 below the front, and the k
// records after it do not continue from it, so the sequence rules took it
// for a late heartbeat, and it arrives in order. But 15 was received
// already: a record whose number was received more than R numbers back
// cannot have been overtaken. A FindingSeq, left out; with send times it
// was one already (sent after the front). A duplicate near the front (150
// corrupted to 140, 9 below) and a copy right after its original stay
// kept: the network duplicates packets.
func TestSanityDuplicateFarBelowFrontLeftOut(t *testing.T) {
	for _, sent := range []bool{true, false} {
		recs := steadyStream("p", 300)
		recs[150].Seq = 15
		if !sent {
			recs = noSent(recs)
		}
		fs := findings(checkRecords(recs))
		require.Len(t, fs, 1, "sent=%v: %v", sent, fs)
		assert.Equal(t, 151, fs[0].Line)
		assert.Equal(t, FindingSeq, fs[0].Kind)
		assert.True(t, fs[0].Excluded)
		if !sent {
			assert.Contains(t, fs[0].Detail, "sequence number 15 is 134 below the highest so far, 149, and was received before")
		}
	}

	recs := noSent(steadyStream("p", 300))
	recs[150].Seq = 140
	assert.Empty(t, findings(checkRecords(recs)))
	recs = noSent(steadyStream("p", 300))
	recs = slices.Insert(recs, 151, recs[150])
	recs[151].Arrival += time.Millisecond
	assert.Empty(t, findings(checkRecords(recs)))
}

// atk25's F9: the deviation of an arrival of 2^63 − 1 ns was printed off
// by float64's rounding (+2562047h47m6.834776064s); it is the exact
// difference from the neighbour's prediction, 10.02 s below 2^63 − 1 ns.
func TestSanityDeviationExact(t *testing.T) {
	recs := steadyStream("p", 300)
	recs[100].Arrival = math.MaxInt64
	fs := findings(checkRecords(recs))
	require.Len(t, fs, 1)
	assert.Equal(t, FindingArrival, fs[0].Kind)
	assert.Contains(t, fs[0].Detail, "arrival 2562047h47m16.854775807s is +2562047h47m6.834775807s off what its neighbours predict")

	recs = steadyStream("p", 300)
	recs[100].Sent = math.MinInt64
	fs = findings(checkRecords(recs))
	require.Len(t, fs, 1)
	assert.Contains(t, fs[0].Detail, "send time -2562047h47m16.854775808s is -2562047h47m26.854775808s off")
}

// rvL25's gap: a heartbeat the network reordered (100, 105 ms late,
// after 101) whose send time is then moved 150 ms earlier passed the send
// check (within 2Δ) and its delay finding, 255 ms off, was waived as
// overtaken: kept. Its lateness accounts for 105 ms of that; the rest is
// its send time, off its number's by more than the send times scatter
// (Floor here, a grid without jitter). A delay finding now, left out; the
// same heartbeat with its send time intact stays kept.
func TestSanityOvertakenSendTimeMovedLeftOut(t *testing.T) {
	recs := steadyStream("p", 300)
	for i := range recs {
		recs[i].Arrival += time.Duration(i%2) * time.Millisecond
	}
	recs[100].Arrival += 105 * time.Millisecond
	slices.SortStableFunc(recs, func(a, b Record) int { return cmp.Compare(a.Arrival, b.Arrival) })
	line := lineOf(recs, 100)
	require.Equal(t, uint64(101), recs[line-2].Seq, "100 arrives after 101")
	require.Empty(t, findings(checkRecords(recs)))

	recs[line-1].Sent -= 150 * time.Millisecond
	fs := findings(checkRecords(recs))
	require.Len(t, fs, 1, "%v", fs)
	assert.Equal(t, line, fs[0].Line)
	assert.Equal(t, FindingDelay, fs[0].Kind)
	assert.True(t, fs[0].Excluded)
	assert.Contains(t, fs[0].Detail, "its send time is -150ms off what its neighbours predict")
}
