package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/trace/tracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFile writes text to name in a new temporary directory and returns
// the path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// replayTables runs fdreplay and returns stdout with the trace's path
// replaced by FILE, so that replays of two files can be compared.
func replayTables(t *testing.T, path string, args ...string) (out, errOut string) {
	t.Helper()
	code, out, errOut := runCmd(append(args, path)...)
	require.Equal(t, 0, code, errOut)
	return strings.ReplaceAll(out, path, "FILE"), errOut
}

func TestOneBadTimestampLIP6(t *testing.T) {
	// LIP6 sender 4 with one arrival moved one hour later: the line is
	// named, the record left out, and every number equals the replay of the
	// trace without that line: one bad line must not sink every
	// detector's QAP without a word.
	src, err := os.ReadFile(tracetest.Shared(t, tracetest.LIP6Excerpt))
	require.NoError(t, err)
	lines := strings.Split(string(src), "\n")
	bad := -1
	seen := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "4 ") {
			if seen++; seen == 1500 {
				bad = i
				break
			}
		}
	}
	require.Positive(t, bad)
	var s, q, sent, arr, hops int64
	_, err = fmt.Sscan(lines[bad], &s, &q, &sent, &arr, &hops)
	require.NoError(t, err)
	moved := append([]string(nil), lines...)
	moved[bad] = fmt.Sprintf("4 %d %d %d %d", q, sent, arr+int64(time.Hour), hops)
	without := append(append([]string(nil), lines[:bad]...), lines[bad+1:]...)

	badPath := writeFile(t, "t.txt", strings.Join(moved, "\n"))
	cleanPath := writeFile(t, "t.txt", strings.Join(without, "\n"))
	got, errOut := replayTables(t, badPath, "--sender", "4")
	want, wantErr := replayTables(t, cleanPath, "--sender", "4")
	assert.Empty(t, wantErr)
	// The record left out was received: the header counts it apart, and
	// its loss is the original trace's, not the one without the line
	// (user48's F18).
	orig, _ := replayTables(t, writeFile(t, "t.txt", string(src)), "--sender", "4")
	loss := regexp.MustCompile(`, loss [0-9.]+%`)
	require.Len(t, loss.FindAllString(got, -1), 1)
	assert.Equal(t, loss.FindString(orig), loss.FindString(got))
	assert.NotEqual(t, loss.FindString(want), loss.FindString(got))
	assert.Contains(t, got, loss.FindString(orig)+", 1 left out by the input check,")
	assert.NotContains(t, want, "by the input check")
	assert.Equal(t, loss.ReplaceAllString(want, ""), strings.Replace(loss.ReplaceAllString(got, ""), ", 1 left out by the input check", "", 1))
	assert.Contains(t, errOut, "left out 1 record(s) that cannot be right (1 arrival)")
	assert.Contains(t, errOut, fmt.Sprintf("%s:%d: sender \"4\": arrival", badPath, bad+1))

	code, _, errOut := runCmd("--strict", "--sender", "4", badPath)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, fmt.Sprintf("%s:%d: sender \"4\": arrival", badPath, bad+1))
	assert.Contains(t, errOut, "--strict")
	// The run stopped: the message does not say the record was left out.
	assert.NotContains(t, errOut, "left out (")
	assert.Contains(t, errOut, "without --strict it would be left out with a warning")
}

// csvTrace is a CSV trace of sender a in epoch milliseconds, Δ = 1 s.
func csvTrace(n int, row func(i int) string) string {
	var b strings.Builder
	b.WriteString("host,seq,sent_ms,recv_ms\n")
	base := int64(1_700_000_000_000)
	for i := range n {
		if r := row(i); r != "" {
			b.WriteString(r)
			continue
		}
		fmt.Fprintf(&b, "a,%d,%d,%d\n", i, base+int64(i)*1000+int64(i%5), base+int64(i)*1000+20+int64(i*7%13))
	}
	return b.String()
}

