package trace

import (
	"cmp"
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
