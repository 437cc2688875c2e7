package main

import (
	"bytes"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace/tracetest"

	"github.com/fdkit/fdkit/trace"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runCmd(args ...string) (code int, stdout, stderr string) {
	return runIn(process{stdin: strings.NewReader(""), memHeartbeats: defaultMemHeartbeats}, args...)
}

// runIn runs fdreplay in process p (its standard input, its bound on
// heartbeats in memory).
func runIn(p process, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(p, args, &out, &errb)
	return code, out.String(), errb.String()
}

// withStdin is the process of runCmd reading in for "-".
func withStdin(in io.Reader) process {
	return process{stdin: in, memHeartbeats: defaultMemHeartbeats}
}

// withMem is the process of runCmd keeping at most mem heartbeats in
// memory.
func withMem(mem int) process {
	return process{stdin: strings.NewReader(""), memHeartbeats: mem}
}

// tableRows returns the table rows of detector name in out.
func tableRows(out, name string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| "+name+" ") {
			n++
		}
	}
	return n
}

func TestDefaultTrace(t *testing.T) {
	code, out, errOut := runCmd()
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)
	assert.Contains(t, out, "sender p (traces/jitter.fdkit.gz)")
	assert.Contains(t, out, "clocks synchronized: TD = τ − σ")
	for _, d := range detectorNames {
		assert.Equal(t, 1, tableRows(out, d), "one row for %s", d)
	}
	assert.NotContains(t, out, "tuning:")
	assert.NotContains(t, out, "NaN")
}

