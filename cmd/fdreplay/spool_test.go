package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace/tracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An input larger than process.memHeartbeats is replayed from spools (temporary
// files) with the same table, curves and exports, byte for byte, as in
// memory: on the embedded trace and on LIP6 senders (arrival-based TD,
// reordered heartbeats).
func TestSpooledInputSameOutputs(t *testing.T) {
	cases := map[string][]string{"default": nil}
	if path := tracetest.Shared(t, tracetest.LIP6Excerpt); path != "" {
		cases["lip6"] = []string{path, "--sender", "4", "--sender", "7"}
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			outputs := func(limit int) (string, map[string][]byte) {
				code, out, errOut := runIn(withMem(limit), append(append([]string{}, in...), "--points", "6", "--no-progress", "--force", "--out", dir)...)
				require.Equal(t, 0, code, errOut)
				files := map[string][]byte{}
				for _, f := range []string{"table.csv", "table.json", "curves.csv", "curves.json"} {
					b, err := os.ReadFile(filepath.Join(dir, f))
					require.NoError(t, err)
					files[f] = b
				}
				return out, files
			}
			memOut, memFiles := outputs(defaultMemHeartbeats)
			spOut, spFiles := outputs(100)
			require.Equal(t, memOut, spOut)
			for f, b := range memFiles {
				require.Equal(t, string(b), string(spFiles[f]), f)
			}
		})
	}
}

// regularTrace returns an fdkit trace of n heartbeats of sender p every
// 100 ms, each arriving 10 ms after it was sent.
func regularTrace(n int) string {
	var b strings.Builder
	b.WriteString("#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n")
	for k := range n {
		s := int64(k) * int64(100*time.Millisecond)
		fmt.Fprintf(&b, "p %d %d %d\n", k, s, s+int64(10*time.Millisecond))
	}
	return b.String()
}

// A spool that cannot be written (here: TMPDIR does not exist; a full or
// read-only disk alike) is an error naming the temporary directory, not a
// hint to sort the trace.
func TestSpoolWriteErrorNamesTempDir(t *testing.T) {
	path := writeFile(t, "t.fdk", regularTrace(300))
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	code, _, errOut := runIn(withMem(100), "-d", "chen", path)
	require.Equal(t, 1, code, errOut)
	assert.NotContains(t, errOut, "sort the trace")
	assert.Contains(t, errOut, "TMPDIR")
	assert.Contains(t, errOut, "no such file or directory")
}

// The bound on heartbeats held in memory holds over all inputs together:
// several files each under process.memHeartbeats are not all kept in memory (one
// 10^6-heartbeat file peaked at 166 MB RSS, four copies of it at 517 MB),
// and the tables are the same as from memory.
func TestMemoryBoundAcrossInputs(t *testing.T) {
	a := writeFile(t, "a.fdk", regularTrace(300))
	b := writeFile(t, "b.fdk", regularTrace(300))
	c := writeFile(t, "c.fdk", regularTrace(300))
	args := []string{"-d", "chen,fixed", a, b, c}
	code, memOut, errOut := runCmd(args...)
	require.Equal(t, 0, code, errOut)

	const mem = 500
	o, files, err := parseFlags(args, io.Discard)
	require.NoError(t, err)
	o.process = withMem(mem)
	ins, err := loadInputs(o, files, io.Discard)
	require.NoError(t, err)
	defer closeInputs(ins)
	require.Len(t, ins, 3)
	held := 0
	for _, in := range ins {
		held += len(in.hbs)
		assert.Equal(t, 300, in.len(), in.name)
	}
	assert.LessOrEqual(t, held, mem, "heartbeats held in memory over all inputs")

	code, spOut, errOut := runIn(withMem(mem), args...)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, memOut, spOut)
}

// Running out of file descriptors (one spool file per stream: a trace of
// 3000 senders under ulimit -n 1024) says to raise the limit or replay
// fewer senders, not to free disk space.
func TestSpoolErrorTooManyFiles(t *testing.T) {
	err := spoolErr(fmt.Errorf("trace: spool: %w", &os.PathError{Op: "open", Path: "/tmp/fdkit-spool-1", Err: syscall.EMFILE}), 100)
	assert.ErrorIs(t, err, syscall.EMFILE)
	assert.Contains(t, err.Error(), "past 100 heartbeats in memory")
	assert.Contains(t, err.Error(), "ulimit -n")
	assert.Contains(t, err.Error(), "--sender")
	assert.NotContains(t, err.Error(), "free space")
}

// TestSweepMemoryBound: a sweep takes about 12 KiB per stream and setting
// until the outputs are written (1,000 senders of 200 heartbeats each
// reached 6.7 GB), so one larger than --max-sweep-memory is refused before
// it starts, as soon as its first stream is read, naming the flag and what
// to do; within it, it runs.
func TestSweepMemoryBound(t *testing.T) {
	a := writeFile(t, "a.fdk", regularTrace(300))
	code, _, errOut := runCmd("--sweep", "-d", "chen,fixed", "--points", "100", "--max-sweep-memory", "1", a)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `a.fdk:3: sender "p": one stream keeps about 2440 KiB`)
	assert.Contains(t, errOut, "200 settings' results")
	assert.Contains(t, errOut, "--max-sweep-memory 1")
	assert.Contains(t, errOut, "--points")
	code, _, errOut = runCmd("--sweep", "-d", "chen,fixed", "--points", "40", "--max-sweep-memory", "1", a)
	assert.Equal(t, 0, code, errOut)
}

