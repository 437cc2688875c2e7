package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --report writes one self-contained page, and --out writes it as
// index.html next to the other results.
func TestReportFlag(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	code, out, errOut := runCmd("--report", path, "--points", "8", "--no-progress")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "wrote the report to "+path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	page := string(b)
	assert.Contains(t, page, "jitter.fdkit.gz, sender p")
	assert.Contains(t, page, "No verdict: give targets")
	// Without targets, SFD's defaults are said to be that (user44's D2).
	assert.Contains(t, page, "No targets given; the tuner below uses SFD’s default targets (docs/fdreplay.md): TD ≤ 1s, MR ≤ 0.01667/s, QAP ≥ 0.999.")
	assert.NotContains(t, page, "Targets: TD ≤ 1s")
	assert.NotContains(t, page, "src=")
	assert.NotContains(t, out, "curves (CSV", "a report run does not print the curves")

	outDir := filepath.Join(dir, "res")
	code, _, errOut = runCmd("--out", outDir, "--points", "4", "-d", "fixed,chen", "--qap-min", "0.99", "--no-progress")
	require.Equal(t, 0, code, errOut)
	idx, err := os.ReadFile(filepath.Join(outDir, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(idx), "Targets: QAP ≥ 0.99.")
	left, err := filepath.Glob(filepath.Join(outDir, ".partial-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file left behind")

	left, err = filepath.Glob(filepath.Join(dir, ".partial-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "--report leaves no staging behind")

	code, _, errOut = runCmd("--report", filepath.Join(dir, "no", "such", "dir", "r.html"), "--points", "2", "-d", "fixed")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "--report")
}

// findChromium returns a headless-capable Chromium, or "".
func findChromium() string {
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// TestReportInBrowser opens the report of the default trace in headless
// Chromium (Debian's chromium package; .ci/run installs it when missing):
// the page's script runs without an error (it marks the body data-ready and
// records any error in data-errors), the console shows no error, and a
// screenshot is taken (written to $FDKIT_REPORT_SCREENSHOT when set, as
// docs/img/fdreplay-report.png was). Skipped when no Chromium is installed;
// a crash of the browser process is retried once (runBrowser).
func TestReportInBrowser(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		t.Skip("no chromium in PATH (apt-get install -y chromium): the report's browser test did not run")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	code, _, errOut := runCmd("--report", path, "--no-progress")
	require.Equal(t, 0, code, errOut)
	chrome := headless(t, bin, dir)
	dom, logs := chrome("--virtual-time-budget=5000", "--dump-dom", "file://"+path)
	body := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	require.Contains(t, body, `data-ready="1"`, "the page's script ran to its end")
	assert.NotContains(t, body, "data-errors", "no script error")
	for _, l := range strings.Split(logs, "\n") {
		// The page writes nothing to the console; Chromium's log does
		// not give the level, so any console line fails the test.
		if strings.Contains(l, ":CONSOLE") {
			t.Errorf("console message: %s", l)
		}
	}
	assert.Equal(t, 2, strings.Count(dom, `<svg id="s0-`), "both plots in the DOM")

	shot := os.Getenv("FDKIT_REPORT_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(dir, "report.png")
	}
	chrome("--window-size=1200,2400", "--screenshot="+shot, "file://"+path)
	st, err := os.Stat(shot)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(50_000), "a screenshot with plots, not a blank page")
	t.Logf("screenshot: %s (%d bytes)", shot, st.Size())
}

// headless returns a function running the headless Chromium bin with
// args (profiles in dir), which returns its stdout and stderr and fails
// the test when the browser does. A crash of the browser process is
// retried once (runBrowser); the page's own errors are the caller's to
// judge and never retried.
func headless(t *testing.T, bin, dir string) func(args ...string) (stdout, stderr string) {
	runs := 0
	return func(args ...string) (stdout, stderr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
			"--enable-logging=stderr", "--v=0"}
		runs++
		o, e, err := runBrowser(ctx, bin, append(base, args...), func(attempt int) string {
			return filepath.Join(dir, fmt.Sprintf("profile-%d-%d", runs, attempt))
		})
		require.NoError(t, err, "chromium: %s", e)
		return o, e
	}
}

// --report naming a directory, or a file under a missing directory or
// under a regular file, fails before the replay (no "wrote" line, nothing
// replayed) with a message naming the flag and what was expected, never
// after the whole run with a bare "rename ... file exists".
func TestReportPathCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	for path, want := range map[string]string{
		dir:                                "is a directory; give a file name such as " + filepath.Join(dir, "report.html"),
		filepath.Join(dir, "no", "r.html"): "directory " + filepath.Join(dir, "no") + ": no such file or directory",
		filepath.Join(file, "r.html"):      file + " is not a directory",
	} {
		code, out, errOut := runCmd("--report", path, "--no-progress", "-d", "fixed", "--points", "2")
		assert.Equal(t, 1, code, path)
		assert.Contains(t, errOut, "--report "+path+": "+want)
		assert.NotContains(t, out, "sender", "failed before the replay: %s", out)
	}
	left, err := filepath.Glob(filepath.Join(dir, ".partial-*"))
	require.NoError(t, err)
	assert.Empty(t, left)
}

// --report replaces no existing file without --force, as --out does; the
// refusal comes before the replay and leaves the file as it was.
func TestReportRefusesExisting(t *testing.T) {
	path := writeFile(t, "r.html", "mine")
	code, out, errOut := runCmd("--report", path, "--no-progress", "-d", "fixed", "--points", "2")
	assert.Equal(t, 1, code, errOut)
	assert.Equal(t, "fdreplay: --report "+path+": the file exists: remove it, name a new one, or give --force to replace it\n", errOut)
	assert.NotContains(t, out, "sender", "refused before the replay")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "mine", string(b))

	code, out, errOut = runCmd("--report", path, "--force", "--no-progress", "-d", "fixed", "--points", "2")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "wrote the report to "+path)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<html")
}

