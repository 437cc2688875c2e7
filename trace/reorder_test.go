package trace

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/require"
)

// reorderBuf gives the held heartbeats back in the order of one min-heap
// by (arrival, input position), on streams in order, nearly in order,
// with ties, reversed and random, with the pops interleaved as Spool does
// (one per push once a window is full) and then drained.
func TestReorderBufIsAHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	streams := map[string]func(i int) time.Duration{
		"in order": func(i int) time.Duration { return time.Duration(i) * time.Millisecond },
		"nearly":   func(i int) time.Duration { return time.Duration(i*10+rng.IntN(25)) * time.Millisecond },
		"ties":     func(i int) time.Duration { return time.Duration(i/3+rng.IntN(2)) * time.Second },
		"reversed": func(i int) time.Duration { return time.Duration(-i) * time.Millisecond },
		"random":   func(int) time.Duration { return time.Duration(rng.IntN(50)) * time.Millisecond },
		"sawtooth": func(i int) time.Duration { return time.Duration(i%37) * time.Millisecond },
	}
	for name, arrival := range streams {
		for _, window := range []int{1, 2, 5, 64} {
			var b reorderBuf
			var h minHeap[pendHB]
			var got, want []pendHB
			for i := range 3000 {
				x := pendHB{hb: detector.Heartbeat{Arrival: arrival(i)}, at: uint64(i)}
				b.push(x)
				h.push(x)
				require.Equal(t, len(h), b.len())
				if b.len() >= window {
					got, want = append(got, b.pop()), append(want, h.pop())
				}
			}
			for b.len() > 0 {
				got, want = append(got, b.pop()), append(want, h.pop())
			}
			require.Empty(t, h, "%s, window %d", name, window)
			require.Equal(t, want, got, "%s, window %d", name, window)
		}
	}
}

// Heartbeats in order stay in the ring: the heap is for the late ones only.
func TestReorderBufInOrderSkipsTheHeap(t *testing.T) {
	var b reorderBuf
	for i := range 100 {
		b.push(pendHB{hb: detector.Heartbeat{Arrival: time.Duration(i / 2)}, at: uint64(i)})
		if b.len() == 10 {
			b.pop()
		}
	}
	require.Empty(t, b.late)
	b.push(pendHB{hb: detector.Heartbeat{Arrival: 0}, at: 100})
	require.Len(t, b.late, 1)
	require.Equal(t, uint64(100), b.pop().at)
}
