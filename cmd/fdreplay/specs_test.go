package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/spec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --detectors takes the textual form any number of times: two Akka
// configurations side by side are two rows, each with its full setting,
// and the header says which Akka defaults fdreplay scaled by Δ.
func TestDetectorsSpecsSideBySide(t *testing.T) {
	code, out, errOut := runCmd("--detectors", "phi-akka(threshold=10, pause=3s)", "--detectors", "phi-akka(threshold=10, pause=0), akka")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 1, tableRows(out, "phi-akka(threshold=10, pause=3s)"))
	assert.Equal(t, 1, tableRows(out, "phi-akka(threshold=10, pause=0)"))
	assert.Equal(t, 1, tableRows(out, "akka"))
	assert.Contains(t, out, "threshold=10, window=1000, min-std=10ms, pause=0s, bootstrap-interval=100ms")
	assert.Contains(t, out, "threshold=8, window=1000, min-std=100ms, pause=3s, bootstrap-interval=1s", "a preset is not scaled")
	assert.Contains(t, out, "scaled by Δ/1s: phi-akka(threshold=10, pause=3s): min-std 10ms, bootstrap-interval 100ms")
	assert.Contains(t, out, "outages not learnt")
}

// A sweep entry sweeps its own parameter over its own range.
func TestDetectorsSweepSpec(t *testing.T) {
	code, out, errOut := runCmd("--detectors", "chen(window=500) alpha=10ms..1s:log", "--points", "5")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 1, tableRows(out, "chen(window=500)"), out)
	lines := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "p,chen(window=500) alpha=10ms..1s:log,alpha,") || strings.Contains(l, "chen(window=500) alpha") {
			lines++
		}
	}
	assert.Equal(t, 5, lines, "five points on the curve:\n%s", out)
}

// An entry that sets its family's swept parameter names one setting: it
// is replayed alone, one point, not swept under that name (user48's F22:
// jacobson(k=1e300) was drawn and tuned over k = 0.5..64). A preset, and
// an entry that sets other parameters only, are swept.
func TestSpecSettingSweptParamIsOnePoint(t *testing.T) {
	entries := []string{"chen(alpha=5ms)", "chen(window=500)", "akka", "fixed(timeout=300ms)", "chen(window=500, alpha=5ms)"}
	code, out, errOut := runCmd("--no-progress", "--sweep", "--points", "5", "-d", strings.Join(entries, ","))
	require.Equal(t, 0, code, errOut)
	for _, c := range []struct {
		entry  string
		points int
	}{
		{"chen(alpha=5ms)", 1},
		{"chen(window=500)", 5},
		{"akka", 5},
		{"fixed(timeout=300ms)", 1},
		{`"chen(window=500, alpha=5ms)"`, 1},
	} {
		assert.Equal(t, c.points, strings.Count(out, "\np,"+c.entry+","), c.entry)
	}
	assert.Contains(t, out, "\np,chen(alpha=5ms),alpha,ms,5,")
}

func TestDetectorsSpecErrors(t *testing.T) {
	for arg, want := range map[string]string{
		"phi-akka(pause=3)":   `pause: "3" is not a duration`,
		"phi-akka(paws=3s)":   `no parameter "paws"`,
		"zeta":                `unknown detector "zeta"`,
		"chen alpha=2s..1s":   "below lower bound",
		"chen alpha=1ns..1ns": "both bounds are 1ns: a sweep needs lo < hi",
		"phi-normal(window=":  "missing the closing parenthesis",
	} {
		code, _, errOut := runCmd("--detectors", arg)
		assert.Equal(t, 2, code, arg)
		assert.Contains(t, errOut, want, arg)
	}
}

func TestConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "detectors.yaml")
	require.NoError(t, os.WriteFile(path, []byte("detectors:\n  - phi-normal(threshold=8, min-std=0)\n  - detector: cassandra\n    threshold: 6\n"), 0o644))
	code, out, errOut := runCmd("--config", path)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 1, tableRows(out, "phi-normal(threshold=8, min-std=0s)"), out)
	assert.Equal(t, 1, tableRows(out, "phi-cassandra(threshold=6, window=1000, bootstrap-interval=2s, max-interval=2s)"), out)
	assert.Equal(t, 0, tableRows(out, "chen"), "--detectors defaults to none with --config")

	require.NoError(t, os.WriteFile(path, []byte("detectors:\n  - detector: akka\n    pause: soon\n"), 0o644))
	code, _, errOut = runCmd("--config", path)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, path+`:3: akka: phi-akka: pause: "soon" is not a duration`)
}