func TestTunerAndDetectorSelection(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCmd("-d", "chen,phi,fixed", "--points", "12", "--td-max", "1s", "--mr-max", "0.5", "--qap-min", "0.99", "--out", dir)
	require.Equal(t, 0, code, errOut)
	table, _, _ := strings.Cut(out, "operating points:") // the out-of-sample table has rows per detector too
	assert.Equal(t, 1, tableRows(table, "chen"))
	assert.Equal(t, 1, tableRows(table, "phi-normal"))
	assert.Equal(t, 0, tableRows(out, "bertier"))
	assert.Contains(t, out, "operating points: the smallest setting that meets TD ≤ 1s MR ≤ 0.5/s QAP ≥ 0.99")
	f, err := os.Open(filepath.Join(dir, "curves.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, 1+3*12)
	for _, name := range []string{"table.csv", "table.json", "curves.json", "p-mr-td.png", "p-mr-td.svg", "p-qap-td.png", "p-qap-td.svg"} {
		assert.FileExists(t, filepath.Join(dir, name))
	}
}

// TestLIP6Excerpt replays the nine senders of the LIP6 excerpt. Without
// -short it writes every output (18 plots in PNG and SVG and the report)
// and checks each sender's plot. With -short, where encoding those PNGs
// took most of the test's time under -race, the nine senders are replayed
// with the same sweep but printed only, and the files, PNG included, are
// written for one sender by a second run: every assertion on the numbers
// stays, and the plot path is still exercised.
func TestLIP6Excerpt(t *testing.T) {
	path := tracetest.Shared(t, "planetlab-lip6/recv_node1_excerpt.txt")
	dir := t.TempDir()
	senders := []string{"0", "2", "3", "4", "5", "6", "7", "8", "9"}
	args := []string{path, "--points", "10", "--out", dir}
	if testing.Short() {
		args = []string{path, "--points", "4", "--sweep"}
	}
	code, out, errOut := runCmd(args...)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 9, strings.Count(out, "\nsender ")+boolInt(strings.HasPrefix(out, "sender ")), "nine senders")
	assert.Equal(t, 9, strings.Count(out, "clocks not synchronized: TD = τ − A + d̄"))
	for _, d := range detectorNames {
		assert.Equal(t, 9, tableRows(out, d), "a row per sender for %s", d)
	}
	assertAllEvaluated(t, out)
	if testing.Short() {
		code, out, errOut = runCmd(path, "--points", "4", "--sender", "4", "--out", dir)
		require.Equal(t, 0, code, errOut)
		assert.Equal(t, 1, strings.Count(out, "clocks not synchronized: TD = τ − A + d̄"), "one sender")
		for _, d := range detectorNames {
			assert.Equal(t, 1, tableRows(out, d), "a row for sender 4 for %s", d)
		}
		assertAllEvaluated(t, out)
		senders = []string{"4"}
		assert.NoFileExists(t, filepath.Join(dir, "0-qap-td.png"), "only sender 4 was replayed")
	}
	for _, s := range senders {
		assert.FileExists(t, filepath.Join(dir, s+"-qap-td.png"))
		assert.FileExists(t, filepath.Join(dir, s+"-qap-td.svg"))
	}
	assert.FileExists(t, filepath.Join(dir, "index.html"))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestHelpAndErrors(t *testing.T) {
	code, out, _ := runCmd("-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "Examples:")
	assert.Contains(t, out, "--td-max")

	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"/nonexistent/trace.txt"}, 1, "no such file"},
		{[]string{"--bogus"}, 2, "unknown flag"},
		{[]string{"-d", "nosuch"}, 2, "unknown detector"},
		{[]string{"--range", "chen=5"}, 2, "NAME=LO:HI"},
		{[]string{"--range", "chen=9:1"}, 2, "the upper bound 1 is below the lower bound 9"},
		// Equal bounds would give --points copies of one setting (user44's F11).
		{[]string{"--range", "fixed=1ns:1ns", "--points", "3"}, 2, `--range "fixed=1ns:1ns": both bounds are the same value: a range needs LO < HI; for that one setting give -d 'fixed(timeout=1ns)'`},
		{[]string{"--range", "phi=2:2.0:log"}, 2, "for that one setting give -d 'phi-normal(threshold=2)'"},
		{[]string{"--range", "chen= 100ms :100ms"}, 2, "for that one setting give -d 'chen(alpha=100ms)'"},
		{[]string{"-d", "chen window=10..200000"}, 2, `sweep "chen window=10..200000": window up to 200000: over 100000, the largest window`},
		{[]string{"--range", "chen=-5:10"}, 2, "lower bound -5 out of range: chen's alpha must be ≥ 0"},
		{[]string{"--range", "sfd=-1ms:10ms"}, 2, "sfd's sm1 must be ≥ 0"},
		{[]string{"--range", "fixed=0:1s"}, 2, "lower bound 0 out of range: fixed's timeout must be > 0"},
		{[]string{"--range", "jacobson=-1:4"}, 2, "jacobson's k must be ≥ 0"},
		{[]string{"--range", "phi=0.1:4"}, 2, "below log10 2"},
		{[]string{"--range", "akka=0:4"}, 2, "phi-akka's threshold must be > 0"},
		{[]string{"--range", "satzger=0.5:2"}, 2, "upper bound 2 out of range: satzger's threshold must be > 0 and ≤ 1"},
		{[]string{"--range", "bertier=1:2"}, 2, "no parameter"},
		{[]string{"--range", "akka=100ms:1s"}, 2, "phi-akka's parameter has no unit: got 100ms"},
		{[]string{"--range", "jacobson=1:2s"}, 2, "jacobson's parameter has no unit: got 2s"},
		{[]string{"--range", "sfd=0:1e300"}, 2, "upper bound 1e+300 ms is beyond the longest duration"},
		{[]string{"--range", "chen=0:1e13"}, 2, "upper bound 1e+13 ms is beyond the longest duration"},
		{[]string{"--range", "fixed=1:9.3e12"}, 2, "beyond the longest duration"},
		{[]string{"--interval", "2000000h"}, 2, `invalid argument "2000000h" for "--interval" flag: want a positive duration up to`},
		{[]string{"--qap-min", "2"}, 2, `"--qap-min" flag: want a probability in (0, 1]`},
		{[]string{"--sender", "nobody"}, 1, `no heartbeat of --sender "nobody"`},
		{[]string{"--clock", "maybe"}, 2, "--clock"},
		// An empty value (an unset shell variable) is not the flag's absence.
		{[]string{"--out", ""}, 2, "--out: empty value (omit the flag to do without it)"},
		{[]string{"--report", ""}, 2, "--report: empty value"},
		{[]string{"--config", ""}, 2, "--config: empty value"},
		{[]string{"--sender", ""}, 2, "--sender: empty value"},
		{[]string{"--columns", ""}, 2, "--columns: empty value"},
	}
	for _, c := range cases {
		code, _, errOut := runCmd(c.args...)
		assert.Equal(t, c.code, code, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
		assert.True(t, strings.HasPrefix(errOut, "fdreplay: "), "%v: %q", c.args, errOut)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
	}

	bad := filepath.Join(t.TempDir(), "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("4 1 100 200 3\n4 x 300 400 3\n"), 0o644))
	code, _, errOut := runCmd(bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "bad.txt")
	assert.Contains(t, errOut, "bad.txt:2: field seq")

	far := filepath.Join(t.TempDir(), "far.txt")
	require.NoError(t, os.WriteFile(far, []byte("4 1 0 1 3\n4 2 3000000000000000000 3000000000000000001 3\n"), 0o644))
	code, _, errOut = runCmd(far)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `far.txt: sender "4": the timestamps give Δ = 833333h20m0s, over the longest Δ fdreplay replays, 25620h (its settings go up to 30Δ, which must fit in a time.Duration): if the timestamps are in another unit, correct it (convert the file: --unit applies to CSV with --columns); else give --interval, at most 25620h`)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
	// The --interval the message suggests is one the flag takes (user44's
	// F15: it said "give --interval", and --interval refused the estimate).
	code, _, errOut = runCmd("--interval", "25620h", far)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no heartbeat evaluated", "past the flag and the interval check")
	code, _, errOut = runCmd("--interval", "25620h1s", far)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `"--interval" flag: want a positive duration up to 25620h (omit`)
	code, _, errOut = runCmd("--timeout", "256200h1s", far)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `"--timeout" flag: want a positive duration up to 256200h, the default 10Δ at the largest --interval`)
}