// --report never replaces an input, even with --force: the trace under
// its own name, under another name for the same file (a hard link) or
// through a symbolic link, and the --config file.
func TestReportNeverReplacesAnInput(t *testing.T) {
	trace := writeFile(t, "t.fdk", multiSenderTrace(200))
	dir := t.TempDir()
	hard, soft := filepath.Join(dir, "hard.html"), filepath.Join(dir, "soft.html")
	require.NoError(t, os.Link(trace, hard))
	require.NoError(t, os.Symlink(trace, soft))
	cfg := writeFile(t, "c.yaml", "detectors:\n  - chen\n") // -d fixed below: fixed twice is refused
	for _, c := range []struct{ report, input string }{{trace, trace}, {hard, trace}, {soft, trace}, {cfg, cfg}} {
		for _, force := range []bool{false, true} {
			args := []string{"--report", c.report, "--no-progress", "-d", "fixed", "--points", "2", "--config", cfg, trace}
			if force {
				args = append(args, "--force")
			}
			code, out, errOut := runCmd(args...)
			assert.Equal(t, 1, code, "%s force %v: %s", c.report, force, errOut)
			assert.Equal(t, "fdreplay: --report "+c.report+": is the input "+c.input+"; name another file for the report\n", errOut, "force %v", force)
			assert.NotContains(t, out, "sender", "refused before the replay")
		}
	}
	b, err := os.ReadFile(trace)
	require.NoError(t, err)
	assert.Equal(t, multiSenderTrace(200), string(b))
	b, err = os.ReadFile(cfg)
	require.NoError(t, err)
	assert.Equal(t, "detectors:\n  - chen\n", string(b))
}

// --force does not let --report replace a write-protected file: the
// rename would, whatever the file's mode (user41 replaced a mode-444
// file as nobody).
func TestReportForceKeepsWriteProtected(t *testing.T) {
	path := writeFile(t, "r.html", "mine")
	require.NoError(t, os.Chmod(path, 0o444))
	code, _, errOut := runCmd("--report", path, "--force", "--no-progress", "-d", "fixed", "--points", "2")
	assert.Equal(t, 1, code, errOut)
	assert.Equal(t, "fdreplay: --report "+path+": the file is write-protected (mode -r--r--r--): --force replaces no file that could not be written in place; remove it or name a new one\n", errOut)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "mine", string(b))
}

