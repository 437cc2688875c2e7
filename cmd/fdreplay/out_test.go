package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/internal/outfile"
)

func TestMain(m *testing.M) {
	if os.Getenv("FDREPLAY_TEST_MAIN") == "1" {
		os.Args = append([]string{"fdreplay"}, os.Args[1:]...)
		main()
		return
	}
	os.Exit(m.Run())
}

// lockedBuffer collects a process's stderr for the test and its reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startPaused starts fdreplay (this test binary, through main) with the
// outfile pause hook and waits until stderr says it paused at point what.
func startPaused(t *testing.T, what string, args ...string) (*exec.Cmd, *lockedBuffer, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FDREPLAY_TEST_MAIN=1", outfile.TestPauseEnv+"="+what)
	var errb lockedBuffer
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	paused := make(chan struct{})
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		sc := bufio.NewScanner(pipe)
		seen := false
		for sc.Scan() {
			errb.add(sc.Text() + "\n")
			if !seen && strings.Contains(sc.Text(), "outfile: paused at "+what) {
				seen = true
				close(paused)
			}
		}
	}()
	select {
	case <-paused:
	case <-eof:
		t.Fatalf("fdreplay %v ended without pausing after %q: %s", args, what, errb.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("fdreplay %v did not pause after %q: %s", args, what, errb.String())
	}
	return cmd, &errb, eof
}

// exitCode waits for cmd and returns its exit status.
func exitCode(t *testing.T, cmd *exec.Cmd, eof <-chan struct{}) int {
	t.Helper()
	<-eof // stderr read to the end before Wait closes the pipe
	err := cmd.Wait()
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	require.True(t, errors.As(err, &ee), "%v", err)
	return ee.ExitCode() // -1 when killed by the signal itself
}

// entries lists dir, hidden entries included.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// SIGINT while --out is being written (after table.csv, before the other
// files) stops fdreplay with status 130, says so, and leaves no file behind,
// neither a curves.csv cut mid-row nor a table.csv without its curves. SIGTERM once
// every file is written but none moved in: status 143, nothing left either.
func TestSignalDuringOutLeavesNoPartialFile(t *testing.T) {
	for _, c := range []struct {
		sig   syscall.Signal
		after string
		code  int
		name  string
	}{
		{syscall.SIGINT, "staged table.csv", 130, "SIGINT"},
		{syscall.SIGTERM, "commit", 143, "SIGTERM"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "results")
			cmd, errb, eof := startPaused(t, c.after, "-d", "fixed,chen", "--points", "4", "--no-progress", "--out", dir)
			require.NoError(t, cmd.Process.Signal(c.sig))
			assert.Equal(t, c.code, exitCode(t, cmd, eof), errb.String())
			assert.Contains(t, errb.String(), "fdreplay: interrupted by "+c.name+": stopped and removed")
			// The run made results/: it removed it (user44's D6), with
			// no partial file, no staging directory, no lock file.
			assert.NoDirExists(t, dir)
			assert.DirExists(t, filepath.Dir(dir), "the directory that was there stays")
		})
	}
}

// An interrupted run over an earlier run's results (--force) leaves those
// results whole.
func TestSignalKeepsEarlierResults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	code, _, errOut := runCmd("-d", "fixed", "--points", "3", "--out", dir)
	require.Equal(t, 0, code, errOut)
	before := map[string][]byte{}
	for _, n := range entries(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		before[n] = b
	}
	require.Contains(t, before, "curves.csv")

	cmd, errb, eof := startPaused(t, "staged curves.csv", "-d", "fixed,chen", "--points", "4", "--no-progress", "--force", "--out", dir)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, exitCode(t, cmd, eof), errb.String())
	after := map[string][]byte{}
	for _, n := range entries(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		after[n] = b
	}
	assert.Equal(t, before, after, "the earlier results are untouched")
}

