package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var targetArgs = []string{"--td-max", "1s", "--mr-max", "0.01667", "--qap-min", "0.999"}

// opRow returns the cells of the operating-point table row of detector
// name in out, trimmed.
func opRow(t *testing.T, out, name string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "operating points:")
	require.True(t, ok, out)
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasPrefix(l, "| p      | "+name+" ") {
			cells := strings.Split(l, "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells
		}
	}
	t.Fatalf("no operating point of %s in\n%s", name, out)
	return nil
}

// bestLine returns the first line of the verdict up to the best's MR.
func bestLine(out string) string {
	return regexp.MustCompile(`(?m)^sender p: .*MR [0-9.e-]+/s`).FindString(out)
}

// On the default trace, refining only Chen's grid changes neither Chen's
// nor κ's operating point, nor the recommendation between them (issue:
// the grid points the tuner landed on decided it), and the comparison is
// called equivalent; with every detector the same two operating points
// come out.
func TestVerdictGridIndependent(t *testing.T) {
	code, coarse, errOut := runCmd(append([]string{"-d", "chen,kappa"}, targetArgs...)...)
	require.Equal(t, 0, code, errOut)
	code, fine, errOut := runCmd(append([]string{"-d", "chen,kappa", "--range", "chen=300ms:360ms:lin", "--points", "61"}, targetArgs...)...)
	require.Equal(t, 0, code, errOut)
	code, all, errOut := runCmd(targetArgs...)
	require.Equal(t, 0, code, errOut)
	for _, name := range []string{"chen", "kappa"} {
		// Setting, TD, its re-solved interval and MR agree (QAP may
		// differ in its sixth digit: the solver stops within 10 µs).
		assert.Equal(t, opRow(t, coarse, name)[:7], opRow(t, fine, name)[:7])
		// With every detector the resampling blocks may be longer (the
		// longest any family needs): the same setting and TD.
		assert.Equal(t, opRow(t, coarse, name)[:5], opRow(t, all, name)[:5])
	}
	assert.Equal(t, bestLine(coarse), bestLine(fine))
	for _, out := range []string{coarse, fine} {
		assert.Regexp(t, `vs (chen|kappa) .*: equivalent \(below the practical threshold`, out)
	}
	// No interval of a difference has zero width: the settings rest on
	// 2 mistakes, and every resample solves them again.
	for _, m := range regexp.MustCompile(`95 % CI \[(-?[0-9.]+), (-?[0-9.]+)\]`).FindAllStringSubmatch(all, -1) {
		assert.NotEqual(t, m[1], m[2], "zero-width interval in %q", m[0])
	}
	// The trace holds fewer than 3 expected mistakes at the target: it
	// says it cannot answer and claims nothing significant.
	assert.Contains(t, all, "The trace cannot answer: over its 2m54s the MR target allows 2.9 mistakes")
	assert.NotContains(t, all, "beyond chance (Holm")
	// The command-line verdict keeps the caveat of the MR interval.
	assert.Contains(t, all, "\n  Its 95 % interval of MR crosses the target")
	// In-sample and held-out figures side by side.
	assert.Contains(t, all, "out of sample, sender p: tuned on the first 50% of the trace")
	assert.Contains(t, all, "TD ms held out")
	// The default range of phi-akka ends where its setting lies.
	assert.Contains(t, all, "phi-akka: the setting threshold=0.5 is the smallest swept; a smaller one may meet the targets faster: widen the range, e.g. --range phi-akka=0.125:16")
}

// A setting at an end of the swept range names the --range to widen.
func TestVerdictEdge(t *testing.T) {
	code, out, errOut := runCmd("-d", "chen", "--range", "chen=350ms:600ms", "--mr-max", "0.05")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "chen: the setting alpha=350ms is the smallest swept; a smaller one may meet the targets faster: widen the range, e.g. --range chen=87.5:600")
}

func TestParseShare(t *testing.T) {
	for in, want := range map[string]float64{"1%": 0.01, "0.05": 0.05, " 50 % ": 0.5, "off": -1, "0": -1, "0%": -1} {
		got, err := parseShare("equivalence", in)
		require.NoError(t, err, in)
		assert.InDelta(t, want, got, 1e-12, in)
	}
	for _, in := range []string{"", "x", "1", "100%", "-1%", "NaN", "Inf", "1e400"} {
		_, err := parseShare("holdout", in)
		assert.ErrorContains(t, err, "--holdout", in)
	}
	code, _, errOut := runCmd("--equivalence", "2", "--mr-max", "0.1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--equivalence")
}

// A stream with too little evaluated time for a verdict says so; the run
// goes on, exit status 0.
func TestVerdictTooLittleTime(t *testing.T) {
	code, out, errOut := runCmd("--warmup", "2350", "--mr-max", "0.1", "-d", "chen,fixed")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "sender p: no verdict: qos: stream p: too little observed time to decide")
}

// A sweep entry sweeps itself alone, so the other entries are in the table
// but not in the verdict: it says so instead of "No other detector meets
// the targets" about a κ whose table setting meets them.
func TestVerdictNamesUnsweptEntries(t *testing.T) {
	code, out, errOut := runCmd("--no-progress", "-d", "chen alpha=100ms..600ms", "-d", "kappa", "--points", "6", "--holdout", "off",
		"--td-max", "1s", "--mr-max", "0.05")
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, "No other detector meets the targets")
	assert.Contains(t, out, "Not compared (in the table at one setting, not swept): kappa; --sweep sweeps every entry.")
}