func TestOneBadCSVRow(t *testing.T) {
	// Row 300 is "a,99,-5,-3": it is named and left out, so it neither
	// inflates a mean TD nor hides behind a count of reordered heartbeats.
	badPath := writeFile(t, "t.csv", csvTrace(800, func(i int) string {
		if i == 300 {
			return "a,99,-5,-3\n"
		}
		return ""
	}))
	cleanPath := writeFile(t, "t.csv", csvTrace(800, func(i int) string {
		if i == 300 {
			return "-" // dropped below
		}
		return ""
	}))
	clean, err := os.ReadFile(cleanPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cleanPath, []byte(strings.Replace(string(clean), "-", "", 1)), 0o644))
	args := []string{"--columns", "host,seq,sent_ms,recv_ms", "--unit", "ms"}
	got, errOut := replayTables(t, badPath, args...)
	want, _ := replayTables(t, cleanPath, args...)
	// The row's number, 99, was received before: it stands for no
	// missing number, as a copy (atk26's N1; one with a wrong number
	// unknown would take 300 off the loss, atk25's F3), and 300 is lost.
	require.Contains(t, want, "loss 0.12%, warm-up")
	assert.Equal(t, want, strings.Replace(got, ", 1 left out by the input check,", ",", 1))
	assert.Contains(t, got, "loss 0.12%, 1 left out by the input check, warm-up")
	assert.Contains(t, errOut, "it was received before: left out")
	assert.Contains(t, errOut, badPath+":302: sender \"a\"") // header is line 1
	assert.NotContains(t, got, "reordered")
}

func TestSequenceRestart(t *testing.T) {
	// Sender a restarts halfway (sequence numbers from 0 again, times go
	// on): neither "cannot estimate the heartbeat interval" nor the second
	// incarnation's heartbeats counted stale. Each incarnation is replayed
	// as its own stream, exactly as
	// a file holding only that incarnation.
	rec := func(i int) string {
		sent := int64(i)*int64(100*time.Millisecond) + int64(i%3)*int64(time.Millisecond)
		return fmt.Sprintf("a %d %d %d\n", i%1500, sent, sent+int64(2*time.Millisecond)+int64(i*7%11)*int64(time.Millisecond))
	}
	head := "#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n"
	var all, first, second strings.Builder
	for _, b := range []*strings.Builder{&all, &first, &second} {
		b.WriteString(head)
	}
	for i := range 3000 {
		all.WriteString(rec(i))
		if i < 1500 {
			first.WriteString(rec(i))
		} else {
			second.WriteString(rec(i))
		}
	}
	path := writeFile(t, "r.fdk", all.String())
	code, out, errOut := runCmd("-d", "chen,phi,fixed", path)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, path+":1503: sender \"a\": sequence restarts at 0")
	assert.Contains(t, errOut, "each incarnation is replayed as its own stream")
	assert.NotContains(t, out, "stale")
	assert.Contains(t, out, "sender a@1 ")
	assert.Contains(t, out, "sender a@2 ")
	for i, part := range []string{first.String(), second.String()} {
		p := writeFile(t, "r.fdk", part)
		code, want, errOut := runCmd("-d", "chen,phi,fixed", p)
		require.Equal(t, 0, code, errOut)
		// The tables of epoch i+1 equal those of the file holding it.
		tbl := want[strings.Index(want, "+---"):]
		assert.Contains(t, out, tbl, "epoch %d", i+1)
	}
	code, _, errOut = runCmd("--strict", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "sequence restarts")
}