// An --out directory holding an earlier run's results is refused without
// --force, and nothing in it changes; with --force the earlier files this
// run does not write are removed, and files fdreplay did not write stay.
func TestOutReuseNeedsForce(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("old-sender-mr-td.png", "old plot")
	write("mine.txt", "the user's notes")
	code, out, errOut := runCmd("-d", "fixed", "--points", "3", "--out", dir)
	assert.Equal(t, 2, code)
	assert.Empty(t, out, "refused before the replay")
	assert.Contains(t, errOut, "--out "+dir+" already holds results of an earlier run (old-sender-mr-td.png): give --force")
	assert.Equal(t, []string{"mine.txt", "old-sender-mr-td.png"}, entries(t, dir))

	code, out, errOut = runCmd("-d", "fixed", "--points", "3", "--force", "--out", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "removed 1 files of an earlier run from "+dir+" (--force)")
	names := entries(t, dir)
	assert.NotContains(t, names, "old-sender-mr-td.png")
	assert.Contains(t, names, "mine.txt")
	assert.Contains(t, names, "table.csv")
	assert.Contains(t, names, manifestName)
	assert.False(t, slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, ".partial-") }))

	// The manifest records every result, but --force removes only names
	// of files fdreplay writes: a list edited to name the user's files
	// (or anything else) deletes none of them, while an earlier run's plot
	// of a sender no longer replayed is removed though the list omits it.
	manifest, err := os.ReadFile(filepath.Join(dir, manifestName))
	require.NoError(t, err)
	assert.Contains(t, string(manifest), "curves.json\n")
	write("extra-report.html", "not a name fdreplay writes")
	write("gone-sender-qap-td.svg", "an earlier run's plot")
	require.NoError(t, os.WriteFile(filepath.Join(dir, manifestName),
		append(manifest, "extra-report.html\nmine.txt\n"...), 0o644))
	code, _, errOut = runCmd("-d", "fixed", "--points", "3", "--out", dir)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "already holds results of an earlier run")
	code, out, errOut = runCmd("-d", "fixed", "--points", "3", "--force", "--out", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "removed 1 files of an earlier run from "+dir+" (--force)")
	names = entries(t, dir)
	assert.NotContains(t, names, "gone-sender-qap-td.svg")
	assert.Contains(t, names, "extra-report.html")
	assert.Contains(t, names, "mine.txt")
	b, err := os.ReadFile(filepath.Join(dir, "mine.txt"))
	require.NoError(t, err)
	assert.Equal(t, "the user's notes", string(b))
}

// The names --force may remove are exactly those fdreplay writes.
func TestIsResultName(t *testing.T) {
	for _, n := range []string{"index.html", "table.csv", "table.json", "curves.csv", "curves.json", "verdict.json", manifestName,
		"4-mr-td.png", "4-mr-td.svg", "4-qap-td.png", "4-qap-td.svg", "4-mr-td.pdf", "4-qap-td.pdf", "t.txt_4-mr-td.png"} {
		assert.True(t, isResultName(n), n)
	}
	for _, n := range []string{"unrelated.txt", "mine.txt", "report.html", "table.csv.bak", "-", "..", ".",
		"4-mr-td.eps", "mr-td.png", "sub/4-mr-td.png", ".partial-fdreplay-1"} {
		assert.False(t, isResultName(n), n)
	}
}

// A run that fails after staging began leaves nothing in --out.
func TestFailedRunLeavesNoStaging(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	code, _, _ := runCmd("--sender", "nobody", "--out", dir)
	assert.Equal(t, 1, code)
	assert.NoDirExists(t, dir, "made by the run, removed empty")
}

// Streams whose names map to the same file name ("a/b" and "a_b" both
// give "a_b") each get their own plots: the second takes a numbered
// name instead of replacing the first's files (which the plots, written
// in parallel, would also race on).
func TestPlotNamesDistinctPerStream(t *testing.T) {
	var b strings.Builder
	b.WriteString("#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n")
	for k := range 300 {
		for i, s := range []string{"a/b", "a_b", "a:b"} {
			sent := int64(k) * int64(100*time.Millisecond)
			fmt.Fprintf(&b, "%s %d %d %d\n", s, k, sent, sent+int64(i+1)*int64(time.Millisecond)+int64(k%7)*1000)
		}
	}
	// Two 300-byte ids sharing their first 299 bytes (user48's F6: the
	// run failed at the very end, "file name too long"), an escape
	// sequence and a leading '.' (F7: raw on the terminal and in a file
	// name; hidden plots).
	long := strings.Repeat("x", 300)
	for k := range 300 {
		for i, s := range []string{long, long[1:] + "y", "\x1b[31mRED\x1b[0m", ".hidden"} {
			sent := int64(k) * int64(100*time.Millisecond)
			fmt.Fprintf(&b, "%s %d %d %d\n", s, k, sent, sent+int64(i+1)*int64(time.Millisecond)+int64(k%5)*1000)
		}
	}
	path := writeFile(t, "t.fdk", b.String())
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runIn(withMem(defaultMemHeartbeats), "-d", "chen", "--points", "3", "--no-progress", "--out", out, path)
	require.Equal(t, 0, code, stderr)
	for _, name := range []string{"a_b", "a_b~2", "a_b~3", strings.Repeat("x", 71) + "~0d4e2ca9", strings.Repeat("x", 71) + "~d71979b4", "_[31mRED_[0m", "_hidden"} {
		require.FileExists(t, filepath.Join(out, name+"-mr-td.svg"))
	}
	assert.Contains(t, stdout, `sender "\x1b[31mRED\x1b[0m" (`)
	assert.Contains(t, stdout, "sender .hidden (")
	assert.NotContains(t, stdout+stderr, "\x1b")
}