// --report naming the index.html that --out writes (directly or through a
// link to the directory) is written once, with the --out files; any other
// name is a file of its own.
func TestReportIsOutIndex(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "res")
	require.NoError(t, os.Mkdir(out, 0o755))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(out, link))
	for _, c := range []struct {
		report string
		want   bool
	}{
		{filepath.Join(out, "index.html"), true},
		{filepath.Join(link, "index.html"), true},
		{filepath.Join(out, "report.html"), false},
		{filepath.Join(dir, "index.html"), false},
		{"", false},
	} {
		assert.Equal(t, c.want, reportIsOutIndex(options{out: out, report: c.report}), c.report)
	}
	assert.False(t, reportIsOutIndex(options{report: filepath.Join(out, "index.html")}), "no --out")

	code, stdout, errOut := runCmd("--out", out, "--report", filepath.Join(link, "index.html"), "--points", "4", "-d", "fixed", "--no-progress")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "wrote the report to "+filepath.Join(link, "index.html"))
	assert.Less(t, strings.Index(stdout, " files to "+out), strings.Index(stdout, "wrote the report to"),
		"the report is named once the --out files are in place: %q", stdout)
	idx, err := os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(idx), "<html")
	left, err := filepath.Glob(filepath.Join(out, ".partial-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no staging left behind")
}

// --report naming a file that --out writes into the same directory (or
// that --force would remove there as an earlier run's), directly or
// through a link to the directory, is refused before the replay: the
// --out file replaced the report while the run said it wrote it
// (user44's F1). index.html is the exception (TestReportIsOutIndex).
func TestReportNotAnOutFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "res")
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(out, link))
	for _, report := range []string{
		filepath.Join(out, "table.csv"), filepath.Join(out, "curves.json"), filepath.Join(out, "verdict.json"),
		filepath.Join(out, "p-mr-td.pdf"), filepath.Join(out, "x-qap-td.png"), filepath.Join(out, manifestName),
		filepath.Join(out, lockName), filepath.Join(link, "table.json"),
	} {
		code, stdout, errOut := runCmd("--out", out, "--report", report, "--points", "2", "-d", "fixed", "--no-progress")
		assert.Equal(t, 1, code, "%s: %s", report, errOut)
		assert.Equal(t, "fdreplay: --report "+report+": --out "+out+" writes or removes a file of that name, which would replace the report; name another file (--out writes the report itself as index.html)\n", errOut)
		assert.NotContains(t, stdout, "sender", "refused before the replay")
		assert.NoDirExists(t, out, "%s: nothing written, the directory the run made removed", report)
	}
	// Another name in the directory is a report of its own.
	report := filepath.Join(out, "report.html")
	code, stdout, errOut := runCmd("--out", out, "--report", report, "--points", "2", "-d", "fixed", "--no-progress")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "wrote the report to "+report)
	b, err := os.ReadFile(report)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<html")
}

// --report naming a staging name (.partial-...) is refused before the
// replay; it was refused only when the report was staged, after it.
func TestReportStagingNameRefusedFirst(t *testing.T) {
	dir := t.TempDir()
	trace := writeFile(t, "t.txt", multiSenderTrace(200))
	for _, name := range []string{".partial-x", ".partial-fdreplay-1-abc"} {
		code, out, errOut := runCmd("--report", filepath.Join(dir, name), "--no-progress", "-d", "fixed", trace)
		assert.Equal(t, 1, code)
		assert.Equal(t, "fdreplay: --report "+filepath.Join(dir, name)+": names beginning with .partial- are kept for unfinished output (staging directories, removed by later runs); name another file\n", errOut)
		assert.Empty(t, out, "refused before the replay")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}
