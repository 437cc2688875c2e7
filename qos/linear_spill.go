package qos

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// linRecord is the size of one spilled heartbeat of a linear replay:
// τ_k(0) − A_k and scale_k (float64), the delay A_k − σ_k (int64, 0
// without a send time) and the time cell.
const linRecord = 25

// linBlockLen is the number of records a pass over a linearSpill hands
// over at once.
const linBlockLen = 2048

// linearSpill is the file of a linear replay's per-heartbeat data, for a
// Source longer than Spill.InMemory: the one-pass sweep then reads the linear
// forms of TD_k back sequentially (linearCurve.fromSpill) instead of
// keeping them in memory.
type linearSpill struct {
	spillFile
	buf [linRecord]byte
}

func newLinearSpill(dir string) (*linearSpill, error) {
	f, err := newSpillFile(dir)
	if err != nil {
		return nil, err
	}
	return &linearSpill{spillFile: f}, nil
}

func (s *linearSpill) add(c, scale float64, d int64, cell uint8) {
	binary.LittleEndian.PutUint64(s.buf[0:], math.Float64bits(c))
	binary.LittleEndian.PutUint64(s.buf[8:], math.Float64bits(scale))
	binary.LittleEndian.PutUint64(s.buf[16:], uint64(d))
	s.buf[24] = cell
	s.put(s.buf[:])
}

// linBlock is a run of consecutive spilled records.
type linBlock struct {
	c, s []float64
	d    []int64
	cell []uint8
}

// blocks calls fn with the records in order, linBlockLen at a time (the
// block is reused by the next call).
func (s *linearSpill) blocks(fn func(b *linBlock)) error {
	r, err := s.reader()
	if err != nil {
		return err
	}
	b := &linBlock{c: make([]float64, linBlockLen), s: make([]float64, linBlockLen),
		d: make([]int64, linBlockLen), cell: make([]uint8, linBlockLen)}
	raw := make([]byte, linBlockLen*linRecord)
	for from := 0; from < s.n; from += linBlockLen {
		m := min(linBlockLen, s.n-from)
		if _, err := io.ReadFull(r, raw[:m*linRecord]); err != nil {
			return fmt.Errorf("qos: reading back replay data: %w", err)
		}
		for k := range m {
			x := raw[k*linRecord : (k+1)*linRecord]
			b.c[k] = math.Float64frombits(binary.LittleEndian.Uint64(x[0:]))
			b.s[k] = math.Float64frombits(binary.LittleEndian.Uint64(x[8:]))
			b.d[k] = int64(binary.LittleEndian.Uint64(x[16:]))
			b.cell[k] = x[24]
		}
		fn(&linBlock{c: b.c[:m], s: b.s[:m], d: b.d[:m], cell: b.cell[:m]})
	}
	return nil
}