// A short trace in fdkit format (written by trace.Writer): the window
// shrinks to a quarter of the stream so every detector is evaluated.
func TestShortTraceOwnFormat(t *testing.T) {
	recs, err := trace.Generate(trace.GenConfig{Interval: 50 * time.Millisecond, Duration: 30 * time.Second,
		Delay: trace.Delay{Dist: trace.DelayNormal, Mean: 10 * time.Millisecond, SD: 3 * time.Millisecond}}, trace.NewRand(5))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "short.fdkit.gz")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := trace.NewWriter(f, trace.Header{Interval: 50 * time.Millisecond}, trace.Gzip)
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())

	code, out, errOut := runCmd(path)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "600 heartbeats")
	assert.Contains(t, out, "Δ = 50ms")
	assert.Contains(t, out, "window n = 150 (stream shorter than 2×1000)")
	assert.Contains(t, out, "warm-up 150 heartbeats")
	assertAllEvaluated(t, out)
	for _, d := range detectorNames {
		assert.Equal(t, 1, tableRows(out, d), d)
	}
}

// assertAllEvaluated checks that every detector row of the tables in out
// has a positive "evaluated" count (a failed replay prints "–").
func assertAllEvaluated(t *testing.T, out string) {
	t.Helper()
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, "|")
		if len(f) < 5 || !slices.Contains(detectorNames, strings.TrimSpace(f[1])) {
			continue
		}
		rows++
		n, err := strconv.Atoi(strings.TrimSpace(f[3]))
		if assert.NoError(t, err, "row %q", l) {
			assert.Positive(t, n, "row %q", l)
		}
	}
	assert.Positive(t, rows)
}

