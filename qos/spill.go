package qos

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"time"
)

// spillAt is the number of evaluated heartbeats above which a replay of a
// Source that is not a slice moves its per-heartbeat data (τ − A_k, the
// delay and the time cell: 17 bytes each) from memory to an unlinked
// temporary file, so that its memory stays bounded whatever the stream's
// length; the TD summary is then computed from the file (tdStatsSpilled).
var spillAt = 1 << 17

// evalSpill is the file of a replay's per-evaluated-heartbeat data.
type evalSpill struct {
	f    *os.File
	name string // removed by close when the system kept it linked
	w    *bufio.Writer
	n    int
	buf  [17]byte
	err  error
}

func newEvalSpill() (*evalSpill, error) {
	f, err := os.CreateTemp("", "fdkit-qos-*")
	if err != nil {
		return nil, fmt.Errorf("qos: spilling replay data: %w", err)
	}
	s := &evalSpill{f: f, w: bufio.NewWriterSize(f, 32<<10)}
	if os.Remove(f.Name()) != nil {
		s.name = f.Name()
	}
	return s, nil
}

func (s *evalSpill) add(t, d int64, c uint8) {
	binary.LittleEndian.PutUint64(s.buf[0:], uint64(t))
	binary.LittleEndian.PutUint64(s.buf[8:], uint64(d))
	s.buf[16] = c
	if _, err := s.w.Write(s.buf[:]); err != nil && s.err == nil {
		s.err = fmt.Errorf("qos: spilling replay data: %w", err)
	}
	s.n++
}

// each calls fn for every record in order.
func (s *evalSpill) each(fn func(t, d int64, c uint8)) error {
	if s.err != nil {
		return s.err
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("qos: spilling replay data: %w", err)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(s.f, 0, int64(s.n)*17), 64<<10)
	var b [17]byte
	for range s.n {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return fmt.Errorf("qos: reading back replay data: %w", err)
		}
		fn(int64(binary.LittleEndian.Uint64(b[0:])), int64(binary.LittleEndian.Uint64(b[8:])), b[16])
	}
	return nil
}

func (s *evalSpill) close() {
	s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
}

// selectBuckets and selectCollect bound selectStream's memory: a pass
// either counts the values of a rank's window in selectBuckets buckets or,
// once the window holds at most selectCollect values, keeps them.
const (
	selectBuckets = 1 << 12
	selectCollect = 1 << 16
)

// selectStream returns the values at the 0-based ranks among the n values
// that each call of pass yields (the same values in the same order every
// time), exactly, in memory that does not depend on n. Each pass narrows
// a window of int64 values around each rank: values below it are counted,
// values in it are counted in selectBuckets equal buckets and the bucket
// holding the rank becomes the next window, until a window holds at most
// selectCollect values, which the next pass keeps and selects from. A pass
// narrows a window by a factor selectBuckets, so at most 6 passes are
// needed after the first (64 bits / 12 bits a pass), and on real TD values
// two or three.
func selectStream(n int, ranks [2]int, pass func(fn func(v int64)) error) ([2]int64, error) {
	type win struct {
		lo, hi uint64 // keys, inclusive
		below  int    // values with keys below lo
		inside int    // values with keys in [lo, hi]; −1 unknown
		done   bool
		val    int64
	}
	key := func(v int64) uint64 { return uint64(v) ^ (1 << 63) }
	w := [2]win{{hi: math.MaxUint64, inside: n}, {hi: math.MaxUint64, inside: n}}
	var hist [2][]int
	var kept [2][]int64
	for range 70 {
		if w[0].done && w[1].done {
			return [2]int64{w[0].val, w[1].val}, nil
		}
		var shift [2]uint
		collect := [2]bool{}
		for j := range 2 {
			if w[j].done {
				continue
			}
			if w[j].inside <= selectCollect {
				collect[j] = true
				kept[j] = kept[j][:0]
				continue
			}
			span := w[j].hi - w[j].lo
			for span>>shift[j] >= selectBuckets {
				shift[j]++
			}
			if hist[j] == nil {
				hist[j] = make([]int, selectBuckets)
			}
			clear(hist[j])
		}
		err := pass(func(v int64) {
			k := key(v)
			for j := range 2 {
				wj := &w[j]
				if wj.done || k < wj.lo || k > wj.hi {
					continue
				}
				if collect[j] {
					kept[j] = append(kept[j], v)
				} else {
					hist[j][(k-wj.lo)>>shift[j]]++
				}
			}
		})
		if err != nil {
			return [2]int64{}, err
		}
		for j := range 2 {
			wj := &w[j]
			if wj.done {
				continue
			}
			r := ranks[j] - wj.below
			if collect[j] {
				if r < 0 || r >= len(kept[j]) {
					return [2]int64{}, fmt.Errorf("qos: internal error: rank %d outside a window of %d values", ranks[j], len(kept[j]))
				}
				wj.val, wj.done = selectRank(kept[j], r), true
				continue
			}
			cum := 0
			b := 0
			for ; b < selectBuckets; b++ {
				if cum+hist[j][b] > r {
					break
				}
				cum += hist[j][b]
			}
			if b == selectBuckets {
				return [2]int64{}, fmt.Errorf("qos: internal error: rank %d beyond its window", ranks[j])
			}
			wj.below += cum
			wj.inside = hist[j][b]
			wj.lo += uint64(b) << shift[j]
			if width := uint64(1)<<shift[j] - 1; math.MaxUint64-wj.lo >= width {
				wj.hi = min(wj.hi, wj.lo+width)
			}
			if shift[j] == 0 || wj.lo == wj.hi {
				wj.val, wj.done = int64(wj.lo^(1<<63)), true
			}
		}
	}
	return [2]int64{}, fmt.Errorf("qos: internal error: selection did not converge")
}

// tdStatsSpilled is tdStats over the TD_k = t_k + base_k of a spilled
// replay (base from the record's delay d_k when sync, else d̄), also
// filling the cells' TD sums; it returns the last TD_k.
func tdStatsSpilled(s *evalSpill, sync bool, dbar int64, cells *cellSeries) (TDStats, int64, error) {
	td := func(t, d int64) int64 {
		if sync {
			return t + d
		}
		return t + dbar
	}
	if cells != nil {
		clear(cells.tdSum)
		clear(cells.tdN)
	}
	var sum float64
	var mx, last int64 = math.MinInt64, 0
	err := s.each(func(t, d int64, c uint8) {
		v := td(t, d)
		sum += float64(v)
		mx, last = max(mx, v), v
		if cells != nil {
			cells.tdSum[c] += float64(v)
			cells.tdN[c]++
		}
	})
	if err != nil {
		return TDStats{}, 0, err
	}
	n := s.n
	st := TDStats{Mean: time.Duration(math.Round(sum / float64(n))), Max: time.Duration(mx)}
	r, err := selectStream(n, [2]int{rank(0.50, n), rank(0.99, n)}, func(fn func(int64)) error {
		return s.each(func(t, d int64, _ uint8) { fn(td(t, d)) })
	})
	if err != nil {
		return TDStats{}, 0, err
	}
	st.P50, st.P99 = time.Duration(r[0]), time.Duration(r[1])
	return st, last, nil
}
