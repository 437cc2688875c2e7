package report

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// seqWindow gives back the least held number first, as one min-heap
// would, on numbers in order, nearly in order, with duplicates, reversed
// and random, through full windows and the drain.
func TestSeqWindowGivesTheLeast(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	streams := map[string]func(i int) uint64{
		"in order": func(i int) uint64 { return uint64(i) },
		"nearly":   func(i int) uint64 { return uint64(i + rng.IntN(40)) },
		"repeats":  func(i int) uint64 { return uint64(i / 4) },
		"reversed": func(i int) uint64 { return uint64(1<<20 - i) },
		"random":   func(int) uint64 { return rng.Uint64N(500) },
	}
	for name, seq := range streams {
		var w seqWindow
		var held, got, want []uint64
		for i := range 3 * burstWindow {
			v := seq(i)
			held = append(held, v)
			x, full := w.push(v)
			require.Equal(t, len(held) > burstWindow, full, name)
			if full {
				j := slices.Index(held, slices.Min(held))
				want, held = append(want, held[j]), slices.Delete(held, j, j+1)
				got = append(got, x)
			}
			require.Equal(t, len(held), w.len(), name)
		}
		for w.len() > 0 {
			j := slices.Index(held, slices.Min(held))
			want, held = append(want, held[j]), slices.Delete(held, j, j+1)
			got = append(got, w.pop())
		}
		require.Equal(t, want, got, name)
	}
}