// shown quotes, with Go's escapes, a name holding a character that is
// not printable (user48's F7: an ANSI escape sequence in a sender id
// repainted the terminal).
func TestShown(t *testing.T) {
	for _, c := range []struct{ s, want string }{
		{"p", "p"},
		{"a b", "a b"},
		{"é/ü", "é/ü"},
		{"\x1b[31mRED\x1b[0m", `"\x1b[31mRED\x1b[0m"`},
		{"p\u202egnp.exe", `"p\u202egnp.exe"`},
		{"p\nq", `"p\nq"`},
		{"a\tb", `"a\tb"`},
		{"\xff", `"\xff"`},
		{"a\u00a0b", `"a\u00a0b"`},
	} {
		assert.Equal(t, c.want, shown(c.s), "%q", c.s)
	}
}

// plotBase bounds a name's length, cutting at a rune boundary and adding
// 8 hexadecimal digits of the whole name's SHA-256 (sha256sum's first 8).
func TestPlotBase(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"p", "p"},
		{"a/b\\c:d e", "a_b_c_d_e"},
		{strings.Repeat("x", 80), strings.Repeat("x", 80)},
		{strings.Repeat("x", 81), strings.Repeat("x", 71) + "~4d1f7bb8"},
		{strings.Repeat("x", 300), strings.Repeat("x", 71) + "~0d4e2ca9"},
		{strings.Repeat("x", 299) + "y", strings.Repeat("x", 71) + "~d71979b4"},
		{strings.Repeat("é", 50), strings.Repeat("é", 35) + "~2d18fe4b"}, // byte 71 is inside an é
		// user48's F7: control and format characters, a leading '.'
		// (hidden plots), the characters Windows refuses.
		{"\x1b[31mRED\x1b[0m", "_[31mRED_[0m"},
		{"p\u202egnp.exe", "p_gnp.exe"},
		{"a\x00b\nc\u00a0d\u2028e", "a_b_c_d_e"},
		{".hidden", "_hidden"},
		{"../../evil", "_._.._evil"},
		{"a.b.", "a.b."},
		{`a<b>"c|d?e*`, "a_b__c_d_e_"},
		{"\xff", "\ufffd"},
		{"é", "é"},
	} {
		got := plotBase(c.name)
		assert.Equal(t, c.want, got, "%q", c.name)
		assert.LessOrEqual(t, len(got), maxPlotBase, "%q", c.name)
	}
}

// --out never replaces or removes an input, with or without --force: an
// input in DIR named like a result (the commit would rename a result onto
// it), named like an earlier run's plot of a sender no longer replayed
// (--force would remove it), or reached there through a hard link. The
// refusal names the input and comes before the replay (user44's F2).
func TestOutNeverReplacesAnInput(t *testing.T) {
	trace := multiSenderTrace(200)
	for _, c := range []struct{ name, link string }{{"table.csv", ""}, {"gone-mr-td.svg", ""}, {"verdict.json", "t.fdk"}} {
		for _, force := range []bool{false, true} {
			dir := t.TempDir()
			p := filepath.Join(dir, c.name)
			require.NoError(t, os.WriteFile(p, []byte(trace), 0o644))
			in, want := p, "--out "+dir+": the input "+p+" has the name of a file --out writes or replaces; move it out of "+dir+" or choose another directory\n"
			if c.link != "" {
				in = filepath.Join(t.TempDir(), c.link)
				require.NoError(t, os.Link(p, in))
				want = "--out " + dir + ": " + p + ", a file --out writes or replaces, is the input " + in + "; move it out of " + dir + " or choose another directory\n"
			}
			args := []string{"-s", "p", "-d", "fixed", "--points", "2", "--no-progress", "--out", dir, in}
			if force {
				args = append(args, "--force")
			}
			code, out, errOut := runCmd(args...)
			assert.Equal(t, 1, code, "%s force %v: %s", c.name, force, errOut)
			assert.Equal(t, "fdreplay: "+want, errOut, "force %v", force)
			assert.NotContains(t, out, "sender", "refused before the replay")
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, trace, string(b), "%s force %v: the input is untouched", c.name, force)
			assert.Equal(t, []string{c.name}, entries(t, dir))
		}
	}
}