func TestTruncatedLastLine(t *testing.T) {
	// A recorder killed mid-write: the last line is cut inside the arrival
	// field, without a final newline: it is left out with a warning, not
	// read as a record with a wrong arrival.
	head := "#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n"
	var b strings.Builder
	b.WriteString(head)
	for i := range 2000 {
		sent := int64(i) * int64(100*time.Millisecond)
		fmt.Fprintf(&b, "p %d %d %d\n", i, sent, sent+int64(time.Millisecond)+int64(i*7%11)*int64(time.Millisecond))
	}
	full := b.String()
	lastStart := strings.LastIndex(full[:len(full)-1], "\n") + 1
	cut := full[:len(full)-7] // inside the arrival field
	clean := full[:lastStart]
	cutPath := writeFile(t, "c.fdk", cut)
	cleanPath := writeFile(t, "c.fdk", clean)
	got, errOut := replayTables(t, cutPath, "-d", "chen,fixed")
	want, _ := replayTables(t, cleanPath, "-d", "chen,fixed")
	assert.Equal(t, want, strings.Replace(got, ", 1 left out by the input check,", ",", 1))
	assert.Contains(t, got, "loss 0.00%, 1 left out by the input check, warm-up")
	assert.Contains(t, errOut, cutPath+":2002: sender \"p\": last line has no line ending")
	assert.Contains(t, errOut, "left out 1 record(s)")
}

func TestUnitContradictsInterval(t *testing.T) {
	// A millisecond CSV read with --unit ns is refused, not run with
	// "Δ = 1µs".
	p := writeFile(t, "t.csv", csvTrace(400, func(int) string { return "" }))
	cols := []string{"--columns", "host,seq,sent_ms,recv_ms"}
	code, _, errOut := runCmd(append(cols, "--unit", "ns", p)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "Δ = 1µs, shorter than the 1ms a heartbeat plausibly has")
	assert.Contains(t, errOut, "--unit is ns")
	code, _, errOut = runCmd(append(cols, "--unit", "us", "--interval", "1s", p)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "the timestamps give Δ ≈ 1ms but --interval is 1s")
	code, _, errOut = runCmd(append(cols, "--unit", "ms", "--interval", "1s", p)...)
	assert.Equal(t, 0, code, errOut)
}

// TestFrozenArrivals (user48 F23): a stream whose arrival instants do not
// move (3,000 records at one instant, with sends frozen too or 100 ms
// apart) is not replayed, naming its first line, the sender, the span and
// what Δ gives (skipped with a warning beside other streams,
// TestNothingEvaluated; the error when alone), not replayed into made-up
// detection times (before: exit 0 and a TD of
// 51,150 ms for chen); a stream whose arrivals span a hundredth of that
// is still replayed.
func TestFrozenArrivals(t *testing.T) {
	write := func(name string, arrival func(i int) int64) string {
		var b strings.Builder
		b.WriteString("#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n")
		for i := range 3000 {
			fmt.Fprintf(&b, "p %d %d %d\n", i, 1_000_000_000+int64(i)*100_000_000, arrival(i))
		}
		return writeFile(t, name, b.String())
	}
	frozen := write("frozen.fdk", func(int) int64 { return 2_000_000_000 })
	code, _, errOut := runCmd("-d", "chen", frozen)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `frozen.fdk:3: sender p: no heartbeat evaluated: 3000 arrivals within 0s, where 3000 heartbeats take about 4m59.9s at Δ = 100ms: the arrival times do not move`)
	// 3 s for 3,000 heartbeats: a hundredth of 299.9 s, the bound's side
	// that is kept.
	slow := write("slow.fdk", func(i int) int64 { return 2_000_000_000 + int64(i)*1_000_334 })
	code, _, errOut = runCmd("-d", "chen", slow)
	assert.Equal(t, 0, code, errOut)
}

func TestStdin(t *testing.T) {
	text := csvTrace(400, func(int) string { return "" })
	p := writeFile(t, "t.csv", text)
	args := []string{"--columns", "host,seq,sent_ms,recv_ms", "--unit", "ms", "-d", "chen"}
	want, _ := replayTables(t, p, args...)
	code, got, errOut := runIn(withStdin(strings.NewReader(text)), append(args, "-")...)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, strings.ReplaceAll(want, "FILE", "<stdin>"), got)
}

