package trace

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// incarnation is one run of a sender's sequence numbers: n heartbeats
// numbered from 0, every 10 ms from the send time at (in heartbeats).
type incarnation struct{ at, n int }

// reorderedRecords returns the heartbeats of sender "p" over the given
// incarnations, each delayed by delay(k) (k counts heartbeats over all
// incarnations), in arrival order (ties by send time), with send times or
// not; and the incarnation (1, 2, ...) of each.
func reorderedRecords(incs []incarnation, delay func(k int) time.Duration, sent bool) ([]Record, []int) {
	type rec struct {
		r   Record
		inc int
	}
	var all []rec
	k := 0
	for i, inc := range incs {
		for s := range inc.n {
			σ := time.Duration(inc.at+s) * 10 * time.Millisecond
			all = append(all, rec{Record{Sender: "p", Seq: uint64(s), HasSeq: true, Sent: σ, HasSent: sent, Arrival: σ + time.Second + delay(k), HasArrival: true}, i + 1})
			k++
		}
	}
	slices.SortStableFunc(all, func(a, b rec) int {
		return cmp.Or(cmp.Compare(a.r.Arrival, b.r.Arrival), cmp.Compare(a.r.Sent, b.r.Sent))
	})
	recs, incOf := make([]Record, len(all)), make([]int, len(all))
	for i, x := range all {
		recs[i], incOf[i] = x.r, x.inc
	}
	return recs, incOf
}

// heavyDelay spreads the delays over 0 to 3 s in steps of 10 ms (one
// interval) by a fixed permutation: a heartbeat overtakes up to 300 sent
// before it, far more than R = 32.
func heavyDelay(k int) time.Duration { return time.Duration(k*7919%301) * 10 * time.Millisecond }

// mildDelay spreads the delays over 0 to 3 ms: no reordering.
func mildDelay(k int) time.Duration { return time.Duration(k*7919%301) * 10 * time.Microsecond }

// checkRecords runs a Checker with the default configuration over recs,
// in order, and returns the verdicts in the order they came out.
func checkRecords(recs []Record) []Checked {
	var got []Checked
	ch := NewChecker(CheckerConfig{File: "r"}, func(c Checked) { got = append(got, c) })
	for i, r := range recs {
		ch.Add(r, i+1, false)
	}
	ch.Flush()
	return got
}

// epochs returns the number of epochs (streams) among the records kept,
// and the findings by kind.
func epochs(got []Checked) (int, map[FindingKind]int) {
	n, kinds := 0, map[FindingKind]int{}
	for _, c := range got {
		if c.Finding != nil {
			kinds[c.Finding.Kind]++
			if c.Finding.Excluded {
				continue
			}
		}
		n = max(n, c.Epoch)
	}
	return n, kinds
}

// Heartbeats overtaken by up to 300 others (3 s at Δ = 10 ms) are
// reordered, not restarts nor wrong sequence numbers: one stream, none
// left out for its sequence number. (With R = 32 against the record
// index alone, fdgen's lognormal delays of s.d. 2 s split one sender
// into 158 incarnations and left out a third of the records.)
func TestSanityHeavyReorderingIsOneStream(t *testing.T) {
	for _, sent := range []bool{true, false} {
		recs, _ := reorderedRecords([]incarnation{{0, 3000}}, heavyDelay, sent)
		got := checkRecords(recs)
		require.Len(t, got, 3000)
		n, kinds := epochs(got)
		assert.Equal(t, 1, n, "send times %v: streams", sent)
		assert.Zero(t, kinds[FindingRestart], "send times %v", sent)
		assert.Zero(t, kinds[FindingSeq], "send times %v", sent)
	}
}

// A sender that restarts at 0 while its send times go on is two streams,
// split at its first record of the second run, with or without send
// times, and nothing is left out.
func TestSanityRestartIsTwoStreams(t *testing.T) {
	for _, sent := range []bool{true, false} {
		recs, inc := reorderedRecords([]incarnation{{0, 2000}, {2100, 2000}}, mildDelay, sent)
		got := checkRecords(recs)
		n, kinds := epochs(got)
		assert.Equal(t, 2, n, "send times %v: streams", sent)
		assert.Equal(t, map[FindingKind]int{FindingRestart: 1}, kinds, "send times %v", sent)
		for _, c := range got {
			assert.Equal(t, inc[c.Line-1], c.Epoch, "send times %v: line %d", sent, c.Line)
			if c.Finding != nil {
				assert.Equal(t, 2001, c.Line, "send times %v", sent)
				assert.Equal(t, fmt.Sprintf("sequence restarts at 0 where about 2000 was due%s: a new incarnation of the sender (epoch 2)", map[bool]string{true: " (sent 1.01s after 1999)", false: ""}[sent]), c.Finding.Detail)
			}
		}
	}
}