// fromSpill fills what linearCurve.at and cellsAt read per heartbeat from
// the spilled records instead of arrays: the sums, the last heartbeat's
// linear form, and, per query point, the TD sums under a floor and the
// exact TD percentiles. Every value is computed with the same expressions
// in the same order as the in-memory path (replayLinear, at, percentiles),
// so the points are equal field by field. base is the TD base of a record:
// its delay when send-based (sync), else dbar. floor says whether some
// heartbeat's τ falls before its arrival at the smallest query point.
//
// The passes are sequential: one for the sums (and, under a floor, the
// per-point TD sums), then those of selectKeys, which finds the ranks of
// every query point at once (only once when every scale is equal, as at
// the one-pass path: the percentiles then shift with p).
func (lc *linearCurve) fromSpill(sp *linearSpill, sync bool, dbar int64, floor bool, cellN int) error {
	n, P := sp.n, len(lc.ps)
	lc.n = n
	if n == 0 {
		return nil
	}
	base := func(d int64) float64 {
		if sync {
			return float64(d)
		}
		return float64(dbar)
	}
	lc.sameS = !floor
	if floor {
		lc.floorSum = make([]float64, P)
		if cellN > 0 {
			lc.floorCells = make([][]float64, P)
			for i := range lc.floorCells {
				lc.floorCells[i] = make([]float64, cellN)
			}
		}
	}
	if cellN > 0 {
		lc.cTD0, lc.cScale, lc.cN = make([]float64, cellN), make([]float64, cellN), make([]float64, cellN)
	}
	td0 := make([]float64, linBlockLen)
	fl := make([]float64, linBlockLen)
	s0 := math.NaN()
	mx0 := math.Inf(-1)
	// The least and greatest td0, scale and floor bound every TD_k(p)
	// (see tdGrid): selectKeysWithin starts its windows there.
	mn0, sMin, sMax := math.Inf(1), math.Inf(1), math.Inf(-1)
	fMin, fMax := math.Inf(-1), math.Inf(-1)
	if floor {
		fMin, fMax = math.Inf(1), math.Inf(-1)
	}
	err := sp.blocks(func(b *linBlock) {
		m := len(b.c)
		if math.IsNaN(s0) {
			s0 = b.s[0]
		}
		for k := range m {
			bk := base(b.d[k])
			v := b.c[k] + bk
			td0[k], fl[k] = v, bk
			lc.sumTD0 += v
			lc.sumScale += b.s[k]
			if b.s[k] != s0 {
				lc.sameS = false
			}
			mx0, mn0 = max(mx0, v), min(mn0, v)
			sMin, sMax = min(sMin, b.s[k]), max(sMax, b.s[k])
			if floor {
				fMin, fMax = min(fMin, bk), max(fMax, bk)
			}
			if cellN > 0 {
				c := b.cell[k]
				lc.cTD0[c] += v
				lc.cScale[c] += b.s[k]
				lc.cN[c]++
			}
		}
		lc.lastTD0, lc.lastScale, lc.lastFloor = td0[m-1], b.s[m-1], fl[m-1]
		if !floor {
			return
		}
		for i, p := range lc.ps {
			sum := lc.floorSum[i]
			for k := range m {
				sum += max(td0[k]+b.s[k]*p, fl[k])
			}
			lc.floorSum[i] = sum
			if cellN > 0 {
				cs := lc.floorCells[i]
				for k := range m {
					cs[b.cell[k]] += max(td0[k]+b.s[k]*p, fl[k])
				}
			}
		}
	})
	if err != nil {
		return err
	}
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	if lc.sameS {
		keys := make([]uint64, linBlockLen)
		within := [][2]uint64{{floatKey(mn0), floatKey(mx0)}}
		r, _, err := selectKeysWithin(n, 1, ranks, within, func(_ func(int) bool, fn func(int, []uint64)) error {
			return sp.blocks(func(b *linBlock) {
				for k := range b.c {
					keys[k] = floatKey(b.c[k] + base(b.d[k]))
				}
				fn(0, keys[:len(b.c)])
			})
		})
		if err != nil {
			return err
		}
		lc.tdRanks = [3]float64{keyFloat(r[0][0]), keyFloat(r[0][1]), mx0}
		return nil
	}
	within := make([][2]uint64, P)
	for i, p := range lc.ps {
		sLo, sHi := sMin, sMax
		if p < 0 {
			sLo, sHi = sHi, sLo
		}
		within[i] = [2]uint64{floatKey(tdValue(mn0, sLo, fMin, p)), floatKey(tdValue(mx0, sHi, fMax, p))}
	}
	keys := make([]uint64, linBlockLen)
	r, mx, err := selectKeysWithin(n, P, ranks, within, func(want func(int) bool, fn func(int, []uint64)) error {
		return sp.blocks(func(b *linBlock) {
			m := len(b.c)
			for k := range m {
				bk := base(b.d[k])
				td0[k] = b.c[k] + bk
				fl[k] = math.Inf(-1)
				if floor {
					fl[k] = bk
				}
			}
			for i, p := range lc.ps {
				if !want(i) {
					continue
				}
				for k := range m {
					keys[k] = floatKey(tdValue(td0[k], b.s[k], fl[k], p))
				}
				fn(i, keys[:m])
			}
		})
	})
	if err != nil {
		return err
	}
	lc.quant = make([]tdQuantiles, P)
	for i := range lc.quant {
		lc.quant[i] = tdQuantiles{keyFloat(r[i][0]), keyFloat(r[i][1]), keyFloat(mx[i])}
	}
	return nil
}