// gzipBomb writes concatenated gzip members of one repeated LIP6 record,
// inflating to total bytes, and returns the path.
func gzipBomb(t *testing.T, total int) string {
	t.Helper()
	line := "4 1 1000 2000 1\n"
	plain := strings.Repeat(line, (4<<20)/len(line))
	var one bytes.Buffer
	zw, err := gzip.NewWriterLevel(&one, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write([]byte(plain))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	p := filepath.Join(t.TempDir(), "bomb.gz")
	f, err := os.Create(p)
	require.NoError(t, err)
	for range total / len(plain) {
		_, err = f.Write(one.Bytes())
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	return p
}

func TestGzipBomb(t *testing.T) {
	// A few MB of gzip members inflating to 4 GiB of valid records.
	// The run stops at the decompression bound, its memory bounded.
	p := gzipBomb(t, 4<<30)
	code, _, errOut := runCmd("--max-decompressed", "4MiB", p)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, p+":")
	assert.Contains(t, errOut, "gzip input decompresses to more than 4194304 bytes")
	assert.Contains(t, errOut, "raise --max-decompressed")
	if testing.Short() {
		t.Skip("the default ratio bound reads 64 MiB first; skipped in -short")
	}
	code, _, errOut = runCmd(p)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "decompression bomb?")
	assert.Contains(t, errOut, "raise --max-ratio")
}

// A decompression bound passed while the format is still being detected
// (in the first 64 KiB) names its flag as one passed later does, and the
// input as within no bound, not as damaged (user48's F27: "want a
// complete gzip stream: ... (the limit)", no flag).
func TestDecompressionBoundNamesFlag(t *testing.T) {
	for _, c := range []struct {
		name string
		comp trace.Compression
	}{
		{"t.fdk.gz", trace.Gzip},
		{"t.fdk.xz", trace.XZ},
	} {
		path := filepath.Join(t.TempDir(), c.name)
		f, err := os.Create(path)
		require.NoError(t, err)
		w, err := trace.NewWriter(f, trace.Header{Interval: 100 * time.Millisecond}, c.comp)
		require.NoError(t, err)
		for i := range 200 {
			require.NoError(t, w.Write(trace.Record{Sender: "p", Seq: uint64(i), HasSeq: true, Sent: time.Duration(i) * 100 * time.Millisecond, HasSent: true, Arrival: time.Duration(i)*100*time.Millisecond + 5*time.Millisecond, HasArrival: true}))
		}
		require.NoError(t, w.Close())
		require.NoError(t, f.Close())
		code, _, errOut := runCmd("-d", "chen", "--max-decompressed", "1KiB", path)
		assert.Equal(t, 1, code, c.name)
		comp := strings.TrimPrefix(filepath.Ext(c.name), ".")
		if comp == "gz" {
			comp = "gzip"
		}
		assert.Equal(t, "fdreplay: "+path+":1: want input within the decompression bounds: "+comp+" input decompresses to more than 1024 bytes (the limit) (raise --max-decompressed if the trace is genuine)\n", errOut, c.name)
	}
}

func TestSizeFlags(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "123": 123, "4MiB": 4 << 20, "2 GB": 2e9, "1TiB": 1 << 40, "7b": 7} {
		got, err := parseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "-1", "1.5GB", "12XB", "99999999999TiB", "GiB"} {
		_, err := parseSize(bad)
		assert.Error(t, err, bad)
	}
	code, _, errOut := runCmd("--max-decompressed", "lots")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--max-decompressed \"lots\"")
	code, _, errOut = runCmd("--max-ratio", "NaN")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--max-ratio NaN")
}

