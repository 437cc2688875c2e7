package qos

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/fdkit/fdkit/internal/selection"
	"github.com/fdkit/fdkit/internal/tmpfile"
)

// Spill says where and when replays and sweeps of a Source that is not
// held in memory (Stream.Source, ReplaySource; for example a trace.Spool)
// move their per-heartbeat data to temporary files, so that their memory
// does not grow with the stream. Replays of heartbeats in memory
// (ReplaySlice, Stream.Heartbeats) write no file; a sweep of the normal
// φ over a long stream in memory (where its thresholds would take more
// than four passes: about 420,000 heartbeats at 40 thresholds) writes
// one, the freshness points of up to 64 thresholds at each heartbeat
// (about 90 bytes a heartbeat at 40 thresholds, at most 1 + 8 per
// threshold), and when it cannot, runs the detectors again instead.
// Every file has no name in the file system (created with O_TMPFILE on
// Linux; elsewhere unlinked as soon as it is created, where the system
// allows it) and is closed when its replay ends. The zero value is the default; results do not depend
// on these settings.
type Spill struct {
	// Dir is the directory of the files ("": os.TempDir()).
	Dir string
	// After is how many evaluated heartbeats a replay keeps in memory
	// (τ − A_k, the delay and the time cell: 17 bytes each) before moving
	// them to a file, from which the TD percentiles are then computed
	// (0: DefaultSpillAfter).
	After int
	// InMemory is the longest stream, in heartbeats, that a sweep
	// (SweepEach) reads into memory before sweeping it (32 bytes a
	// heartbeat, two streams at a time) and whose per-heartbeat data a
	// one-pass sweep keeps in memory: past it the stream is read from its
	// Source by all its sweeps together, the linear families' sweep moves
	// its linear forms to a file (40 bytes a heartbeat), and SFD's sweep,
	// whose shared estimator needs the stream in memory, replays each
	// point (0: DefaultSpillInMemory).
	InMemory int
	// GroupBytes bounds the bytes the grouped φ pass keeps per heartbeat
	// (16 per group of thresholds), on any stream, held in memory or not;
	// past it the pass moves them to files (0: DefaultSpillGroupBytes).
	GroupBytes int
}

// The defaults of Spill's bounds.
const (
	DefaultSpillAfter      = 1 << 14
	DefaultSpillInMemory   = 1 << 18
	DefaultSpillGroupBytes = 48 << 20
)

func (s Spill) validate() error {
	for _, v := range []struct {
		name string
		n    int
	}{{"After", s.After}, {"InMemory", s.InMemory}, {"GroupBytes", s.GroupBytes}} {
		if v.n < 0 {
			return fmt.Errorf("qos: Spill.%s %d is negative", v.name, v.n)
		}
	}
	return nil
}

func (s Spill) after() int      { return cmp.Or(s.After, DefaultSpillAfter) }
func (s Spill) inMemory() int   { return cmp.Or(s.InMemory, DefaultSpillInMemory) }
func (s Spill) groupBytes() int { return cmp.Or(s.GroupBytes, DefaultSpillGroupBytes) }

// spillFile is an unlinked temporary file of records, written
// once and then read back in order (the replay's per-heartbeat data in
// tdSpill, the linear forms in linearSpill).
type spillFile struct {
	f    *os.File
	name string // removed by close when the system kept it linked
	w    *bufio.Writer
	n    int   // records written
	size int64 // bytes written
	err  error
}

func newSpillFile(dir string) (spillFile, error) {
	f, name, err := createSpill(dir)
	if err != nil {
		return spillFile{}, err
	}
	return spillFile{f: f, name: name, w: bufio.NewWriterSize(f, 32<<10)}, nil
}

// createSpill creates a temporary file without a name (internal/tmpfile:
// O_TMPFILE on Linux, else created and unlinked at once); name is the
// file's name when the system kept it linked (the caller removes it after
// closing it), else empty.
func createSpill(dir string) (f *os.File, name string, err error) {
	f, name, err = tmpfile.Create(dir, "fdkit-qos-*")
	if err != nil {
		return nil, "", fmt.Errorf("qos: spilling replay data: %w", err)
	}
	return f, name, nil
}