// TestStreamCountBound: a trace of more streams than --max-sweep-memory
// allows for their table (a million senders of one heartbeat each reached
// 5.5 GB, then failed) is refused while it is read, as soon as the sender
// past the bound appears, naming the file, the line, the bound and the
// flag; below the bound the run goes on.
func TestStreamCountBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n")
	for s := range 40 {
		for k := range 40 {
			fmt.Fprintf(&b, "s%d %d %d %d\n", s, k, int64(k)*1e8+int64(s), int64(k)*1e8+int64(s)+3e6)
		}
	}
	a := writeFile(t, "many.fdk", b.String())
	code, _, errOut := runCmd("-d", "chen,fixed", "--max-sweep-memory", "1", a) // 1 MiB / (2 × 20 KiB): 25 streams
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `many.fdk:1003: sender "s25": more than 25 streams`)
	assert.Contains(t, errOut, "--max-sweep-memory 1")
	assert.Contains(t, errOut, "--sender")
	code, _, errOut = runCmd("-d", "chen,fixed", "--max-sweep-memory", "1", "-s", "s1,s2,s3", a)
	assert.Equal(t, 0, code, errOut)
	// A run that sweeps counts its sweep's results too, while the trace
	// is read (a million senders grew to 2.85 GB when the sweep was
	// checked only once they were all loaded): 2 × 20 KiB + 20 settings ×
	// 12 KiB per stream, 3 streams in 1 MiB; s3 begins at line 123.
	code, _, errOut = runCmd("--sweep", "-d", "chen,fixed", "--points", "10", "--max-sweep-memory", "1", a)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `many.fdk:123: sender "s3": more than 3 streams`)
	assert.Contains(t, errOut, "280 KiB")
	assert.Contains(t, errOut, "20 settings' results of the sweep")
	assert.Contains(t, errOut, "--max-sweep-memory 1 MiB")
	code, _, errOut = runCmd("--sweep", "-d", "chen,fixed", "--points", "10", "--max-sweep-memory", "1", "-s", "s1,s2,s3", a)
	assert.Equal(t, 0, code, errOut)
}

// TestStreamCountBoundBeforeFlush: the sender past --max-sweep-memory's
// bound is refused as soon as its first record is read (the load's
// pipeline counts the senders the checker holds), not once the checker
// lets its records go: a malformed line right after that record is
// never reached.
func TestStreamCountBoundBeforeFlush(t *testing.T) {
	var b strings.Builder
	b.WriteString("#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n")
	for s := range 26 {
		for k := range 40 {
			fmt.Fprintf(&b, "s%d %d %d %d\n", s, k, int64(k)*1e8+int64(s), int64(k)*1e8+int64(s)+3e6)
			if s == 25 {
				break
			}
		}
	}
	b.WriteString("not a record\n")
	a := writeFile(t, "many.fdk", b.String())
	code, _, errOut := runCmd("-d", "chen,fixed", "--max-sweep-memory", "1", a) // 25 streams, as in TestStreamCountBound
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `many.fdk:1003: sender "s25": more than 25 streams`)
	assert.NotContains(t, errOut, "many.fdk:1004")
}

// The outputs are the same, byte for byte and in the same order, on one
// core or two, with the streams in memory or spooled (whose sweeps run
// together on goroutines of their own).
func TestSameOutputsAnyCores(t *testing.T) {
	dir := t.TempDir()
	outputs := func(procs, limit int) (string, map[string][]byte) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		code, out, errOut := runIn(withMem(limit), "--points", "5", "--no-progress", "--force", "--out", dir, "--td-max", "900ms")
		require.Equal(t, 0, code, errOut)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		files := map[string][]byte{}
		for _, e := range entries {
			if filepath.Ext(e.Name()) == ".pdf" {
				continue // stamped with the time it was written
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			files[e.Name()] = b
		}
		return out, files
	}
	for _, limit := range []int{defaultMemHeartbeats, 100} {
		out1, files1 := outputs(1, limit)
		out2, files2 := outputs(2, limit)
		require.Equal(t, out1, out2, "stdout, limit %d", limit)
		require.Equal(t, len(files1), len(files2))
		for f, b := range files1 {
			require.Equal(t, b, files2[f], "%s, limit %d", f, limit)
		}
	}
}

// The run's soft memory limit is set once, after loading: heapBytes plus
// the table's and the sweep's results of its streams, so that a run of
// many streams is not held to the bound of a few, plus the tasks of the
// sweep replayed with the table (replayTogether) when the streams are in
// memory.
func TestMemoryLimitFromStreams(t *testing.T) {
	a := writeFile(t, "a.fdk", regularTrace(300))
	b := writeFile(t, "b.fdk", regularTrace(300))
	tasks := int64(runtime.GOMAXPROCS(0)) * sweepTaskBytes
	sweep := []string{"-d", "chen,fixed", "--sweep", "--points", "5", a, b}
	for _, tc := range []struct {
		args []string
		mem  int
		want int64
	}{
		{[]string{"-d", "chen,fixed", a}, defaultMemHeartbeats, heapBytes + 2*tableBytesPerResult},
		{[]string{"-d", "chen,fixed", a, b}, defaultMemHeartbeats, heapBytes + 2*2*tableBytesPerResult},
		{sweep, defaultMemHeartbeats, heapBytes + 2*(2*tableBytesPerResult+2*5*sweepBytesPerPoint) + tasks},
		{sweep, 100, heapBytes + 2*(2*tableBytesPerResult+2*5*sweepBytesPerPoint)}, // spooled
	} {
		var got []int64
		p := withMem(tc.mem)
		p.limitMemory = func(n int64) int64 { got = append(got, n); return 0 }
		code, _, errOut := runIn(p, append([]string{"--no-progress"}, tc.args...)...)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, []int64{tc.want}, got, tc.args)
	}
}