// A factor-1000 unit mistake is an error naming --unit and --interval, not
// a full table computed at Δ = 100 µs (MR 424/s); --interval confirms an
// unusual Δ.
func TestUnitOffByThousand(t *testing.T) {
	rows := func(delay int) string {
		var b strings.Builder
		b.WriteString("host,seq,sent,recv\n")
		for i := range 600 {
			fmt.Fprintf(&b, "a,%d,%d,%d\n", i, 1_000_000+i*100, 1_000_000+i*100+delay+i%7)
		}
		return b.String()
	}
	cols := []string{"--columns", "host,seq,sent,recv", "-d", "fixed,chen"}
	// Milliseconds read as microseconds (seconds read as milliseconds is
	// the same factor): Δ = 100 µs.
	p := writeFile(t, "ms.csv", rows(40))
	code, _, errOut := runCmd(append(cols, "--unit", "us", p)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "Δ = 100µs, shorter than the 1ms a heartbeat plausibly has")
	assert.Contains(t, errOut, "--unit is us")
	assert.Contains(t, errOut, "--interval 100µs")
	code, _, errOut = runCmd(append(cols, "--unit", "us", "--interval", "100us", p)...)
	assert.Equal(t, 0, code, errOut)
	code, _, errOut = runCmd(append(cols, "--unit", "ms", p)...)
	assert.Equal(t, 0, code, errOut)

	// Milliseconds read as seconds: Δ = 100 s is possible, a mean
	// one-way delay of 40 s is not.
	code, _, errOut = runCmd(append(cols, "--unit", "s", p)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "mean one-way delay A − σ of 42.976s, longer than 10s, with Δ = 1m40s")
	assert.Contains(t, errOut, "--unit is s")

	// A LIP6 trace whose nanoseconds were written as microseconds.
	var b strings.Builder
	for i := range 600 {
		fmt.Fprintf(&b, "4 %d %d %d 14\n", i+1, 9_301_432_084+i*100_000, 47_816_110_312+i*100_000+i%9)
	}
	code, _, errOut = runCmd("-d", "fixed", writeFile(t, "lip6.txt", b.String()))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "Δ = 100µs, shorter than the 1ms")
	assert.Contains(t, errOut, "--unit applies to CSV")
	assert.Contains(t, errOut, "--interval 100µs")
}

// A sender named in --sender that the input lacks is an error naming it
// (--sender p,q replayed p and dropped q without a word); a sender named
// twice is fine.
func TestSenderMissing(t *testing.T) {
	code, _, errOut := runCmd("-d", "fixed", "--sender", "p,q")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `--sender: no heartbeat of sender "q" in the input`)
	code, _, errOut = runCmd("-d", "fixed", "-s", "p", "-s", "p")
	assert.Equal(t, 0, code, errOut)
	// An incarnation's stream name is no sender id (user48's F24): the
	// error says what --sender takes; an id merely holding '@' does not
	// get the hint.
	for _, c := range []struct {
		args []string
		code int
		hint string
	}{
		{[]string{"--sender", "p@2"}, 1, `; "p@2" names an incarnation of a restarted sender, which --sender does not select: give the sender's id, "p", and every incarnation of it is replayed, each as its own stream`},
		{[]string{"--sender", "p,p@1"}, 2, `; "p@1" names an incarnation of a restarted sender`},
		{[]string{"--sender", "a@b"}, 1, ""},
		{[]string{"--sender", "p@"}, 1, ""},
	} {
		code, _, errOut = runCmd(append([]string{"-d", "fixed"}, c.args...)...)
		assert.Equal(t, c.code, code, "%v", c.args)
		if c.hint == "" {
			assert.NotContains(t, errOut, "incarnation", "%v", c.args)
		} else {
			assert.Contains(t, errOut, c.hint, "%v", c.args)
		}
	}
}

