package qos

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/fdkit/fdkit/internal/selection"
)

// tdSpill is the file of a replay's per-evaluated-heartbeat data once it
// moves out of memory (Config.Spill.After): τ − A_k and A_k − σ_k, each as
// the zigzag code of its difference from the previous heartbeat's, packed
// tdPack heartbeats at a time in as many bytes per value as the pack's
// largest code needs (a header byte holds both widths): about 6 bytes a
// heartbeat on TD-like values, decoded without a branch per value.
// Everything replayer.finish computes from them but the percentiles is
// accumulated as the records are added, for both TD bases (send-based:
// TD_k = τ − A_k + A_k − σ_k; arrival-based: + d̄), since the replay
// decides between them only at its end: the sum, least, greatest and last
// TD_k and the TD sums per time cell, in heartbeat order as the in-memory
// replay adds them. A systematic sample of the records draws the
// percentiles' rank windows (sampleBounds), so that stats reads the file
// back once, counting the values below each window and keeping those in
// it; only when a window misses its rank, or the windows would keep too
// many values, does it select among all values (selectStream, two passes
// more on TD values).
type tdSpill struct {
	spillFile
	off          int64 // d̄
	prevT, prevD int64 // the last record packed
	pend         [tdPack]tdRecord
	npend        int
	out          []byte    // packed bytes not yet written
	run          [2]tdRun  // send-based, arrival-based
	cellN        []float64 // evaluated heartbeats per cell (nil without cells)
	// The sample: the records at the multiples of stride (a power of
	// two), which doubles whenever the sample reaches tdSpillSample.
	sample []tdRecord
	stride int
	// decoded counts the records blocks has decoded, over all its passes.
	decoded int
}

// tdRun is what tdSpill accumulates for one TD base.
type tdRun struct {
	sum          float64
	mn, mx, last int64
	cellSum      []float64
}

// tdRecord is one spilled heartbeat: τ − A_k and A_k − σ_k.
type tdRecord struct{ t, d int64 }

// tdSpillSample bounds tdSpill's sample; it holds between half of it and
// all of it (16 bytes each): windows of a few percent of the values.
const tdSpillSample = 1 << 13

// tdPack is the number of heartbeats packed with one pair of widths.
const tdPack = 256

