package detector_test

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// MeanStdDevs gives each window's sums MeanStdDev's values bit for bit,
// for windows of 1 to 1000 samples below 2^32 (the range it promises)
// and of samples up to 2^40 while in range, in one call, and 0 with ok
// false for sums out of its range (seed 123500531).
func TestMeanStdDevsIsMeanStdDev(t *testing.T) {
	rng := rand.New(rand.NewPCG(123500531, 1))
	var ss []detector.Sums
	var want [][2]float64
	for k := range 300 {
		size := 1 + rng.IntN(1000)
		w, err := detector.NewWindow(size)
		if err != nil {
			t.Fatal(err)
		}
		top := int64(1) << 32
		if k%3 == 0 {
			top = 1 << 40
		}
		var s detector.Sums
		for range rng.IntN(2 * size) {
			x := rng.Int64N(top)
			if k%5 == 0 {
				x = top - 1 - rng.Int64N(1000) // near the top
			}
			if ev, did := w.Add(time.Duration(x)); did {
				s.N--
				s.Sum -= uint64(ev)
				h, l := bits.Mul64(uint64(ev), uint64(ev))
				var b uint64
				s.Sq0, b = bits.Sub64(s.Sq0, l, 0)
				s.Sq1 -= h + b
			}
			s.N++
			s.Sum += uint64(x)
			h, l := bits.Mul64(uint64(x), uint64(x))
			var c uint64
			s.Sq0, c = bits.Add64(s.Sq0, l, 0)
			s.Sq1 += h + c
		}
		if s.Sum > 1<<53 || s.N == 0 {
			continue
		}
		m, d := w.MeanStdDev()
		ss = append(ss, s)
		want = append(want, [2]float64{m, d})
	}
	mean, sd := make([]float64, len(ss)), make([]float64, len(ss))
	if !detector.MeanStdDevs(ss, mean, sd) {
		t.Fatal("sums of samples below 2^40 with Σx ≤ 2^53 out of range")
	}
	for i := range ss {
		if mean[i] != want[i][0] || sd[i] != want[i][1] {
			t.Fatalf("window %d (%+v): %v, %v; want %v, %v", i, ss[i], mean[i], sd[i], want[i][0], want[i][1])
		}
	}
	// A spread that rounds once to a different value than its two words
	// rounded apart and added: n'·Σx² − (Σx)² = 2^64 + 2^63 + 2^11 + 1
	// (Σx = 0, n' = 1) is above the tie between 2^64 + 2^63 and the next
	// float64, 2^12 further, so it rounds up; its low word alone rounds
	// to 2^63 + 2^11, and the sum is then that tie, rounded to even: down.
	one := []detector.Sums{{N: 1, Sq1: 1, Sq0: 1<<63 + 1<<11 + 1}}
	if !detector.MeanStdDevs(one, mean, sd) || mean[0] != 0 || sd[0] != math.Sqrt(0x1p64+0x1p63+0x1p12) {
		t.Errorf("spread 2^64 + 2^63 + 2^11 + 1: σ = %v, want √(2^64 + 2^63 + 2^12)", sd[0])
	}
	out := []detector.Sums{{N: 2, Sum: 1<<53 + 1}, {N: 3, Sum: 10, Sq1: 1 << 63}, {N: 0}}
	if detector.MeanStdDevs(out, mean, sd) {
		t.Error("out of range reported ok")
	}
	for i := range out {
		if mean[i] != 0 || sd[i] != 0 {
			t.Errorf("sums %+v: %v, %v; want 0", out[i], mean[i], sd[i])
		}
	}
}
