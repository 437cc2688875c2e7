package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every flag refuses NaN, infinities, out-of-range values and sizes that
// would exhaust memory, naming the flag as typed; a refused value never
// becomes the default (--td-max 0 must not drop the TD target, --window
// 100000000 must fail before it allocates gigabytes).
func TestFlagsRefuseInvalidValues(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--td-max", "0"}, `"--td-max" flag: want a positive duration`},
		{[]string{"--td-max", "-1s"}, `"--td-max" flag`},
		{[]string{"--mr-max", "-0.1"}, `"--mr-max" flag: want a finite rate per second ≥ 0 (0: only settings that made no mistake`},
		{[]string{"--mr-max", "NaN"}, `"--mr-max" flag: not a finite number`},
		{[]string{"--mr-max", "Inf"}, `"--mr-max" flag: not a finite number`},
		{[]string{"--mr-max", "1e400"}, `"--mr-max" flag: not a finite number`},
		{[]string{"--qap-min", "0"}, `"--qap-min" flag: want a probability in (0, 1]`},
		{[]string{"--qap-min", "NaN"}, `"--qap-min" flag`},
		{[]string{"--qap-min", "1.5"}, `"--qap-min" flag`},
		{[]string{"--window", "100000000"}, `"--window" flag: want a size from 1 to 100000`},
		{[]string{"--window", "0"}, `"--window" flag`},
		{[]string{"--points", "1000000"}, `"-p, --points" flag: want a count from 1 to 10000`},
		{[]string{"-p", "0"}, `"-p, --points" flag`},
		{[]string{"--warmup", "-2"}, `"--warmup" flag: want -1 (the window size) or a count ≥ 0`},
		{[]string{"--interval", "0"}, `"--interval" flag: want a positive duration`},
		{[]string{"--interval", "-1ms"}, `"--interval" flag`},
		{[]string{"--timeout", "0"}, `"--timeout" flag: want a positive duration`},
		{[]string{"--delay-offset", "-5ms"}, `"--delay-offset" flag`},
		{[]string{"--interval", "100"}, `as a duration with a unit`},
		{[]string{"--format", "csv"}, "--format csv needs --columns"},
		{[]string{"--unit", "ms"}, "--unit ms applies to CSV input only"},
		{[]string{"--columns", "a,b"}, `--columns "a,b": want four comma-separated names`},
		{[]string{"--columns", "h,s,,"}, "name the sent or the arrival column"},
		// One header name for two roles (user48's F4: refused on line 2
		// as a bad seq).
		{[]string{"--columns", "host,host,sent_ms,recv_ms"}, `--columns "host,host,sent_ms,recv_ms": "host" names both sender and seq; name a column of its own for each`},
		{[]string{"--columns", ",seq, T ,t"}, `--columns ",seq, T ,t": "T" names both sent and arrival`},
		{[]string{"--columns", "h,s,t,a", "--unit", "min"}, `--unit "min": want ns, us, ms or s`},
		{[]string{"--range", "phi=1:4", "--range", "phi=2:3"}, `--range "phi=2:3": phi-normal has a range already`},
		{[]string{"--range", "chen=0:Inf"}, `--range "chen=0:Inf": bad value "Inf"`},
		{[]string{"--range", "phi=NaN:4"}, `--range "phi=NaN:4": bad value "NaN"`},
		// Bounds as written, not in the family's unit (atk26's N11: "upper
		// bound 0 is below lower bound 1000").
		{[]string{"--range", "chen=1s:0"}, `--range "chen=1s:0": the upper bound 0 is below the lower bound 1s: give LO:HI`},
		// An empty entry, a stray comma or a detector left out, was
		// skipped without a word (atk26's N11).
		{[]string{"-d", "fixed,"}, `--detectors: "fixed," has an empty entry (a comma with no detector before or after it)`},
		{[]string{"-d", "fixed,,chen"}, `--detectors: "fixed,,chen" has an empty entry`},
		{[]string{"-d", " "}, "--detectors: an empty value names no detector"},
		// A long flag after one dash, as Go's flag package takes it, was
		// read as shorthands: -out as -o ut (user48's F30).
		{[]string{"-out", "xo"}, "-out: did you mean --out? (a long flag takes two dashes; one dash starts shorthands)"},
		{[]string{"-d", "chen", "-points", "5"}, "-points: did you mean --points?"},
		{[]string{"-points=5"}, "-points=5: did you mean --points?"},
		{[]string{"-help"}, "-help: did you mean --help?"},
		// A one-value flag given twice with two values: the last won
		// silently (user48's F11).
		{[]string{"--out", "res3", "--out", "res4"}, `--out given twice ("res3", then "res4"): give it once`},
		{[]string{"--interval=1s", "--interval", "2s"}, `--interval given twice ("1s", then "2s")`},
		{[]string{"-o", "a", "--out=b"}, `--out given twice ("a", then "b")`},
		{[]string{"-p5", "--points", "6"}, `--points given twice ("5", then "6")`},
		// A range no entry sweeps over was dropped silently (user48's F28).
		{[]string{"-d", "chen", "--range", "phi=1:2"}, `--range "phi=1:2": no detector of the run is phi-normal (--detectors chen): add it there or drop the range`},
		{[]string{"-d", "chen alpha=10ms..1s", "--range", "chen=0:500ms"}, `--range "chen=0:500ms": the chen entries give their own range or setting (chen alpha=10ms..1s), which the range would not change: drop it, or give the range in the entry (chen alpha=LO..HI)`},
		{[]string{"-d", "chen(alpha=5ms),fixed", "--range", "nfd-e=0:500ms"}, `--range "nfd-e=0:500ms": the chen entries give their own range or setting (chen(alpha=5ms))`},
		// Inputs read "-" as standard input; the report is no stream,
		// and a file named "-" is not what was meant (user44's F14).
		{[]string{"--report", "-"}, "--report -: give a file name; the report is not written to standard output"},
		// Likewise --out -, which made a directory named "-".
		{[]string{"--out", "-"}, "--out -: give a directory name; the results are files, not written to standard output"},
		// A directory of that name beside a later run's output would be
		// taken for that run's unfinished output and removed.
		{[]string{"--out", "d/.partial-fdreplay-1-x/"}, "--out d/.partial-fdreplay-1-x/: names beginning with .partial- are kept for unfinished output"},
		// Standard input read twice gave "want a CSV header line, got \"\""
		// for the second (user44's D5).
		{[]string{"-", "x.txt", "-"}, `standard input given twice (traces 1 and 3 are "-"): it can be read once`},
		// The same detector named twice ran once, one row silently (D5).
		{[]string{"-d", "chen,chen"}, "--detectors: chen is given twice; name each detector once"},
		{[]string{"-d", "chen", "-d", "NFD-E"}, "--detectors: chen and NFD-E are the same detector (chen); name each detector once"},
		{[]string{"-d", "phi-akka(threshold=8,pause=0)", "-d", "phi-akka(pause=0, threshold=8)"}, "are the same detector (phi-akka(threshold=8, pause=0s))"},
	}
	for _, c := range cases {
		code, out, errOut := runCmd(c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
		assert.Empty(t, out, "%v: nothing runs", c.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
	}
}

// A trace file given twice, under one name or two, is refused before the
// replay: it would be replayed twice (user48's F14).
func TestSameTraceTwiceRefused(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, "a.txt", "4 1 100000000 120000000 3\n")
	link := filepath.Join(dir, "link.txt")
	require.NoError(t, os.Symlink(a, link))
	other := writeFile(t, "b.txt", "4 1 100000000 120000000 3\n")
	for _, c := range []struct {
		args []string
		want string // "" when not refused here
	}{
		{[]string{a, a}, "traces 1 and 2 are the same file (" + a + ", " + a + "): it would be replayed twice; give it once"},
		{[]string{other, a, link}, "traces 2 and 3 are the same file (" + a + ", " + link + ")"},
		{[]string{a, filepath.Join(filepath.Dir(a), ".", "a.txt")}, "traces 1 and 2 are the same file"},
		{[]string{a, other}, ""}, // same content, two files
	} {
		code, _, errOut := runCmd(append([]string{"-d", "chen", "--interval", "100ms"}, c.args...)...)
		if c.want == "" {
			assert.NotContains(t, errOut, "same file", "%v", c.args)
			continue
		}
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
}

// Columns refer to flags, not to trace.Columns fields.
func TestCSVErrorsNameFlags(t *testing.T) {
	code, _, errOut := runCmd("--format", "csv", "x.csv")
	assert.Equal(t, 2, code)
	assert.NotContains(t, errOut, "Columns.")
}

// --lenient lists the first skipped lines with file:line and the reason.
func TestLenientListsSkippedLines(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		if i == 50 || i == 120 {
			b.WriteString("4 x 100 200 3\n")
			continue
		}
		ms := int64(i) * 100_000_000
		b.WriteString(fmt.Sprintf("4 %d %d %d 3\n", i, ms, ms+1_000_000))
	}
	path := filepath.Join(t.TempDir(), "bad.txt")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	code, _, errOut := runCmd("--lenient", "-d", "fixed", "--interval", "100ms", path)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "bad.txt: skipped 2 malformed line(s):\n")
	assert.Contains(t, errOut, "  "+path+":51: field seq: want")
	assert.Contains(t, errOut, "  "+path+":121: field seq: want")

	// More than the listed number: say how many are listed.
	b.Reset()
	for range 15 {
		b.WriteString("4 x 100 200 3\n")
	}
	for i := range 100 {
		ms := int64(i) * 100_000_000
		b.WriteString(fmt.Sprintf("4 %d %d %d 3\n", i, ms, ms+1_000_000))
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	code, _, errOut = runCmd("--lenient", "-f", "lip6", "-d", "fixed", "--interval", "100ms", path)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "skipped 15 malformed line(s); the first 10:\n")
	assert.Contains(t, errOut, path+":10: field seq")
	assert.NotContains(t, errOut, path+":11: field seq")
}