// put appends one record; the first write error is kept for reader.
func (s *spillFile) put(rec []byte) {
	s.write(rec)
	s.n++
}

// write appends bytes without counting a record.
func (s *spillFile) write(b []byte) {
	if _, err := s.w.Write(b); err != nil && s.err == nil {
		s.err = fmt.Errorf("qos: spilling replay data: %w", err)
	}
	s.size += int64(len(b))
}

// reader flushes what was written and returns a reader of it from the
// first record.
func (s *spillFile) reader() (*bufio.Reader, error) {
	if s.err != nil {
		return nil, s.err
	}
	if err := s.w.Flush(); err != nil {
		return nil, fmt.Errorf("qos: spilling replay data: %w", err)
	}
	return bufio.NewReaderSize(io.NewSectionReader(s.f, 0, s.size), 64<<10), nil
}

func (s *spillFile) close() {
	s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
}

// selectBuckets and selectCollect bound selectKeys's memory: a pass
// either counts the keys of a rank's window in selectBuckets buckets or,
// once the window holds at most selectCollect keys, keeps them.
const (
	selectBuckets = 1 << 12
	selectCollect = 1 << 16
)

// selectStream returns the values at the 0-based ranks among the n values
// that each call of pass yields (the same values in the same order every
// time), whose least and greatest are mn and mx, exactly, in memory that
// does not depend on n (selectKeysWithin on one set, the int64 values as
// keys). Knowing the range, the first pass already counts in buckets of
// the values' spread, so that TD values need two passes, not five.
func selectStream(n int, ranks [2]int, mn, mx int64, pass func(fn func(v int64)) error) ([2]int64, error) {
	buf := make([]uint64, 0, 1024)
	within := [][2]uint64{{uint64(mn) ^ (1 << 63), uint64(mx) ^ (1 << 63)}}
	r, _, err := selectKeysWithin(n, 1, ranks, within, func(_ func(int) bool, fn func(int, []uint64)) error {
		buf = buf[:0]
		err := pass(func(v int64) {
			buf = append(buf, uint64(v)^(1<<63))
			if len(buf) == cap(buf) {
				fn(0, buf)
				buf = buf[:0]
			}
		})
		if err == nil && len(buf) > 0 {
			fn(0, buf)
		}
		return err
	})
	if err != nil {
		return [2]int64{}, err
	}
	return [2]int64{int64(r[0][0] ^ (1 << 63)), int64(r[0][1] ^ (1 << 63))}, nil
}

