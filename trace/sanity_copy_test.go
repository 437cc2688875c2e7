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

// inArrivalOrder sorts recs by arrival, stably, as a receive log writes them.
func inArrivalOrder(recs []Record) []Record {
	slices.SortStableFunc(recs, func(a, b Record) int { return cmp.Compare(a.Arrival, b.Arrival) })
	return recs
}

// withCopies is steadyStream("p", 300) with a copy of heartbeat c (its
// send time too) arriving 5 ms after heartbeat after, for each pair.
func withCopies(pairs ...[2]int) []Record {
	recs := steadyStream("p", 300)
	for _, p := range pairs {
		cp := recs[p[0]]
		cp.Arrival = recs[p[1]].Arrival + 5*time.Millisecond
		recs = append(recs, cp)
	}
	return inArrivalOrder(recs)
}

// atk26's N1: a record left out for a number received before is a copy;
// it stands for no missing number (Finding.SeqKnown), so that fdreplay
// does not take one off the loss for it (one late copy hid one real
// loss). A copy of 50 after 100 (the received-before rule), copies of 40
// to 44 after 120 to 124 (the Hampel rule: 80 away), with and without send
// times. A number that is wrong, its true one unknown, is not SeqKnown:
// 2^64 − 1 in 100's place, and 15 in 150's place sent after the front
// (with send times: not a copy, whose send time is its original's).
func TestSanityCopySeqKnown(t *testing.T) {
	for _, sent := range []bool{true, false} {
		recs := withCopies([2]int{50, 100})
		if !sent {
			recs = noSent(recs)
		}
		fs := findings(checkRecords(recs))
		require.Len(t, fs, 1, "sent=%v: %v", sent, fs)
		assert.Equal(t, FindingSeq, fs[0].Kind)
		assert.Equal(t, 102, fs[0].Line)
		assert.True(t, fs[0].SeqKnown, "sent=%v", sent)
		assert.Contains(t, fs[0].Detail, "sequence number 50 is 50 below the highest so far, 100, and was received before")

		recs = withCopies([2]int{40, 120}, [2]int{41, 121}, [2]int{42, 122}, [2]int{43, 123}, [2]int{44, 124})
		if !sent {
			recs = noSent(recs)
		}
		fs = findings(checkRecords(recs))
		require.Len(t, fs, 5, "sent=%v: %v", sent, fs)
		for i, f := range fs {
			assert.Equal(t, FindingSeq, f.Kind)
			assert.Equal(t, 122+2*i, f.Line)
			assert.True(t, f.SeqKnown, "sent=%v: %v", sent, f)
			assert.Contains(t, f.Detail, "received before")
		}
	}

	recs := steadyStream("p", 300)
	recs[100].Seq = math.MaxUint64
	recs[150].Seq = 15
	fs := findings(checkRecords(recs))
	require.Len(t, fs, 2, "%v", fs)
	for _, f := range fs {
		assert.Equal(t, FindingSeq, f.Kind)
		assert.False(t, f.SeqKnown, "%v", f)
	}
	assert.Contains(t, fs[1].Detail, "sequence number 15 is 134 below 149 but sent 100ms after it")
}

// incarnations is a sender restarting its numbering at 0 every n
// heartbeats, k incarnations in all, Δ = 100 ms, 20 ms delays; late maps
// a heartbeat (by its index over all incarnations) to how late it
// arrives. In arrival order.
func incarnations(n, k int, late map[int]time.Duration) []Record {
	recs := steadyStream("p", n*k)
	for i := range recs {
		recs[i].Seq = uint64(i % n)
		recs[i].Arrival += late[i]
	}
	return inArrivalOrder(recs)
}