// A stream on which no detector evaluates anything (one heartbeat; a stream
// shorter than the warm-up) is an error when it is the only one, and a
// warning (the stream is skipped) when other streams are fine; never exit
// 0 with a table of error messages.
func TestNothingEvaluated(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.txt")
	require.NoError(t, os.WriteFile(one, []byte("4 1 100000000 120000000 3\n"), 0o644))
	var ten strings.Builder
	for i := 1; i <= 10; i++ {
		ten.WriteString("4 " + strconv.Itoa(i) + " " + strconv.Itoa(i*100) + "000000 " + strconv.Itoa(i*100+20) + "000000 3\n")
	}
	short := filepath.Join(dir, "ten.txt")
	require.NoError(t, os.WriteFile(short, []byte(ten.String()), 0o644))

	for _, args := range [][]string{
		{"--interval", "100ms", one},
		{"--warmup", "20", short},
		{"--warmup", "20", "--out", filepath.Join(dir, "res"), short},
	} {
		code, out, errOut := runCmd(args...)
		assert.Equal(t, 1, code, "%v", args)
		assert.Empty(t, out, "%v", args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		assert.Contains(t, errOut, "sender 4: no heartbeat evaluated", "%v", args)
	}
	code, out, errOut := runCmd("--warmup", "20", "--out", filepath.Join(dir, "res"), short)
	require.Equal(t, 1, code)
	assert.Equal(t, "fdreplay: "+short+":1: sender 4: no heartbeat evaluated: 10 fresh heartbeat(s), all in the warm-up of 20 (window n = 2; lower --warmup or --window)\n", errOut)
	assert.Empty(t, out)
	assert.NoDirExists(t, filepath.Join(dir, "res"), "nothing written, the directory the run made removed")

	// Two senders, one too short: the other is still replayed.
	var two strings.Builder
	two.WriteString(ten.String())
	for i := 1; i <= 40; i++ {
		two.WriteString("5 " + strconv.Itoa(i) + " " + strconv.Itoa(i*100) + "000000 " + strconv.Itoa(i*100+25) + "000000 3\n")
	}
	mixed := filepath.Join(dir, "mixed.txt")
	require.NoError(t, os.WriteFile(mixed, []byte(two.String()), 0o644))
	// One stray record of sender 4 among sender 5's: its Δ cannot be
	// estimated without --interval, and it is skipped with the same
	// warning as a stream too short for the warm-up, naming its line
	// (user48's F1: it stopped the run, naming no line, and with
	// --interval it was skipped).
	stray := filepath.Join(dir, "stray.txt")
	require.NoError(t, os.WriteFile(stray, []byte(strings.Join(strings.SplitAfter(two.String(), "\n")[10:30], "")+"4 1 100000000 120000000 3\n"+strings.Join(strings.SplitAfter(two.String(), "\n")[30:], "")), 0o644))
	// Sender 4's arrivals all at one instant (user48's F23: replayed into
	// made-up TDs, exit 0).
	var frozenText strings.Builder
	for i := 1; i <= 40; i++ {
		frozenText.WriteString("4 " + strconv.Itoa(i) + " " + strconv.Itoa(i*100) + "000000 5000000000 3\n")
		frozenText.WriteString("5 " + strconv.Itoa(i) + " " + strconv.Itoa(i*100) + "000000 " + strconv.Itoa(i*100+25) + "000000 3\n")
	}
	frozen := filepath.Join(dir, "frozen.txt")
	require.NoError(t, os.WriteFile(frozen, []byte(frozenText.String()), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--warmup", "15", "--window", "5", mixed}, mixed + ":1: sender 4: no heartbeat evaluated: 10 fresh heartbeat(s), all in the warm-up of 15"},
		{[]string{"--window", "5", frozen}, frozen + ":1: sender 4: no heartbeat evaluated: 40 arrivals within 0s, where 40 heartbeats take about 3.9s at Δ = 100ms: the arrival times do not move (a receive log timestamped in one batch?); nothing to replay"},
		{[]string{"--window", "5", stray}, stray + ":21: sender 4: no heartbeat evaluated: the heartbeat interval cannot be estimated from its 1 heartbeat(s) (give --interval)"},
		{[]string{"--window", "5", "--interval", "100ms", stray}, stray + ":21: sender 4: no heartbeat evaluated: 1 fresh heartbeat(s), all in the warm-up of 5"},
	} {
		code, out, errOut = runCmd(c.args...)
		require.Equal(t, 0, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, "fdreplay: warning: skipped "+c.want, "%v", c.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		assert.NotContains(t, out, "sender 4 ", "%v", c.args)
		assert.Contains(t, out, "sender 5 ", "%v", c.args)
		assertAllEvaluated(t, out)
	}
	// Nothing left: the stray record alone is the error, naming its line;
	// so is the frozen stream.
	code, out, errOut = runCmd("--sender", "4", stray)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "fdreplay: "+stray+":21: sender 4: no heartbeat evaluated: the heartbeat interval cannot be estimated from its 1 heartbeat(s) (give --interval)\n", errOut)
	code, out, errOut = runCmd("--sender", "4", frozen)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "fdreplay: "+frozen+":1: sender 4: no heartbeat evaluated: 40 arrivals within 0s, where 40 heartbeats take about 3.9s at Δ = 100ms: the arrival times do not move (a receive log timestamped in one batch?); nothing to replay\n", errOut)
}

// With --warmup 0, a stream that no detector evaluates was held by the
// detectors' own warm-up, and the message says so (it said that the one
// heartbeat "was in warm-up" and to lower --warmup, already 0).
func TestNothingEvaluatedPastZeroWarmUp(t *testing.T) {
	one := writeFile(t, "one.txt", "4 1 100000000 120000000 3\n")
	code, out, errOut := runCmd("--warmup", "0", "-d", "chen", "--interval", "100ms", one)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "fdreplay: "+one+":1: sender 4: no heartbeat evaluated: 1 fresh heartbeat(s), no warm-up, and the detectors were still warming up after them (the adaptive ones fill a window of n = 2 first; lower --window or replay a longer stream)\n", errOut)

	three := writeFile(t, "three.txt", "4 1 100000000 120000000 3\n4 2 200000000 220000000 3\n4 3 300000000 320000000 3\n")
	code, out, errOut = runCmd("--warmup", "1", "--window", "5", "-d", "chen", "--interval", "100ms", three)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "fdreplay: "+three+":1: sender 4: no heartbeat evaluated: 3 fresh heartbeat(s), warm-up 1, and the detectors were still warming up after the other 2 (the adaptive ones fill a window of n = 5 first; lower --window or replay a longer stream)\n", errOut)
}