// A restart inside heavy reordering (delays up to 3 s, a pause of 1 s):
// two streams, each record kept in its own incarnation's, and the
// heartbeats of the first incarnation that arrive after the second began
// are left out and reported, not taken for a third incarnation.
func TestSanityRestartInsideHeavyReordering(t *testing.T) {
	recs, inc := reorderedRecords([]incarnation{{0, 3000}, {3100, 3000}}, heavyDelay, true)
	got := checkRecords(recs)
	require.Len(t, got, 6000)
	n, kinds := epochs(got)
	assert.Equal(t, 2, n, "streams")
	assert.Equal(t, 1, kinds[FindingRestart])
	at := 0 // the restart's line
	for _, c := range got {
		if c.Finding != nil && c.Finding.Kind == FindingRestart {
			at = c.Line
		}
	}
	require.Equal(t, 2, inc[at-1], "the restart is a record of the second incarnation")
	left := 0
	for _, c := range got {
		if c.Finding == nil || !c.Finding.Excluded {
			assert.Equal(t, inc[c.Line-1], c.Epoch, "line %d (seq %d)", c.Line, c.Record.Seq)
			continue
		}
		left++
		if c.Finding.Kind == FindingSeq {
			// Only a record of the first incarnation arriving after the
			// restart, or of the second before it, is the wrong one.
			assert.Equal(t, inc[c.Line-1] == 1, c.Line > at, "line %d: %s", c.Line, c.Finding.Detail)
		}
	}
	t.Logf("restart at line %d; left out %d of 6000: %v", at, left, kinds)
}

// A heartbeat overtaken by more than the reorder window (W = 4096) is
// left out, and the finding says so.
func TestSanityBeyondReorderWindow(t *testing.T) {
	delay := func(k int) time.Duration {
		if k == 100 {
			return 50 * time.Second // 5000 heartbeats late
		}
		return mildDelay(k)
	}
	recs, _ := reorderedRecords([]incarnation{{0, 6000}}, delay, true)
	got := checkRecords(recs)
	n, kinds := epochs(got)
	assert.Equal(t, 1, n)
	require.Equal(t, map[FindingKind]int{FindingSeq: 1}, kinds)
	for _, c := range got {
		if c.Finding != nil {
			assert.Equal(t, uint64(100), c.Record.Seq)
			assert.Contains(t, c.Finding.Detail, "below the highest so far")
			assert.Contains(t, c.Finding.Detail, "(more than the reorder window, 4096): left out")
		}
	}
}

// A record below the front whose send time is wrong too (far before what
// its sequence number says) is not a late heartbeat: it is left out. (A
// CSV row "a,99,-5,-3" among rows near 300 was kept as late and then
// stopped fdreplay as a clock stepping back.)
func TestSanityLateNeedsItsSendTime(t *testing.T) {
	lines := lip6Lines(300)
	lines[250] = "4 99 -5000000 -3000000 14"
	fs := findings(checkText(t, strings.Join(lines, "\n")+"\n", Columns{}))
	require.Len(t, fs, 1)
	assert.Equal(t, 251, fs[0].Line)
	assert.Equal(t, FindingSeq, fs[0].Kind)
	assert.True(t, fs[0].Excluded)

	// The same record sent when its number says, 151 intervals before
	// the front (seq 250), is a late heartbeat, kept, when 99 did not
	// arrive before (a number received already is a copy: see
	// TestSanityDuplicateFarBelowFrontLeftOut).
	lines[250] = fmt.Sprintf("4 99 %d %d 14", 99*int64(100*time.Millisecond), 250*int64(100*time.Millisecond)+int64(3*time.Second))
	lines = slices.Delete(lines, 99, 100)
	assert.Empty(t, findings(checkText(t, strings.Join(lines, "\n")+"\n", Columns{})))
}