// A receiver clock stepped back for good (an hour, from a record on) is no
// outlier for the sanity check, and sorting by arrival made half the
// stream stale and the rest one long outage: QAP 0.0095, exit code 0. It
// is an error naming the line, in memory and spooled alike.
func TestArrivalClockStepBack(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		at := int64(i) * int64(100*time.Millisecond)
		if i >= 1500 {
			at -= int64(time.Hour)
		}
		fmt.Fprintf(&b, "4 %d %d %d 14\n", i, int64(9e15)+int64(i)*int64(100*time.Millisecond), int64(5e16)+at)
	}
	path := writeFile(t, "back.txt", b.String())
	for _, spool := range []bool{false, true} {
		p := withMem(defaultMemHeartbeats)
		if spool {
			p = withMem(100)
		}
		code, _, errOut := runIn(p, "--no-progress", "-d", "chen", path)
		assert.Equal(t, 1, code, "spool %v: %s", spool, errOut)
		assert.Contains(t, errOut, "back.txt:1501: sender \"4\": arrival 59m59.9s before the one at ", "spool %v", spool)
	}
}

// TestDuplicatesLeaveResults: a trace with every record twice is replayed
// as the trace itself: the duplicates are counted (records, stale) and
// dropped, and the window of a short stream, a quarter of its length, is
// taken without them (user44's F12: n = 100 instead of 50 changed every
// result).
func TestDuplicatesLeaveResults(t *testing.T) {
	var clean, dup strings.Builder
	for k := range 200 {
		sent := int64(k)*100_000_000 + int64(k*7919%2_000_000)
		line := fmt.Sprintf("4 %d %d %d 3\n", k, sent, sent+5_000_000+int64(k*104729%30_000_000))
		clean.WriteString(line)
		dup.WriteString(line + line)
	}
	out := map[string]string{}
	for name, text := range map[string]string{"clean.txt": clean.String(), "dup.txt": dup.String()} {
		dir := filepath.Join(t.TempDir(), "o")
		code, stdout, errOut := runCmd("-d", "chen,phi,fixed", "--points", "4", "--out", dir, writeFile(t, name, text))
		require.Equal(t, 0, code, errOut)
		if name == "dup.txt" {
			assert.Contains(t, stdout, "400 heartbeats over 19.922s, Δ = 100ms, loss 0.00%, 200 stale (0 reordered, 200 duplicates), warm-up 50 heartbeats, window n = 50 (stream shorter than 2×1000)")
		}
		for _, f := range []string{"table.csv", "curves.csv"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err)
			// Blank the columns records and stale (the 7th and 8th).
			var rows []string
			for _, row := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				c := strings.Split(row, ",")
				require.Greater(t, len(c), 8, row)
				c[6], c[7] = "", ""
				rows = append(rows, strings.Join(c, ","))
			}
			out[name] += f + "\n" + strings.Join(rows, "\n") + "\n"
		}
	}
	assert.Equal(t, out["clean.txt"], out["dup.txt"])
	assert.Contains(t, out["dup.txt"], "4,chen,alpha,ms,100,one-pass,,,50,150,")
}

// Restart notes are listed up to maxListedFindings and the rest counted,
// as the records left out are (user48's F35: 20 notes of 2,999 restarts
// and nothing more).
func TestRestartNotesCounted(t *testing.T) {
	for _, c := range []struct {
		restarts int
		more     string // the last line, "" when every restart is listed
	}{
		{1, ""},
		{maxListedFindings, ""},
		{maxListedFindings + 1, "fdreplay: note: r.fdk: ... and 1 more sequence restart(s), 21 in all\n"},
		{2999, "fdreplay: note: r.fdk: ... and 2979 more sequence restart(s), 2999 in all\n"},
	} {
		var r sanityReport
		for i := range c.restarts {
			r.add(&trace.Finding{File: "r.fdk", Line: 40*i + 41, Sender: "p", Kind: trace.FindingRestart, Detail: "sequence restarts at 0"}, i+2)
		}
		var b strings.Builder
		r.print(&b, "r.fdk")
		lines := strings.SplitAfter(strings.TrimSuffix(b.String(), "\n"), "\n")
		notes := min(c.restarts, maxListedFindings)
		if c.more == "" {
			assert.Len(t, lines, notes, "%d restarts", c.restarts)
			assert.NotContains(t, b.String(), "more", "%d restarts", c.restarts)
			continue
		}
		require.Len(t, lines, notes+1, "%d restarts", c.restarts)
		assert.Equal(t, c.more, lines[notes]+"\n", "%d restarts", c.restarts)
	}
}