// A window set in a spec is named as given, not as --window, which does
// not change it; and it has --window's bound (user44's F9: the message
// said "n = 50; lower --window" for chen(window=100000), and a spec took
// windows up to 1048576 where --window stops at 100000).
func TestSpecWindowNamed(t *testing.T) {
	three := writeFile(t, "three.txt", "4 1 100000000 120000000 3\n4 2 200000000 220000000 3\n4 3 300000000 320000000 3\n")
	prefix := "fdreplay: " + three + ":1: sender 4: no heartbeat evaluated: 3 fresh heartbeat(s), warm-up 1, and the detectors were still warming up after the other 2 "
	code, _, errOut := runCmd("--warmup", "1", "-d", "chen(window=100000)", "--interval", "100ms", three)
	assert.Equal(t, 1, code)
	assert.Equal(t, prefix+"(the adaptive ones fill their windows first: chen(window=100000): window=100000; lower it in the spec or replay a longer stream)\n", errOut)
	code, _, errOut = runCmd("--warmup", "1", "--window", "50", "-d", "chen(window=100000),chen", "--interval", "100ms", three)
	assert.Equal(t, 1, code)
	assert.Equal(t, prefix+"(the adaptive ones fill their windows first: n = 50 from --window, and chen(window=100000): window=100000; lower them or replay a longer stream)\n", errOut)

	for _, d := range []string{"chen(window=100001)", "2w-fd(short-window=1048576)", "chen window=10..200000", "phi-akka(window=100001) threshold=1..8"} {
		code, _, errOut = runCmd("-d", d, three)
		assert.Equal(t, 2, code, d)
		assert.Contains(t, errOut, ": over 100000, the largest window fdreplay takes, in a spec as with --window (each detector and swept setting keeps n samples)", d)
	}
	code, _, errOut = runCmd("--window", "100001", three)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "want a size from 1 to 100000")
	yaml := writeFile(t, "d.yaml", "detectors:\n  - chen(window=200000)\n")
	code, _, errOut = runCmd("--config", yaml, three)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `spec "chen(window=200000)": window=200000: over 100000`)
}

