package trace

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
)

// lip6Bench is a LIP6-format file of benchN heartbeats from 9 senders,
// shaped like the node-1 excerpt (17-digit timestamps, ~100 ms period).
var lip6Bench []byte

const benchN = 1_000_000

func lip6BenchData() []byte {
	if lip6Bench != nil {
		return lip6Bench
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var b []byte
	recv := int64(47816110312853897)
	for i := range benchN {
		s := i % 9
		if s >= 1 {
			s++
		}
		seq := uint64(100 + i/9)
		recv += int64(100e6)/9 + rng.Int64N(2e6) - 1e6
		sent := int64(9301432084211090) + int64(seq)*100e6 + rng.Int64N(1e6)
		b = strconv.AppendInt(b, int64(s), 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, seq, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, sent, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, recv, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, 8+rng.Int64N(8), 10)
		b = append(b, '\n')
	}
	lip6Bench = b
	return b
}

func benchRead(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data), Options{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkReadLIP6 measures parse speed of the LIP6 format from memory.
func BenchmarkReadLIP6(b *testing.B) {
	benchRead(b, lip6BenchData())
}