// newTDSpill returns an empty spill whose arrival-based TD adds off; cells
// is the number of time cells (0: none).
func newTDSpill(dir string, off int64, cells int) (*tdSpill, error) {
	f, err := newSpillFile(dir)
	if err != nil {
		return nil, err
	}
	s := &tdSpill{spillFile: f, off: off, stride: 1, sample: make([]tdRecord, 0, tdSpillSample)}
	for j := range s.run {
		s.run[j] = tdRun{mn: math.MaxInt64, mx: math.MinInt64}
		if cells > 0 {
			s.run[j].cellSum = make([]float64, cells)
		}
	}
	if cells > 0 {
		s.cellN = make([]float64, cells)
	}
	return s, nil
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// add appends the heartbeat whose τ − A_k is t, A_k − σ_k d (0 without a
// send time) and time cell c (ignored without cells).
func (s *tdSpill) add(t, d int64, c uint8) {
	if s.n&(s.stride-1) == 0 {
		if len(s.sample) == tdSpillSample {
			for i := range tdSpillSample / 2 {
				s.sample[i] = s.sample[2*i]
			}
			s.sample = s.sample[:tdSpillSample/2]
			s.stride *= 2
		}
		if s.n&(s.stride-1) == 0 {
			s.sample = append(s.sample, tdRecord{t, d})
		}
	}
	s.n++
	s.pend[s.npend] = tdRecord{t, d}
	if s.npend++; s.npend == tdPack {
		s.pack()
	}
	v0, v1 := t+d, t+s.off
	r0, r1 := &s.run[0], &s.run[1]
	r0.sum += float64(v0)
	r1.sum += float64(v1)
	r0.mn, r0.mx, r0.last = min(r0.mn, v0), max(r0.mx, v0), v0
	r1.mn, r1.mx, r1.last = min(r1.mn, v1), max(r1.mx, v1), v1
	if s.cellN != nil {
		r0.cellSum[c] += float64(v0)
		r1.cellSum[c] += float64(v1)
		s.cellN[c]++
	}
}

// pack appends the pending records to out, and out to the file once it
// holds 32 KiB.
func (s *tdSpill) pack() {
	var zt, zd [tdPack]uint64
	var ot, od uint64
	pt, pd := s.prevT, s.prevD
	for i, r := range s.pend[:s.npend] {
		zt[i], zd[i] = zigzag(r.t-pt), zigzag(r.d-pd)
		ot, od = ot|zt[i], od|zd[i]
		pt, pd = r.t, r.d
	}
	s.prevT, s.prevD = pt, pd
	wt, wd := (bits.Len64(ot)+7)/8, (bits.Len64(od)+7)/8
	s.out = append(s.out, byte(wt)|byte(wd)<<4)
	k := len(s.out)
	s.out = slices.Grow(s.out, s.npend*(wt+wd)+8)[:k+s.npend*(wt+wd)+8]
	for i := range s.npend {
		binary.LittleEndian.PutUint64(s.out[k:], zt[i])
		k += wt
		binary.LittleEndian.PutUint64(s.out[k:], zd[i])
		k += wd
	}
	s.out = s.out[:k]
	s.npend = 0
	if len(s.out) >= 32<<10 {
		s.write(s.out)
		s.out = s.out[:0]
	}
}

// tdSpillBlock is the number of records a pass over a tdSpill decodes at a
// time (a multiple of tdPack).
const tdSpillBlock = 16 * tdPack

// blocks calls fn with the TD_k of the records in order (TD base: the
// delay when sync, else d̄), tdSpillBlock at a time (the slice is reused
// by the next call), until fn returns false: the rest of the file is then
// left unread.
func (s *tdSpill) blocks(sync bool, fn func(td []int64) bool) error {
	if s.npend > 0 {
		s.pack()
	}
	if len(s.out) > 0 {
		s.write(s.out)
		s.out = s.out[:0]
	}
	r, err := s.reader()
	if err != nil {
		return err
	}
	const most = 1 + tdPack*16 // a pack's bytes at the most
	raw := make([]byte, 64<<10+8)
	buf := raw[:64<<10] // raw's last 8 bytes stay 0: room for the last value's load
	have, pos := 0, 0
	td := make([]int64, tdSpillBlock)
	var t, d int64
	for from := 0; from < s.n; from += tdSpillBlock {
		m := min(tdSpillBlock, s.n-from)
		for a := 0; a < m; a += tdPack {
			if have-pos < most {
				have = copy(buf, buf[pos:have])
				pos = 0
				got, err := io.ReadFull(r, buf[have:])
				if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
					return fmt.Errorf("qos: reading back replay data: %w", err)
				}
				have += got
				clear(raw[have:])
			}
			e := min(a+tdPack, m)
			wt, wd := 0, 0
			if pos < have {
				wt, wd = int(buf[pos]&15), int(buf[pos]>>4)
			}
			if pos >= have || wt > 8 || wd > 8 || have-pos-1 < (e-a)*(wt+wd) {
				return fmt.Errorf("qos: reading back replay data: records %d to %d of %d are truncated", from+a+1, from+e, s.n)
			}
			mt, md := uint64(1)<<(8*wt)-1, uint64(1)<<(8*wd)-1
			if wt == 8 {
				mt = math.MaxUint64
			}
			if wd == 8 {
				md = math.MaxUint64
			}
			p := pos + 1
			for k := a; k < e; k++ {
				u := binary.LittleEndian.Uint64(raw[p:]) & mt
				p += wt
				v := binary.LittleEndian.Uint64(raw[p:]) & md
				p += wd
				t += unzigzag(u)
				d += unzigzag(v)
				if sync {
					td[k] = t + d
				} else {
					td[k] = t + s.off
				}
			}
			pos = p
		}
		s.decoded += m
		if !fn(td[:m]) {
			return nil
		}
	}
	return nil
}

