package main

import (
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sweptCSV runs fdreplay --sweep on the default trace and returns the
// curves it prints as CSV rows, header first.
func sweptCSV(t *testing.T, args ...string) [][]string {
	t.Helper()
	code, out, errOut := runCmd(append([]string{"--sweep", "--points", "5", "--no-progress"}, args...)...)
	require.Equal(t, 0, code, errOut)
	_, body, ok := strings.Cut(out, "curves (CSV; durations in ms, MR per second):\n")
	require.True(t, ok, out)
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	require.NoError(t, err)
	require.Greater(t, len(rows), 1)
	return rows
}

// --method per-point replays every setting in full, so that the claim
// that the shared methods give what a replay per point gives can be
// checked from the command line (user44's D3). It holds field by field,
// the method column aside, for every family whose sweep shares state;
// Jacobson's and Cassandra's one-pass sweeps, which compute τ from its
// linear form in K or Θ, round some freshness points 1 ns apart from the
// detectors' own arithmetic, so their durations differ by nanoseconds
// (docs/fdreplay.md, “Default settings”).
func TestMethodPerPoint(t *testing.T) {
	const exact = "fixed,chen,phi-normal,phi-akka,sfd,satzger,kappa,2w-fd,bertier"
	auto, per := sweptCSV(t, "-d", exact), sweptCSV(t, "-d", exact, "--method", "per-point")
	require.Equal(t, len(auto), len(per))
	methods := map[string]bool{}
	for i := range auto {
		a, p := auto[i], per[i]
		if i > 0 {
			methods[a[5]] = true
			assert.Equal(t, "replay-per-point", p[5], "%v", p)
		}
		a[5], p[5] = "", ""
		assert.Equal(t, a, p)
	}
	for _, m := range []string{"one-pass", "one-pass-groups", "shared-estimator", "shared-state"} {
		assert.True(t, methods[m], "the sweep used %s", m)
	}

	auto, per = sweptCSV(t, "-d", "jacobson,phi-cassandra"), sweptCSV(t, "-d", "jacobson,phi-cassandra", "--method", "per-point")
	require.Equal(t, len(auto), len(per))
	differ := 0
	for i := 1; i < len(auto); i++ {
		a, p := auto[i], per[i]
		assert.Equal(t, "one-pass", a[5])
		assert.Equal(t, a[:5], p[:5])
		assert.Equal(t, a[6:12], p[6:12], "records, stale, warm-up, evaluated, span, mistakes")
		mistakes, err := strconv.Atoi(a[11])
		require.NoError(t, err)
		for j := 12; j < len(a); j++ {
			if a[j] == p[j] {
				continue
			}
			differ++
			x, err1 := strconv.ParseFloat(a[j], 64)
			y, err2 := strconv.ParseFloat(p[j], 64)
			require.NoError(t, err1)
			require.NoError(t, err2)
			// A nanosecond per heartbeat at most: 1e-6 ms per mistake in a
			// summed time, relative 1e-8 in a ratio.
			assert.LessOrEqual(t, math.Abs(x-y), math.Max(1e-6*float64(mistakes+1), 1e-8*math.Abs(x)), "%s %s %s: %s vs %s", a[1], a[4], auto[0][j], a[j], p[j])
		}
	}
	assert.Positive(t, differ, "if the one-pass sweeps now match to the nanosecond, make this test exact and update docs/fdreplay.md")

	code, _, errOut := runCmd("--method", "fast")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `--method "fast": want auto or per-point`)
}
