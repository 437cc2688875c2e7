package qos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// sortInt64s orders as slices.Sort does: negative and positive values,
// the extremes, values that share their high bytes (passes skipped) and
// short slices.
func TestSortInt64sAsSlicesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	cases := map[string][]int64{"empty": {}, "one": {5}}
	wide := make([]int64, 5000)
	for i := range wide {
		wide[i] = int64(rng.Uint64())
	}
	wide[0], wide[1], wide[2] = math.MinInt64, math.MaxInt64, 0
	cases["wide"] = wide
	near := make([]int64, 3000)
	for i := range near {
		near[i] = 1_870_000_000 + rng.Int64N(1<<20) - 1<<19
	}
	cases["near"] = near
	neg := make([]int64, 2000)
	for i := range neg {
		neg[i] = rng.Int64N(2000) - 1000
	}
	cases["around zero"] = neg
	same := make([]int64, 1500)
	for i := range same {
		same[i] = 42
	}
	cases["all equal"] = same
	for name, s := range cases {
		want := slices.Clone(s)
		slices.Sort(want)
		got := slices.Clone(s)
		sortInt64s(got)
		require.Equal(t, want, got, name)
	}
}