// stats returns tdStats of the spilled TD_k (base: the delays when sync,
// else d̄) and the last of them, and fills the TD sums of cells (when not
// nil), as replayer.finish computes them in memory.
func (s *tdSpill) stats(sync bool, cells *cellSeries) (TDStats, int64, error) {
	j := 1
	if sync {
		j = 0
	}
	run, n := &s.run[j], s.n
	if n == 0 {
		return TDStats{}, 0, nil
	}
	if cells != nil {
		copy(cells.tdSum, run.cellSum)
		copy(cells.tdN, s.cellN)
	}
	st := TDStats{Mean: time.Duration(math.Round(run.sum / float64(n))), Max: time.Duration(run.mx)}
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	r, ok, err := s.windowRanks(sync, ranks, run.mn, run.mx)
	if err != nil {
		return TDStats{}, 0, err
	}
	if !ok {
		r, err = selectStream(n, ranks, run.mn, run.mx, func(fn func(int64)) error {
			return s.blocks(sync, func(td []int64) bool {
				for _, v := range td {
					fn(v)
				}
				return true
			})
		})
		if err != nil {
			return TDStats{}, 0, err
		}
	}
	st.P50, st.P99 = time.Duration(r[0]), time.Duration(r[1])
	return st, run.last, nil
}

// tdSpillWindows bounds the tdSpill.stats that keep their rank windows at
// once: each keeps a few percent of its stream's values.
var tdSpillWindows = make(chan struct{}, 2)

// tdSpillWindowMax bounds the values the two rank windows of a tdSpill may
// expect to keep (8 bytes each: 32 MiB, a stream of about 5·10^7 values):
// past it, and when the windows fill twice their expected count, stats
// selects among all values in memory that does not depend on the
// stream's length (selectStream).
const tdSpillWindowMax = 1 << 22

// windowRanks is rankValuesInt on the spilled TD_k, with the sample drawn
// as they were written: one read of the file counts the values below
// each window and keeps those in it. ok is false (the caller selects from
// all values) when mx − mn overflows, when the sample's values are heavy
// on the windows' sides (sidesHeavy), when the windows would keep too
// many values (tdSpillWindowMax, or twice their expected count) or when a
// window misses its rank.
func (s *tdSpill) windowRanks(sync bool, ranks [2]int, mn, mx int64) (r [2]int64, ok bool, err error) {
	n := s.n
	if mn < 0 && mx > math.MaxInt64+mn {
		return r, false, nil
	}
	sample := make([]int64, len(s.sample))
	for i, rec := range s.sample {
		sample[i] = rec.t + s.off
		if sync {
			sample[i] = rec.t + rec.d
		}
	}
	val, has := sampleBounds(sample, ranks, n)
	if sidesHeavy(sample, val, has) {
		return r, false, nil
	}
	lo0, hi0, lo1, hi1 := windowEdges(val, has, mn, mx)
	m := len(sample)
	cap0, cap1 := windowCap(ranks[0], n, m), windowCap(ranks[1], n, m)
	if cap0+cap1 > tdSpillWindowMax {
		return r, false, nil
	}
	tdSpillWindows <- struct{}{}
	defer func() { <-tdSpillWindows }()
	in0 := make([]int64, 0, cap0+tdSpillBlock)
	in1 := make([]int64, 0, cap1+tdSpillBlock)
	// A window that needs more than twice its expected count was drawn on
	// a sample that misrepresents the values (a period in them that the
	// systematic sample aliases).
	lim0, lim1 := 2*cap0+tdSpillBlock, 2*cap1+tdSpillBlock
	var b0, b1 int
	over := false
	err = s.blocks(sync, func(vs []int64) bool {
		if over = len(in0)+len(vs) > lim0 || len(in1)+len(vs) > lim1; over {
			return false // the caller reads the file again: stop here
		}
		in0, in1 = slices.Grow(in0, len(vs)), slices.Grow(in1, len(vs))
		in0, b0 = windowScan(vs, lo0, hi0, in0, b0)
		in1, b1 = windowScan(vs, lo1, hi1, in1, b1)
		return true
	})
	if err != nil || over {
		return r, false, err
	}
	r0, r1 := ranks[0]-b0, ranks[1]-b1
	if r0 < 0 || r0 >= len(in0) || r1 < 0 || r1 >= len(in1) {
		return r, false, nil
	}
	return [2]int64{selection.Rank(in0, r0), selection.Rank(in1, r1)}, true, nil
}
