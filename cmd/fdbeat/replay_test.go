package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A captured signed heartbeat replayed again and again verifies, so only the
// receiver can tell it from the genuine one: it is a copy of a sequence number
// already recorded. Only the first copy of each sequence number is recorded
// (a late genuine heartbeat still is), every later copy and anything older
// than the window is counted, and a replayed copy does not keep a silent
// sender from eviction: were each copy one more record of the trace (1,100
// here), a replayer on the path could fill the disk and make fdreplay count
// heartbeats that were never sent.
func TestReplayedSignedHeartbeatIsRecordedOnce(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	g := newForgeRig(t, recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead,
		EvictAfter: time.Minute})
	var out bytes.Buffer
	tw, err := trace.NewWriter(&out, trace.Header{Interval: 100 * time.Millisecond}, trace.NoCompression)
	require.NoError(t, err)
	g.r.tw = tw
	const inc = 1764420000123456789
	for _, seq := range []uint64{0, 1, 2, 4} {
		g.beat(inc, seq, key)
	}
	for range 1000 {
		g.beat(inc, 4, key) // the latest heartbeat, replayed
	}
	for range 100 {
		g.beat(inc, 2, key) // an older one
	}
	g.beat(inc, 3, key) // a genuine late heartbeat: recorded
	g.beat(inc, 3, key) // and its copy: not
	g.beat(inc, 200, key)
	g.beat(inc, 201, key) // confirms the jump: the window moves to 201
	g.beat(inc, 100, key) // 101 behind: older than the window
	require.NoError(t, tw.Close())

	var seqs []string
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "s" {
			seqs = append(seqs, f[1])
		}
	}
	assert.Equal(t, []string{"0", "1", "2", "4", "3", "201"}, seqs)
	assert.EqualValues(t, 6, g.r.stats.Recorded)
	assert.EqualValues(t, 1000+100+1+1, g.r.stats.Duplicates)
	assert.Contains(t, g.logs.String(), "copy of a heartbeat already recorded")

	// Replayed copies do not keep a silent sender: after EvictAfter of
	// genuine silence it is evicted even though copies kept coming.
	g.r.clock = g.clk
	for range 700 { // 70 s of copies of 201, every 100 ms
		g.beat(inc, 201, key)
	}
	g.r.evict()
	assert.EqualValues(t, 1, g.r.stats.Evicted)
}
