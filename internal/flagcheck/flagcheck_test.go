package flagcheck

import (
	"math"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

func TestVarRefusesWhatTheFlagCannotMean(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var f float64
	var d time.Duration
	var n int
	Var(fs, &f, "burst", "", 1, 1, math.MaxFloat64, "a finite length ≥ 1", "")
	Var(fs, &d, "every", "", time.Second, 1, math.MaxInt64, "a positive duration", "")
	Var(fs, &n, "trials", "", 30, 1, 1000, "a count in 1..1000", "")
	for _, bad := range [][]string{
		{"--burst", "Inf"}, {"--burst", "NaN"}, {"--burst", "-Inf"}, {"--burst", "0.5"}, {"--burst", "x"},
		{"--every", "0"}, {"--every", "-1s"}, {"--every", "5"},
		{"--trials", "-1"}, {"--trials", "0"}, {"--trials", "1001"}, {"--trials", "1.5"},
	} {
		err := fs.Parse(bad)
		require.Error(t, err, "%v", bad)
		require.Contains(t, err.Error(), bad[0], "the error names the flag")
	}
	require.Equal(t, 1.0, f, "a refused value leaves the default")
	require.Equal(t, time.Second, d)
	require.Equal(t, 30, n)
	require.NoError(t, fs.Parse([]string{"--burst", "2.5", "--every", "250ms", "--trials", "7"}))
	require.Equal(t, 2.5, f)
	require.Equal(t, 250*time.Millisecond, d)
	require.Equal(t, 7, n)
}