// An output directory that cannot be created or written is reported before
// the replay, not after every table is printed.
func TestOutUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	code, out, errOut := runCmd("--out", filepath.Join(file, "sub"))
	assert.Equal(t, 1, code)
	assert.Empty(t, out, "no table before the error")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
	assert.Contains(t, errOut, "--out "+filepath.Join(file, "sub")+": cannot create the directory: not a directory")

	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o555))
		code, out, errOut = runCmd("--out", ro)
		assert.Equal(t, 1, code)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "--out "+ro+": cannot write there: permission denied")
	}
}

// The header accounts for every heartbeat: fresh ones are warm-up or
// evaluated, and stale ones (reordered or duplicated) are said so. On the
// default trace 2562 heartbeats are 1000 of warm-up, 1372 evaluated and
// 190 reordered.
func TestHeaderCountsStale(t *testing.T) {
	code, out, errOut := runCmd("-d", "fixed")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "2562 heartbeats over 4m59.925s, Δ = 100ms, loss 14.60%, 190 stale (190 reordered, 0 duplicates), warm-up 1000 heartbeats")
	assert.Contains(t, out, "|      1372 |")
}

// Streams get distinct names even when files share a base name: the names
// label table rows and curves and name the plot files, which must not
// overwrite each other. (One file given twice is refused:
// TestSameTraceTwiceRefused.)
func TestStreamNamesUnique(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		if i == 20 {
			continue // a loss, so that the plots have a suspicion to draw
		}
		b.WriteString("4 " + strconv.Itoa(i) + " " + strconv.Itoa(i*100) + "000000 " + strconv.Itoa(i*100+20) + "000000 3\n")
	}
	var paths []string
	for _, d := range []string{"a", "b", "c"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o755))
		p := filepath.Join(dir, d, "t.txt")
		require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
		paths = append(paths, p)
	}
	out := filepath.Join(dir, "res")
	code, _, errOut := runCmd("-d", "fixed,chen", "--points", "3", "--out", out, paths[0], paths[1], paths[2])
	require.Equal(t, 0, code, errOut)
	f, err := os.Open(filepath.Join(out, "table.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, r := range rows[1:] {
		names[r[0]] = true
	}
	assert.Equal(t, map[string]bool{paths[0] + ":4": true, paths[1] + ":4": true, paths[2] + ":4": true}, names)
	pngs, err := filepath.Glob(filepath.Join(out, "*-qap-td.png"))
	require.NoError(t, err)
	assert.Len(t, pngs, 3, "one plot per stream")
}

// With a single evaluated heartbeat nothing was observed over time: MR and
// QAP are shown as "–", not as a perfect 0 and 1.000000.
func TestZeroObservedTime(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		b.WriteString("4 " + strconv.Itoa(i) + " " + strconv.Itoa(i*100) + "000000 " + strconv.Itoa(i*100+20) + "000000 3\n")
	}
	p := filepath.Join(t.TempDir(), "ten.txt")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	code, out, errOut := runCmd("-d", "fixed,chen", "--warmup", "9", "--window", "2", p)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, "1.000000")
	assert.Equal(t, 2, strings.Count(out, "|         1 |        0 |        – |   – |"), out)
}