// atk26's N2: a heartbeat of the incarnation before a restart, still on
// the way (sent before the restart's record), is left out with the epoch
// it belongs to, so that fdreplay counts it there (it was counted against
// the new incarnation, and as lost in its own). Heartbeat 148 of epoch 1,
// 500 ms late, after epoch 2's 0 to 2: epoch 1, its number known. With
// three incarnations, heartbeat 198 of epoch 2 arriving in epoch 3 is
// epoch 2's; heartbeat 98 of epoch 1 arriving there too was sent before
// epoch 2 began: which incarnation it is of cannot be told from the
// restarts' send times alone (an epoch may have begun without one):
// epoch 0, none.
func TestSanityOldIncarnationEpoch(t *testing.T) {
	got := checkRecords(incarnations(150, 2, map[int]time.Duration{148: 500 * time.Millisecond}))
	var fs []Checked
	for _, c := range got {
		if c.Finding != nil && c.Finding.Excluded {
			fs = append(fs, c)
		}
	}
	require.Len(t, fs, 1, "%v", findings(got))
	assert.Equal(t, 1, fs[0].Epoch)
	assert.Equal(t, uint64(148), fs[0].Record.Seq)
	assert.True(t, fs[0].Finding.SeqKnown)
	assert.Contains(t, fs[0].Finding.Detail, "is a late heartbeat of the incarnation before (epoch 1)")

	got = checkRecords(incarnations(100, 3, map[int]time.Duration{198: 500 * time.Millisecond, 98: 10*time.Second + 500*time.Millisecond}))
	fs = fs[:0]
	for _, c := range got {
		if c.Finding != nil && c.Finding.Excluded {
			fs = append(fs, c)
		}
	}
	require.Len(t, fs, 2, "%v", findings(got))
	// Both arrive 20.32 s in: epoch 1's first in the file.
	assert.Equal(t, [2]int{0, 2}, [2]int{fs[0].Epoch, fs[1].Epoch})
	assert.Equal(t, [2]uint64{98, 98}, [2]uint64{fs[0].Record.Seq, fs[1].Record.Seq})
	assert.Contains(t, fs[0].Finding.Detail, "sent 10.2s before the restart of epoch 3, is a late heartbeat of an incarnation before, which one cannot be told (counted in none)")
	assert.Contains(t, fs[1].Finding.Detail, "sent 200ms before the restart of epoch 3, is a late heartbeat of the incarnation before (epoch 2)")
	assert.True(t, fs[0].Finding.SeqKnown && fs[1].Finding.SeqKnown)
	for _, c := range got {
		if c.Finding == nil || !c.Finding.Excluded {
			assert.Equal(t, 1+int(c.Record.Sent/(10*time.Second)), c.Epoch, "line %d", c.Line)
		}
	}
}

// atk26's N5: a late heartbeat whose send time is later than its number's
// trend (a timer that fired 15 or 50 ms late) and whose network delay is
// 300 ms, overtaken by the next two or three, is kept: a later send time makes the
// delay A − σ smaller, so it cannot be what makes it look late (7ce472f
// waived the delay finding only for a send time within the bound either
// way). A send time 15 ms earlier is still what rvL25's rule catches
// (TestSanityOvertakenSendTimeMovedLeftOut: 150 ms).
func TestSanityLateSentLaterKept(t *testing.T) {
	late := func(sentOff time.Duration) []Finding {
		recs := steadyStream("p", 300)
		for i := range recs {
			recs[i].Arrival += time.Duration(i%2) * time.Millisecond
		}
		recs[100].Sent += sentOff
		recs[100].Arrival = recs[100].Sent + 300*time.Millisecond
		recs = inArrivalOrder(recs)
		if l := lineOf(recs, 100); recs[l-2].Seq < 102 {
			t.Fatalf("100 arrives after %d", recs[l-2].Seq)
		}
		return findings(checkRecords(recs))
	}
	assert.Empty(t, late(15*time.Millisecond))
	assert.Empty(t, late(50*time.Millisecond))
	fs := late(-15 * time.Millisecond)
	require.Len(t, fs, 1, "%v", fs)
	assert.Equal(t, FindingDelay, fs[0].Kind)
	assert.Contains(t, fs[0].Detail, "its send time is -15ms off what its neighbours predict")
}

