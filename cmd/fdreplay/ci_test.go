package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fdkit/fdkit/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIntervalsInOutputs: the default table shows ± (and a one-sided bound
// for a detector without mistakes), the tuner says whether its choice beats
// the runner-up beyond chance, and the CSV and JSON outputs carry the
// interval ends around each point's value.
func TestIntervalsInOutputs(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCmd("--mr-max", "0.02", "--points", "8", "--out", dir, "--no-progress")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "0.824 ±0.0", "chen's MR with its interval")
	assert.Contains(t, out, "0 (≤0.0", "no mistakes: an upper bound")
	assert.Regexp(t, `sender p: best \S+ \S+ for MR ≤ 0.02/s: mean TD [0-9.]+ ms \(95 % CI [0-9.]+–[0-9.]+ ms, the setting solved again in each resample\)`, out)
	assert.Regexp(t, `\n  vs \S+ \S+: TD difference -?[0-9.]+ ms \(95 % CI \[-?[0-9.]+, -?[0-9.]+\], p = [0-9.e-]+\) at the targets: `, out)

	f, err := os.Open(filepath.Join(dir, "curves.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	num := func(r []string, name string) float64 {
		v, err := strconv.ParseFloat(r[col[name]], 64)
		require.NoError(t, err, name)
		return v
	}
	for _, r := range rows[1:] {
		for _, m := range [][3]string{{"mr_ci_lo", "mr_per_s", "mr_ci_hi"}, {"qap_ci_lo", "qap", "qap_ci_hi"}, {"td_mean_ci_lo_ms", "td_mean_ms", "td_mean_ci_hi_ms"}} {
			lo, v, hi := num(r, m[0]), num(r, m[1]), num(r, m[2])
			assert.True(t, lo <= hi, "%s %s %s: %v > %v", r[1], r[4], m[1], lo, hi)
			assert.True(t, lo <= v+1e-9 && v <= hi+1e-9 || m[0] == "mr_ci_lo" && v == 0, "%s %s: %s %v outside [%v, %v]", r[1], r[4], m[1], v, lo, hi)
		}
	}
	// verdict.json: the operating points with their in-sample and
	// held-out figures, side by side as in the printed table.
	vb, err := os.ReadFile(filepath.Join(dir, "verdict.json"))
	require.NoError(t, err)
	var vs []qos.Verdict
	require.NoError(t, json.Unmarshal(vb, &vs))
	require.Len(t, vs, 1)
	assert.Equal(t, 0.02, vs[0].Targets.MaxMRPerSecond)
	assert.GreaterOrEqual(t, vs[0].Best, 0)
	h := vs[0].Ops[vs[0].Best].Holdout
	require.NotNil(t, h)
	assert.Positive(t, h.InSample.Span)
	assert.Positive(t, h.HeldOut.Span)

	b, err := os.ReadFile(filepath.Join(dir, "table.json"))
	require.NoError(t, err)
	var table []struct {
		Points []struct {
			CI *struct {
				Level float64 `json:"level"`
				Block int     `json:"block_cells"`
			} `json:"ci"`
		} `json:"points"`
	}
	require.NoError(t, json.Unmarshal(b, &table))
	for _, c := range table {
		require.NotNil(t, c.Points[0].CI)
		assert.Equal(t, 0.95, c.Points[0].CI.Level)
		assert.GreaterOrEqual(t, c.Points[0].CI.Block, 1)
	}
	assert.False(t, strings.Contains(out, "NaN"))
}

// A lopsided interval (one mistake: the exact Poisson interval) is
// written +up/−down, never as a ± reaching below 0; a symmetric one keeps ±.
func TestCellLopsidedInterval(t *testing.T) {
	r := qos.Result{Mistakes: 1, MRPerSecond: 0.00428, Suspected: 1, QAP: 0.999957,
		CI: &qos.CI{MRPerSecond: [2]float64{0.0001, 0.0239}, QAP: [2]float64{0.9999, 1}}}
	assert.Equal(t, "0.00428 +0.02/−0.0042", mrCell(r))
	assert.Equal(t, "0.999957 +0.000043/−0.000057", qapCell(r))
	r.CI.MRPerSecond = [2]float64{0.0033, 0.0053}
	assert.Equal(t, "0.00428 ±0.001", mrCell(r))
}