// A second run into an --out directory that a run is writing fails at
// once, before its replay, naming the first run's PID, and changes nothing
// there; the first run's SIGINT leaves neither its files nor the lock
// file. Two runs into one new directory both succeeded and mixed their
// files (user44's F3).
func TestOutLockRefusesSecondRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	cmd, errb, eof := startPaused(t, "staged table.csv", "-d", "fixed,chen", "--points", "4", "--no-progress", "--out", dir)
	before := entries(t, dir)
	require.Contains(t, before, lockName)
	for _, force := range []bool{false, true} {
		args := []string{"-d", "fixed", "--points", "2", "--no-progress", "--out", dir}
		if force {
			args = append(args, "--force")
		}
		code, out, errOut := runCmd(args...)
		assert.Equal(t, 1, code, errOut)
		assert.Equal(t, fmt.Sprintf("fdreplay: --out %s: in use by fdreplay (pid %d): wait for it to end or choose another directory\n", dir, cmd.Process.Pid), errOut)
		assert.NotContains(t, out, "sender", "refused before the replay")
		assert.Equal(t, before, entries(t, dir))
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, exitCode(t, cmd, eof), errb.String())
	assert.NoDirExists(t, dir, "no lock file left, and the directory the run made removed")

	// The lock is free again: a run goes through, and leaves no lock file.
	code, _, errOut := runCmd("-d", "fixed", "--points", "2", "--no-progress", "--out", dir)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, entries(t, dir), lockName)
}

// A run killed by SIGKILL holds no lock any more: its lock file (and
// staging directory) stay, and the next run takes the file over and
// removes it.
func TestOutLockOfKilledRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	cmd, _, eof := startPaused(t, "staged table.csv", "-d", "fixed", "--points", "2", "--no-progress", "--out", dir)
	require.NoError(t, cmd.Process.Kill())
	assert.Equal(t, -1, exitCode(t, cmd, eof))
	require.Contains(t, entries(t, dir), lockName)
	code, _, errOut := runCmd("-d", "fixed", "--points", "2", "--no-progress", "--out", dir)
	require.Equal(t, 0, code, errOut)
	names := entries(t, dir)
	assert.Contains(t, names, "table.csv")
	assert.NotContains(t, names, lockName)
	assert.False(t, slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, ".partial-") }))
}

// The lock held in this process refuses a run as another process's does;
// a file of the lock's name that is not a lock file (the user's) is left
// as it is and the run refused; a lock file left with a PID and no lock
// is taken over.
func TestOutLockFile(t *testing.T) {
	dir := t.TempDir()
	l, err := lockOut(dir, nil)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, lockName))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%d\n", os.Getpid()), string(b))
	code, _, errOut := runCmd("-d", "fixed", "--points", "2", "--no-progress", "--out", dir)
	assert.Equal(t, 1, code)
	assert.Equal(t, fmt.Sprintf("fdreplay: --out %s: in use by fdreplay (pid %d): wait for it to end or choose another directory\n", dir, os.Getpid()), errOut)
	l.release()
	l.release()
	assert.Empty(t, entries(t, dir))

	path := filepath.Join(dir, lockName)
	require.NoError(t, os.WriteFile(path, []byte("my notes\n"), 0o644))
	code, _, errOut = runCmd("-d", "fixed", "--points", "2", "--no-progress", "--out", dir)
	assert.Equal(t, 1, code)
	assert.Equal(t, "fdreplay: --out "+dir+": "+path+" is not fdreplay's lock file (it holds something else): remove it or choose another directory\n", errOut)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "my notes\n", string(b))

	require.NoError(t, os.WriteFile(path, []byte("2147483646\n"), 0o644))
	code, _, errOut = runCmd("-d", "fixed", "--points", "2", "--no-progress", "--out", dir)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, entries(t, dir), lockName)
}