// A sweep written on one -d entry sweeps that entry alone, not every
// other detector too, and its table row names the swept parameter at the
// row's value and the range; --sweep or a --range brings the others back.
// The YAML example of docs/detectors.md behaves the same.
func TestSweepEntryScoped(t *testing.T) {
	sweep := "chen(window=100) alpha=10ms..300ms"
	code, out, errOut := runCmd("-d", sweep+",fixed", "--points", "3")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "| interval=100ms, window=100, alpha=100ms; swept alpha=10ms..300ms |")
	assert.NotContains(t, out, "\np,fixed,", "fixed is in the table, not swept")
	assert.Equal(t, 3, strings.Count(out, "\np,"+sweep+","))

	for _, more := range [][]string{{"--sweep"}, {"--range", "fixed=200ms:400ms"}} {
		code, out, errOut = runCmd(append([]string{"-d", sweep + ",fixed", "--points", "3"}, more...)...)
		require.Equal(t, 0, code, errOut)
		assert.Equal(t, 3, strings.Count(out, "\np,fixed,"), more)
	}

	cfg := filepath.Join(t.TempDir(), "fd.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("detectors:\n  - phi-akka(threshold=10, pause=3s)\nsweeps:\n  - chen(window=1000) alpha=10ms..1s\n"), 0o644))
	code, out, errOut = runCmd("--config", cfg, "--points", "3")
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, "\np,phi-akka", "the YAML sweep is scoped to its entry")
	assert.Equal(t, 3, strings.Count(out, "\np,chen(window=1000) alpha=10ms..1s,"))
	assert.Contains(t, out, "swept alpha=10ms..1s")
}

// --detectors takes every name and alias of the registry of package spec
// as that family at fdreplay's defaults.
func TestDetectorNamesFromRegistry(t *testing.T) {
	for _, f := range spec.Algorithms() {
		for _, a := range append([]string{f.Name}, f.Aliases...) {
			got, err := selectDetectors([]string{a})
			require.NoError(t, err, a)
			assert.Equal(t, []string{f.Name}, got, a)
		}
	}
}

// A --range without a spacing takes the family's default sweep's (user48
// F36: the verdict's advice --range sfd=0.025:200 was spaced linearly,
// one point below 5 ms where the default had 20), but linear from a LO of
// 0 or below; :log and :lin choose.
func TestRangeDefaultSpacing(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		name string
		log  bool
	}{
		{"sfd=0.025:200", "sfd", true},
		{"chen=1ms:10s", "chen", true},
		{"chen=0:500ms", "chen", false},
		{"chen=1ms:10s:lin", "chen", false},
		{"phi=1:12", "phi-normal", false},
		{"phi=1:12:log", "phi-normal", true},
		{"satzger=0.5:0.9", "satzger", false},
		{"cassandra=0.25:16", "phi-cassandra", true},
		{"jacobson=0.5:64", "jacobson", true},
	} {
		name, sp, err := parseRange(tc.arg)
		require.NoError(t, err, tc.arg)
		assert.Equal(t, tc.name, name, tc.arg)
		assert.Equal(t, tc.log, sp.log, tc.arg)
	}
}