// A record without an arrival stops the run naming its line, and its
// sender only when it has one: an emission log has no sender column
// (user48's F21: 'sender ""').
func TestNoArrivalNamesWhatIsReplayed(t *testing.T) {
	for _, c := range []struct {
		args []string
		text string
		want string
	}{
		{[]string{"--format", "lip6-emission"}, "numseq timestamp_start_send timestamp_end_send\n0 1000000000 1000000100\n1 1100000000 1100000100\n", ":2: record seq 0 has no arrival time (an emission log?): fdreplay replays reception logs, whose records have arrival times\n"},
		{nil, "#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\np 0 1 -\n", `:3: sender "p": record seq 0 has no arrival time (an emission log?)`},
	} {
		p := writeFile(t, "e.txt", c.text)
		code, _, errOut := runCmd(append(append([]string{"-d", "chen"}, c.args...), p)...)
		assert.Equal(t, 1, code, errOut)
		assert.Contains(t, errOut, "fdreplay: "+p+c.want)
	}
}

// A clock flag that cannot do what it was given for says so (user48's
// F20): --clock sync on one-way delays of hours (the TDs include the
// clocks' offset), --delay-offset on synchronized clocks (TD = τ − σ does
// not use it).
func TestClockNotes(t *testing.T) {
	write := func(name string, delay time.Duration) string {
		var b strings.Builder
		b.WriteString("#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n")
		for i := range 3000 {
			sent := time.Duration(i) * 100 * time.Millisecond
			fmt.Fprintf(&b, "p %d %d %d\n", i, sent, sent+delay+time.Duration(i%7)*time.Millisecond)
		}
		return writeFile(t, name, b.String())
	}
	far, near := write("far.fdk", 2*time.Hour), write("near.fdk", 5*time.Millisecond)
	for _, c := range []struct {
		args []string
		want string // "" for no note
	}{
		{[]string{"--clock", "sync", far}, "fdreplay: warning: --clock sync: the one-way delays A − σ of sender p (" + far + ") are beyond any network's (about 2h0m0s for sender p): the clocks are not synchronized, and every TD includes their offset (--clock auto measures A − σ and chooses)\n"},
		{[]string{far}, ""},
		{[]string{"--clock", "sync", near}, ""},
		{[]string{"--delay-offset", "50ms", near}, "fdreplay: note: --delay-offset 50ms is not used for sender p (" + near + "): its clocks are synchronized, TD = τ − σ; the offset applies to the arrival-based TD of unsynchronized clocks only\n"},
		{[]string{"--delay-offset", "50ms", "--clock", "unsync", near}, ""},
	} {
		code, _, errOut := runCmd(append([]string{"--no-progress", "-d", "fixed"}, c.args...)...)
		require.Equal(t, 0, code, "%v: %s", c.args, errOut)
		if c.want == "" {
			assert.NotContains(t, errOut, "--clock sync:", "%v", c.args)
			assert.NotContains(t, errOut, "--delay-offset", "%v", c.args)
			continue
		}
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
}

// checkArrivalsMove's message saturates the time the records would take
// (10^10 records at Δ = 1 h is past the largest time.Duration) instead of
// overflowing the conversion to a negative duration.
func TestArrivalsMoveHugeSpan(t *testing.T) {
	err := checkArrivalsMove(trace.Stats{HasArrival: true, Records: 10_000_000_000}, time.Hour)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "take about 2562047h47m16.854775807s at Δ = 1h0m0s")
}