// An undetected format names the flags that give it (not trace.Columns).
func TestUndetectedFormatNamesFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.csv")
	require.NoError(t, os.WriteFile(path, []byte("host,when\nx,1\n"), 0o644))
	code, _, errOut := runCmd(path)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, path+`:1: want a trace format`)
	assert.Contains(t, errOut, `got "host,when": format not detected: the line looks like a CSV header`)
	assert.Contains(t, errOut, "-f/--format lip6, lip6-emission or fdkit, or for CSV --columns SENDER,SEQ,SENT,ARRIVAL")
	assert.NotContains(t, errOut, "Columns")
}

// --version prints one line naming the build, exit 0, nothing else run
// (user48's F30: a result could not be tied to the fdreplay that made it).
func TestVersionFlag(t *testing.T) {
	code, out, errOut := runCmd("--version", "--detectors", "chen")
	assert.Equal(t, 0, code)
	assert.Empty(t, errOut)
	assert.Regexp(t, `^fdreplay \S.*, go1\.\d+\S*\n$`, out)
	assert.Equal(t, out, versionText()+"\n")
}

// The flags that add up repeat, and a one-value flag repeated with the
// same value is harmless (TestFlagsRefuseInvalidValues has the refusals).
func TestRepeatedFlagsAllowed(t *testing.T) {
	for _, args := range [][]string{
		{"-d", "chen", "-d", "fixed", "--sender", "p", "-s", "p"},
		{"--window", "500", "--window", "500", "-d", "chen"},
		{"--no-progress", "--no-progress", "-d", "fixed"},
		{"-d", "chen", "--", "--out"}, // a trace named --out: no flag
	} {
		code, _, errOut := runCmd(args...)
		assert.NotContains(t, errOut, "given twice", "%v", args)
		if args[len(args)-1] != "--out" {
			assert.Equal(t, 0, code, "%v: %s", args, errOut)
		}
	}
}
