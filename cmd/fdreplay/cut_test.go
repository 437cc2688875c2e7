package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A recording cut short after a flush, as a killed "fdbeat recv" leaves it:
// with --lenient, fdreplay replays the records before the cut and says where
// the file stopped; without, it refuses the file naming the line.
func TestLenientReplaysCutRecording(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.Header{Interval: 100 * time.Millisecond}, trace.Gzip)
	require.NoError(t, err)
	for i := range 600 {
		at := time.Duration(i) * 100 * time.Millisecond
		require.NoError(t, w.Write(trace.Record{Sender: "a", Seq: uint64(i), HasSeq: true,
			Sent: at, HasSent: true, Arrival: at + time.Millisecond, HasArrival: true}))
	}
	require.NoError(t, w.Flush())
	path := filepath.Join(t.TempDir(), "killed.fdk.gz")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644)) // no gzip trailer

	code, _, errOut := runCmd("--lenient", "-d", "fixed", "--interval", "100ms", path)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "input cut short, replaying the records before the cut: "+path+":603: want a complete gzip stream")

	code, _, errOut = runCmd("-d", "fixed", "--interval", "100ms", path)
	assert.NotEqual(t, 0, code)
	// The refusal says that --lenient recovers the records (user48's F29).
	assert.Equal(t, "fdreplay: "+path+":603: want a complete gzip stream: unexpected EOF (--lenient replays the records before the cut)\n", errOut)
}