// atk26's N8: the received-before ring covers the reorder window W = 4096
// below the front, as late() does: a copy of 199 that arrives with the
// front 4095 or 4096 above it is a copy (it held 4095 numbers below the
// front, so at 4096 the copy was kept as a late heartbeat); at 4097 it
// is beyond W (the sequence rule). Δ = 100 ms; 0 to 199, then from 200 +
// gap on, the copy arriving 5 ms after heartbeat front.
func TestSanityCopyRingCoversWindow(t *testing.T) {
	for _, d := range []uint64{4095, 4096, 4097} {
		front := 199 + d
		var recs []Record
		for i := range uint64(300) {
			seq := i
			if i >= 200 {
				seq = front - 50 + i - 200
			}
			σ := time.Duration(seq) * 100 * time.Millisecond
			recs = append(recs, Record{Sender: "p", Seq: seq, HasSeq: true, Sent: σ, HasSent: true, Arrival: σ + 20*time.Millisecond, HasArrival: true})
		}
		cp := recs[199]
		cp.Arrival = time.Duration(front)*100*time.Millisecond + 25*time.Millisecond
		recs = inArrivalOrder(append(recs, cp))
		for _, sent := range []bool{true, false} {
			if !sent {
				recs = noSent(recs)
			}
			fs := findings(checkRecords(recs))
			require.Len(t, fs, 1, "d=%d sent=%v: %v", d, sent, fs)
			assert.Equal(t, FindingSeq, fs[0].Kind)
			if d <= DefaultSanityReorderWindow {
				assert.Contains(t, fs[0].Detail, fmt.Sprintf("sequence number 199 is %d below the highest so far, %d, and was received before", d, front))
				assert.True(t, fs[0].SeqKnown)
			} else {
				assert.Contains(t, fs[0].Detail, "more than the reorder window, 4096")
			}
		}
	}
}

// The ring itself (markSeen, wasSeen): after 0 to 10, a front moving to
// 4106 keeps 10 (4096 below) and knows none of 11 to 4105; one more
// drops 10; a jump beyond the ring forgets all but the front.
func TestSeenRing(t *testing.T) {
	s := &senderCheck{}
	keep := func(q uint64) {
		s.markSeen(q)
		if !s.hasFront || q > s.front.Seq {
			s.front.Seq, s.hasFront = q, true
		}
	}
	for q := range uint64(11) {
		keep(q)
	}
	keep(4106)
	assert.True(t, s.wasSeen(10) && s.wasSeen(4106))
	assert.False(t, s.wasSeen(9), "4097 below")
	for q := uint64(11); q < 4106; q++ {
		require.False(t, s.wasSeen(q), "%d", q)
	}
	keep(4107)
	assert.False(t, s.wasSeen(10))
	assert.True(t, s.wasSeen(4106) && s.wasSeen(4107))
	keep(2000) // a late heartbeat, kept
	assert.True(t, s.wasSeen(2000))
	keep(4107 + 4097)
	for _, q := range []uint64{2000, 4106, 4107} {
		assert.False(t, s.wasSeen(q), "%d", q)
	}
	assert.True(t, s.wasSeen(4107+4097))
}

// atk26's N3: a restart 33 to 36 below the front, with send times, was
// not recognised: the records after its first were within R of the
// front, so they did not count as continuing below it, and 0 became an
// outlier, the rest duplicates. They continue from the restart's record
// (sameRun): two incarnations, as without send times.
func TestSanityRestartJustBeyondR(t *testing.T) {
	for _, top := range []int{33, 34, 36} {
		for _, sent := range []bool{true, false} {
			recs := incarnations(top+1, 1, nil)
			for _, r := range incarnations(300, 1, nil) {
				r.Sent += time.Duration(top+1) * 100 * time.Millisecond
				r.Arrival += time.Duration(top+1) * 100 * time.Millisecond
				recs = append(recs, r)
			}
			if !sent {
				recs = noSent(recs)
			}
			got := checkRecords(recs)
			n, kinds := epochs(got)
			assert.Equal(t, 2, n, "top=%d sent=%v: %v", top, sent, findings(got))
			assert.Equal(t, map[FindingKind]int{FindingRestart: 1}, kinds, "top=%d sent=%v", top, sent)
		}
	}
}

// atk26's N10: without send times, the wrap's message named the
// saturated residual ("where about 9223372036854775807 was due"); it
// names the number due from the neighbour, past 2^64 − 1, as with send
// times (TestSanityRestartAtCounterWrap).
func TestSanityWrapWithoutSendTimes(t *testing.T) {
	recs := steadyStream("p", 600)
	for i := range recs {
		recs[i].Seq = uint64(1<<64-300) + uint64(i)
	}
	fs := findings(checkRecords(noSent(recs)))
	require.Len(t, fs, 1, "%v", fs)
	assert.Equal(t, FindingRestart, fs[0].Kind)
	assert.Equal(t, "sequence restarts at 0 where about 2^64 was due: the 64-bit counter wrapped past 18446744073709551615: a new incarnation of the sender (epoch 2)", fs[0].Detail)
}