// floatKey maps a float64 (not NaN) to a uint64 in the same order; keyFloat
// is its inverse.
func floatKey(v float64) uint64 {
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

func keyFloat(k uint64) float64 {
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// selectKeys returns, for each of sets sets of n uint64 keys, the keys at
// the two 0-based ranks and the greatest key, exactly, in memory that does
// not depend on n. A call of pass hands every key of every set i it is
// asked for (want(i)) to fn(i, block) block by block, in the same order
// every time; a set that is not wanted may be left out.
//
// Each pass narrows a window of keys around each rank of each set: keys
// below it are counted, keys in it are counted in selectBuckets equal
// buckets and the bucket holding the rank becomes the next window, until a
// window holds at most selectCollect keys, which the next pass keeps and
// selects from. A pass narrows a window by a factor selectBuckets, so at
// most 6 passes are needed after the first (64 bits / 12 bits a pass), and
// on real TD values two or three.
func selectKeys(n, sets int, ranks [2]int, pass func(want func(i int) bool, fn func(i int, keys []uint64)) error) ([][2]uint64, []uint64, error) {
	return selectKeysWithin(n, sets, ranks, nil, pass)
}

// selectKeysWithin is selectKeys where within, when not nil, holds the
// least and greatest key of each set: the first windows span them instead
// of every key.
func selectKeysWithin(n, sets int, ranks [2]int, within [][2]uint64, pass func(want func(i int) bool, fn func(i int, keys []uint64)) error) ([][2]uint64, []uint64, error) {
	ws := make([][2]selectWin, sets)
	for i := range ws {
		for j := range 2 {
			ws[i][j] = selectWin{hi: math.MaxUint64, inside: n}
			if within != nil {
				ws[i][j].lo, ws[i][j].hi = within[i][0], within[i][1]
			}
		}
	}
	mx := make([]uint64, sets)
	first := true
	want := func(i int) bool { return first || !ws[i][0].done || !ws[i][1].done }
	for range 70 {
		active := false
		for i := range ws {
			for j := range 2 {
				active = ws[i][j].prepare() || active
			}
		}
		if !active && !first {
			out := make([][2]uint64, sets)
			for i := range ws {
				out[i] = [2]uint64{ws[i][0].val, ws[i][1].val}
			}
			return out, mx, nil
		}
		err := pass(want, func(i int, keys []uint64) {
			if first {
				m := mx[i]
				for _, k := range keys {
					m = max(m, k)
				}
				mx[i] = m
			}
			ws[i][0].add(keys)
			ws[i][1].add(keys)
		})
		if err != nil {
			return nil, nil, err
		}
		first = false
		for i := range ws {
			for j := range 2 {
				if err := ws[i][j].narrow(ranks[j]); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return nil, nil, fmt.Errorf("qos: internal error: selection did not converge")
}

// selectWin is selectKeys's window around one rank of one set.
type selectWin struct {
	lo, hi  uint64 // keys, inclusive
	below   int    // keys below lo
	inside  int    // keys in [lo, hi]
	done    bool
	val     uint64
	shift   uint
	collect bool
	hist    []int
	kept    []int64 // kept keys, as int64 (key ^ 1<<63) in the same order
}

// prepare sets w up for the next pass: keep the keys in the window when
// they are few, else count them in buckets. It reports whether w still
// needs a pass.
func (w *selectWin) prepare() bool {
	if w.done {
		return false
	}
	w.shift = 0
	w.collect = w.inside <= selectCollect
	if w.collect {
		w.kept = w.kept[:0]
		return true
	}
	for (w.hi-w.lo)>>w.shift >= selectBuckets {
		w.shift++
	}
	if w.hist == nil {
		w.hist = make([]int, selectBuckets)
	}
	clear(w.hist)
	return true
}

// add keeps or counts the keys of a block that fall in the window.
func (w *selectWin) add(keys []uint64) {
	if w.done {
		return
	}
	lo, hi := w.lo, w.hi
	if w.collect {
		for _, k := range keys {
			if k >= lo && k <= hi {
				w.kept = append(w.kept, int64(k^(1<<63)))
			}
		}
		return
	}
	h, sh := w.hist, w.shift
	for _, k := range keys {
		if k >= lo && k <= hi {
			h[(k-lo)>>sh]++
		}
	}
}

// narrow ends a pass: it selects the rank among the kept keys, or makes
// the bucket holding the rank the next window.
func (w *selectWin) narrow(rank int) error {
	if w.done {
		return nil
	}
	r := rank - w.below
	if w.collect {
		if r < 0 || r >= len(w.kept) {
			return fmt.Errorf("qos: internal error: rank %d outside a window of %d values", rank, len(w.kept))
		}
		w.val, w.done = uint64(selection.Rank(w.kept, r))^(1<<63), true
		w.kept = nil
		return nil
	}
	cum := 0
	b := 0
	for ; b < selectBuckets; b++ {
		if cum+w.hist[b] > r {
			break
		}
		cum += w.hist[b]
	}
	if b == selectBuckets {
		return fmt.Errorf("qos: internal error: rank %d beyond its window", rank)
	}
	w.below += cum
	w.inside = w.hist[b]
	w.lo += uint64(b) << w.shift
	if width := uint64(1)<<w.shift - 1; math.MaxUint64-w.lo >= width {
		w.hi = min(w.hi, w.lo+width)
	}
	if w.shift == 0 || w.lo == w.hi {
		w.val, w.done = w.lo, true
	}
	if w.done {
		w.hist = nil
	}
	return nil
}