// Two entries that are one detector once fdreplay's defaults for the
// stream are filled in are refused, naming the stream, Δ and the setting
// (user48's F10: 'chen(alpha=100ms),chen' ran twice, two identical rows);
// on a stream where the defaults differ they are two detectors.
func TestSameDetectorResolved(t *testing.T) {
	p := writeFile(t, "t.fdk", regularTrace(3000)) // Δ = 100 ms
	code, out, errOut := runCmd("-d", "chen(alpha=100ms),chen", p)
	assert.Equal(t, 2, code, out)
	assert.Contains(t, errOut, "--detectors: chen and chen(alpha=100ms) are the same detector for sender p ("+p+":3), whose Δ is 100ms: both run chen(")
	assert.Contains(t, errOut, "name each detector once")
	assert.Empty(t, out)
	// The same for a preset and its family at the preset's values, and
	// for two sweeps of one range.
	code, _, errOut = runCmd("-d", "fixed(timeout=1s)", "-d", "fixed", p)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "fixed and fixed(timeout=1s) are the same detector")
	code, _, errOut = runCmd("-d", "chen(window=1000) alpha=10ms..1s", "-d", "chen alpha=10ms..1s", p)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "chen(window=1000) alpha=10ms..1s and chen alpha=10ms..1s are the same detector")

	// Δ = 1 s: α defaults to 1 s, so chen(alpha=100ms) is another detector.
	slow := strings.ReplaceAll(regularTrace(3000), "interval=100ms", "interval=1s")
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(slow, "\n"), "\n") {
		if i < 2 {
			b.WriteString(l + "\n")
			continue
		}
		var q, s, a int64
		var who string
		_, err := fmt.Sscan(l, &who, &q, &s, &a)
		require.NoError(t, err)
		fmt.Fprintf(&b, "p %d %d %d\n", q, 10*s, 10*s+int64(10*time.Millisecond))
	}
	p1 := writeFile(t, "t1.fdk", b.String())
	code, out, errOut = runCmd("-d", "chen(alpha=100ms),chen", p1)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 1, tableRows(out, "chen(alpha=100ms)"))
	assert.Contains(t, out, "Δ = 1s")

	// One detector on the 100 ms trace, two on the 1 s one: both run,
	// with a warning naming the stream where they coincide.
	code, out, errOut = runCmd("-d", "chen(alpha=100ms),chen", p, p1)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "fdreplay: warning: --detectors: chen and chen(alpha=100ms) are the same detector for sender p ("+p+":3), whose Δ is 100ms: both run chen(")
	assert.Contains(t, errOut, "other streams tell them apart, so both run")
	assert.NotContains(t, errOut, p1+":3), whose Δ")
	assert.Equal(t, 2, tableRows(out, "chen(alpha=100ms)"))
}

// atk25's F6. A sweep's spec giving the swept parameter a value is the
// sweep without it (the sweep sets it at every point): refused beside it
// when the flags are read, as an alias is. A parameter set to its
// documented default is the detector that leaves it unset (jacobson's
// gain is 0.125): refused once the trace is read (their texts differed,
// and the texts were compared). Two sweeps of one family over different
// ranges run, each row named by its whole entry, as its curve is.
func TestSameDetectorSweepsAndDefaults(t *testing.T) {
	p := writeFile(t, "t.fdk", regularTrace(3000)) // Δ = 100 ms
	code, out, errOut := runCmd("-d", "chen(alpha=100ms) alpha=10ms..1s,chen alpha=10ms..1s", p)
	assert.Equal(t, 2, code, out)
	assert.Contains(t, errOut, "--detectors: chen(alpha=100ms) alpha=10ms..1s and chen alpha=10ms..1s are the same detector (chen alpha=10ms..1s); name each detector once")
	assert.Empty(t, out)
	code, _, errOut = runCmd("-d", "chen(alpha=1s, window=500) alpha=10ms..1s", "-d", "nfd-e(window=500) alpha=10ms..1s", p)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "are the same detector (chen(window=500) alpha=10ms..1s)")

	code, out, errOut = runCmd("-d", "jacobson,jacobson(gain=0.125)", p)
	assert.Equal(t, 2, code, out)
	assert.Contains(t, errOut, "--detectors: jacobson and jacobson(gain=0.125) are the same detector for sender p ("+p+":3), whose Δ is 100ms: both run jacobson(")
	code, _, errOut = runCmd("-d", "jacobson(dev-gain=0.25) k=1..8,jacobson(gain=0.125) k=1..8", p)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "are the same detector for sender p")
	code, out, errOut = runCmd("-d", "jacobson,jacobson(gain=0.25)", p)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 1, tableRows(out, "jacobson(gain=0.25)"))

	code, out, errOut = runCmd("-d", "chen alpha=10ms..1s,chen alpha=10ms..2s,chen", "--points", "3", p)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 1, tableRows(out, "chen alpha=10ms..1s"), out)
	assert.Equal(t, 1, tableRows(out, "chen alpha=10ms..2s"))
	assert.Regexp(t, `(?m)^\| chen +\| α=100ms n=1000 +\|`, out, "the bare family keeps its name")
}
