package satzger

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/require"
)

// The sorted copy stays the window's samples in increasing order while
// evicting intervals replace each other in place, with many equal
// intervals (a coarse clock), the extremes of the window, and a window of
// one.
func TestSortedCopyFollowsWindow(t *testing.T) {
	for _, size := range []int{1, 2, 7, 100} {
		d, err := New(Config{WindowSize: size})
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(3, uint64(size)))
		at := time.Duration(0)
		for i := range 3000 {
			switch rng.IntN(4) {
			case 0:
				at += time.Duration(rng.IntN(5)) * time.Millisecond // few distinct values
			case 1:
				at += time.Duration(rng.Int64N(int64(time.Second)))
			default:
				at += 100 * time.Millisecond
			}
			d.Observe(detector.Heartbeat{Seq: uint64(i + 1), HasSeq: true, Arrival: at})
			w := make([]time.Duration, d.window.Len())
			for k := range w {
				w[k] = d.window.At(k)
			}
			slices.Sort(w)
			require.Equal(t, w, d.sorted, "heartbeat %d, window %d", i, size)
		}
	}
}