// A run stopped while it writes --out leaves nothing in $TMPDIR: the PDF
// backend's gofpdf-makefont-* directories (created in the temporary
// directory, removed by a defer that a fatal signal skips) are made in a
// directory of the staging directory, which goes with it. 45 of them had
// piled up in /tmp from interrupted test runs. The temporary directory is
// moved only while the PDFs are drawn, after the other files (rvM's item
// 6: it was moved for the whole write phase).
func TestSignalDuringPlotsLeavesNoTempDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "results")
	trace := filepath.Join(base, "t.fdkit")
	require.NoError(t, os.WriteFile(trace, []byte(multiSenderTrace(300)), 0o644))
	tmp := filepath.Join(base, "tmp")
	require.NoError(t, os.Mkdir(tmp, 0o700))
	t.Setenv("TMPDIR", tmp) // the child's, through os.Environ
	args := []string{"-d", "fixed,chen,phi", "--points", "8", "--no-progress", "--out", dir, trace}
	stagingDir := func() string {
		t.Helper()
		staging, err := filepath.Glob(filepath.Join(dir, ".partial-fdreplay-*"))
		require.NoError(t, err)
		require.Len(t, staging, 1, "%v", entries(t, dir))
		return staging[0]
	}

	// Paused with table.csv staged, while the other files are written:
	// the temporary directory is $TMPDIR's.
	cmd, errb, eof := startPaused(t, "staged table.csv", args...)
	assert.NoDirExists(t, filepath.Join(stagingDir(), ".tmp"), "no temporary directory of the PDFs' yet")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, exitCode(t, cmd, eof), errb.String())
	assert.NoDirExists(t, dir)

	// Paused with a PDF staged, while the PDFs are drawn by the other
	// jobs: the process's temporary directory is in the staging
	// directory, and every other file is staged.
	cmd, errb, eof = startPaused(t, "staged p-mr-td.pdf", args...)
	staging := stagingDir()
	assert.DirExists(t, filepath.Join(staging, ".tmp"), "the PDFs' temporary directory")
	for _, name := range []string{indexName, tableCSVName, verdictJSONName, "r@2-qap-td.svg"} {
		assert.FileExists(t, filepath.Join(staging, name))
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, exitCode(t, cmd, eof), errb.String())
	assert.NoDirExists(t, dir, "no partial file, no staging directory, and the directory the run made is gone")
	assert.Empty(t, entries(t, tmp), "nothing in $TMPDIR")

	// A run to the end: the .tmp directory is not moved into --out, and
	// $TMPDIR is left empty too.
	stdout, stderr, code := runMain(t, []string{"TMPDIR=" + tmp}, "-d", "fixed", "--points", "3", "--no-progress", "--out", dir, trace)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "wrote 30 files to "+dir)
	assert.NotContains(t, entries(t, dir), ".tmp")
	assert.Contains(t, entries(t, dir), "p-mr-td.pdf")
	assert.Empty(t, entries(t, tmp), "nothing in $TMPDIR")
}

// A run that made its --out directory, parents included, and fails or is
// stopped before the commit removes those it made (they are empty); a
// directory that was there stays, and so does one that holds anything.
func TestOutNewDirRemovedOnFailure(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b", "results")
	bad := filepath.Join(base, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("4 1 100 200 3\n4 x 300 400 3\n"), 0o644))
	code, _, errOut := runCmd("--no-progress", "-d", "chen", "--out", dir, bad)
	require.Equal(t, 1, code)
	assert.Contains(t, errOut, "bad.txt:2: field seq")
	assert.NoDirExists(t, filepath.Join(base, "a"), "a, a/b and a/b/results were made by the run")
	assert.FileExists(t, bad)

	// A parent that was there stays.
	require.NoError(t, os.Mkdir(filepath.Join(base, "a"), 0o755))
	code, _, _ = runCmd("--no-progress", "-d", "chen", "--out", dir, bad)
	require.Equal(t, 1, code)
	assert.Equal(t, []string{"a"}, entries(t, base)[:1])
	assert.Empty(t, entries(t, filepath.Join(base, "a")))

	// Stopped by SIGTERM, before the commit.
	cmd, errb, eof := startPaused(t, "commit", "-d", "fixed", "--points", "3", "--no-progress", "--out", dir)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 143, exitCode(t, cmd, eof), errb.String())
	assert.Empty(t, entries(t, filepath.Join(base, "a")))

	// A run that succeeds keeps it, of course.
	code, _, errOut = runCmd("--no-progress", "-d", "fixed", "--points", "3", "--out", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, entries(t, dir), "table.csv")
}
