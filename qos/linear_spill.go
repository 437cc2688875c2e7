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
	lc.n = sp.n
	if sp.n == 0 {
		return nil
	}
	r := spillReader{sp: sp, sync: sync, dbar: dbar, floor: floor, cellN: cellN,
		td0: make([]float64, linBlockLen), fl: make([]float64, linBlockLen)}
	b, err := lc.spillSums(&r)
	if err != nil {
		return err
	}
	if lc.sameS {
		return lc.spillRanksShared(&r, b)
	}
	return lc.spillRanks(&r, b)
}

// spillReader reads a linearCurve's spilled records: sync, dbar, floor and
// cellN as fromSpill's; td0 and fl are a block's TD_k(0) and floors.
type spillReader struct {
	sp      *linearSpill
	sync    bool
	dbar    int64
	floor   bool
	cellN   int
	td0, fl []float64
}

// base is the TD base of a record of delay d.
func (r *spillReader) base(d int64) float64 {
	if r.sync {
		return float64(d)
	}
	return float64(r.dbar)
}

// spillBounds are the least and greatest TD_k(0) (mn0, mx0), scale and
// floor of every record: they bound every TD_k(p) (see tdGrid), and
// selectKeysWithin starts its windows there.
type spillBounds struct {
	mn0, mx0, sMin, sMax, fMin, fMax float64
}

// spillSums is fromSpill's first pass: the sums, the cells' sums, the last
// heartbeat's form, whether every scale is equal (lc.sameS), and under a
// floor each query point's TD sums; it returns the bounds of the records.
func (lc *linearCurve) spillSums(r *spillReader) (spillBounds, error) {
	P, cellN, floor := len(lc.ps), r.cellN, r.floor
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
	td0, fl := r.td0, r.fl
	s0 := math.NaN()
	b := spillBounds{mn0: math.Inf(1), mx0: math.Inf(-1), sMin: math.Inf(1), sMax: math.Inf(-1),
		fMin: math.Inf(-1), fMax: math.Inf(-1)}
	if floor {
		b.fMin = math.Inf(1)
	}
	err := r.sp.blocks(func(blk *linBlock) {
		m := len(blk.c)
		if math.IsNaN(s0) {
			s0 = blk.s[0]
		}
		for k := range m {
			bk := r.base(blk.d[k])
			v := blk.c[k] + bk
			td0[k], fl[k] = v, bk
			lc.sumTD0 += v
			lc.sumScale += blk.s[k]
			if blk.s[k] != s0 {
				lc.sameS = false
			}
			b.mx0, b.mn0 = max(b.mx0, v), min(b.mn0, v)
			b.sMin, b.sMax = min(b.sMin, blk.s[k]), max(b.sMax, blk.s[k])
			if floor {
				b.fMin, b.fMax = min(b.fMin, bk), max(b.fMax, bk)
			}
			if cellN > 0 {
				c := blk.cell[k]
				lc.cTD0[c] += v
				lc.cScale[c] += blk.s[k]
				lc.cN[c]++
			}
		}
		lc.lastTD0, lc.lastScale, lc.lastFloor = td0[m-1], blk.s[m-1], fl[m-1]
		if !floor {
			return
		}
		for i, p := range lc.ps {
			sum := lc.floorSum[i]
			for k := range m {
				sum += max(td0[k]+blk.s[k]*p, fl[k])
			}
			lc.floorSum[i] = sum
			if cellN > 0 {
				cs := lc.floorCells[i]
				for k := range m {
					cs[blk.cell[k]] += max(td0[k]+blk.s[k]*p, fl[k])
				}
			}
		}
	})
	return b, err
}

// spillRanksShared sets lc.tdRanks when every scale is equal and no floor
// applies: the percentiles of TD_k(0), which shift with p (one selection
// for every query point).
func (lc *linearCurve) spillRanksShared(r *spillReader, b spillBounds) error {
	n := r.sp.n
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	keys := make([]uint64, linBlockLen)
	within := [][2]uint64{{floatKey(b.mn0), floatKey(b.mx0)}}
	rk, _, err := selectKeysWithin(n, 1, ranks, within, func(_ func(int) bool, fn func(int, []uint64)) error {
		return r.sp.blocks(func(blk *linBlock) {
			for k := range blk.c {
				keys[k] = floatKey(blk.c[k] + r.base(blk.d[k]))
			}
			fn(0, keys[:len(blk.c)])
		})
	})
	if err != nil {
		return err
	}
	lc.tdRanks = [3]float64{keyFloat(rk[0][0]), keyFloat(rk[0][1]), b.mx0}
	return nil
}

// spillRanks sets lc.quant, each query point's exact TD percentiles, by
// selectKeysWithin over its TD_k, each window first bounded by b.
func (lc *linearCurve) spillRanks(r *spillReader, b spillBounds) error {
	n, P := r.sp.n, len(lc.ps)
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	within := make([][2]uint64, P)
	for i, p := range lc.ps {
		sLo, sHi := b.sMin, b.sMax
		if p < 0 {
			sLo, sHi = sHi, sLo
		}
		within[i] = [2]uint64{floatKey(tdValue(b.mn0, sLo, b.fMin, p)), floatKey(tdValue(b.mx0, sHi, b.fMax, p))}
	}
	td0, fl := r.td0, r.fl
	keys := make([]uint64, linBlockLen)
	rk, mx, err := selectKeysWithin(n, P, ranks, within, func(want func(int) bool, fn func(int, []uint64)) error {
		return r.sp.blocks(func(blk *linBlock) {
			m := len(blk.c)
			for k := range m {
				bk := r.base(blk.d[k])
				td0[k] = blk.c[k] + bk
				fl[k] = math.Inf(-1)
				if r.floor {
					fl[k] = bk
				}
			}
			for i, p := range lc.ps {
				if !want(i) {
					continue
				}
				for k := range m {
					keys[k] = floatKey(tdValue(td0[k], blk.s[k], fl[k], p))
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
		lc.quant[i] = tdQuantiles{keyFloat(rk[i][0]), keyFloat(rk[i][1]), keyFloat(mx[i])}
	}
	return nil
}