// A sweep without any mistake draws its MR figure at the 3/T bounds and
// has no 1 − QAP figure (log scale): the command says so instead of
// leaving the file silently missing.
func TestNoQAPPlotIsReported(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCmd("-d", "fixed", "--range", "fixed=5s:10s", "--points", "2", "--out", dir)
	require.Equal(t, 0, code, errOut)
	assert.FileExists(t, filepath.Join(dir, "p-mr-td.pdf"))
	assert.NoFileExists(t, filepath.Join(dir, "p-qap-td.png"))
	assert.Equal(t, "fdreplay: note: no 1 − QAP plot for sender p: no swept point ever suspected (0 has no place on a log scale)\n", errOut)
}

// When no setting meets the targets, the tuner names the nearest one and
// by how much it misses.
func TestTunerNearest(t *testing.T) {
	code, out, errOut := runCmd("-d", "fixed,bertier", "--points", "6", "--td-max", "100ms", "--mr-max", "0.0001")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `fixed +\| none meets; nearest timeout=[0-9.]+ms misses by [0-9.]+×`, out)
	assert.Regexp(t, `bertier +\| none meets; nearest \(single point\) misses by [0-9.e+]+×`, out)
}

// Against QAP ≥ 1 every point that suspects at all misses by an infinite
// factor: the tuner names the most accurate point and says why, rather
// than "misses by +Inf×".
func TestTunerNearestQAPOne(t *testing.T) {
	code, out, errOut := runCmd("-d", "jacobson", "--range", "jacobson=0.5:2", "--points", "5", "--qap-min", "1")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `jacobson +\| none meets; nearest k=2 still makes mistakes \(QAP ≥ 1 allows none\)`, out)
	assert.NotContains(t, out, "Inf")
}

// --mr-max 0 is a target of its own, settings that made no mistake (not
// refused as "want a positive rate"): the fixed timeout meets it at a long enough T,
// and jacobson, whose swept K all make mistakes, is named with the reason.
func TestTunerMRZero(t *testing.T) {
	code, out, errOut := runCmd("-d", "fixed,jacobson", "--range", "jacobson=0.5:2", "--points", "5", "--mr-max", "0")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "operating points: the smallest setting that meets MR = 0 (no mistake)")
	assert.Regexp(t, `jacobson +\| none meets; nearest k=2 still makes mistakes \(MR = 0 allows none\)`, out)
	assert.Regexp(t, `fixed +\| timeout=[0-9.]+ms +\| [0-9.]+ ±[0-9.]+ +\| \[[0-9.]+, [0-9.]+\] +\| +0 \(≤[0-9.]+\) +\| +1\.000000 `, out)
}

// A trace holding a header and no record names the file and says it holds
// no heartbeat, rather than blaming a --sender filter that was not given;
// with --sender the filter is named.
func TestNoHeartbeatNamesInput(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "hdr.fdkit")
	require.NoError(t, os.WriteFile(empty, []byte("#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n"), 0o644))
	code, _, errOut := runCmd("-d", "chen", empty)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "hdr.fdkit: no heartbeat in the input to replay")
	assert.NotContains(t, errOut, "sender filter")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)

	code, _, errOut = runCmd("-d", "chen", "--sender", "q", empty)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `--sender "q"`)
}

// An entry of --detectors that does not parse is reported once: an unknown
// name lists the known families and presets a single time.
func TestDetectorErrorListsNamesOnce(t *testing.T) {
	code, _, errOut := runCmd("-d", "bogus")
	assert.Equal(t, 2, code)
	assert.Equal(t, 1, strings.Count(errOut, "chen"), "families listed once: %q", errOut)
	code, _, errOut = runCmd("-d", "chen(alpha=5)")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "alpha")
	assert.NotContains(t, errOut, "satzger", "a parameter error does not list the families: %q", errOut)
}
