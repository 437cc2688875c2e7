package qos

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// A tauTape carries, from sweepRanked's first pass to its second, what
// the second reads of its detector: at every heartbeat the detector
// observed, whether its FreshnessPoint was ok and whether it was warming
// up, and, when it was ready (ok and not warming up), every threshold's
// freshness point. The second pass then replays the tape instead of the
// detector (tapePlayer): worth it for a detector whose state costs as
// much to advance as its freshness points cost to read (the normal φ's
// set, whose groups' μ, σ_eff and τ decide its splits at every
// heartbeat), where the first pass runs it in full anyway.
//
// The tape is a spillFile (a few tens of bytes a heartbeat: about 90 at
// 41 thresholds of the normal φ on issue 24's trace), one record per
// heartbeat: a header byte, the width w ≤ 8 in its low four bits, ok in
// bit 4, ready in bit 5; when ready, the zigzag code of v_j − v'_j in w
// bytes for each threshold j, v_j = τ_j − A (A the heartbeat's arrival,
// in wrapping int64 arithmetic, so exact for any τ) and v'_j the
// threshold's v at the previous ready record (0 at the first).
type tauTape struct {
	spillFile
	prev []int64
	zs   []uint64
	out  []byte // bytes not yet written
}

// Header bits of a tape record.
const (
	tapeOK    = 1 << 4
	tapeReady = 1 << 5
)

// newTape is newTauTape, a variable so that tests make tapes fail.
var newTape = newTauTape

// newTauTape returns an empty tape of n thresholds' freshness points.
func newTauTape(dir string, n int) (*tauTape, error) {
	f, err := newSpillFile(dir)
	if err != nil {
		return nil, err
	}
	return &tauTape{spillFile: f, prev: make([]int64, n), zs: make([]uint64, n), out: make([]byte, 0, 40<<10)}, nil
}

// record appends the record of a heartbeat arriving at a after which the
// detector's FreshnessPoint was ok or not and it was ready or not, with
// the freshness points taus when ready.
func (t *tauTape) record(a time.Duration, ok, ready bool, taus []time.Duration) {
	var h byte
	if ok {
		h |= tapeOK
	}
	if !ready {
		t.out = append(t.out, h)
		t.flush(false)
		return
	}
	h |= tapeReady
	var or uint64
	zs := t.zs[:len(taus)]
	prev := t.prev[:len(taus)]
	for j, tau := range taus {
		v := int64(tau) - int64(a)
		zs[j] = zigzag(v - prev[j])
		prev[j] = v
		or |= zs[j]
	}
	w := (bits.Len64(or) + 7) / 8
	k := len(t.out)
	t.out = append(t.out, h|byte(w))
	k++
	n := len(zs) * w
	if cap(t.out)-k < n+8 {
		t.flush(true)
		k = len(t.out)
	}
	buf := t.out[:k+n+8]
	for _, z := range zs {
		binary.LittleEndian.PutUint64(buf[k:], z)
		k += w
	}
	t.out = buf[:k]
	t.flush(false)
}

// flush writes out once it holds 32 KiB, or now.
func (t *tauTape) flush(now bool) {
	if len(t.out) >= 32<<10 || now && len(t.out) > 0 {
		t.write(t.out)
		t.out = t.out[:0]
	}
	if now && cap(t.out)-len(t.out) < 1+9*len(t.zs) {
		t.out = make([]byte, 0, max(40<<10, 2+9*len(t.zs)))
	}
}

// play returns the second pass's detector, which replays the tape; the
// tape then takes no more records.
func (t *tauTape) play() (*tapePlayer, error) {
	t.flush(true)
	r, err := t.reader()
	if err != nil {
		return nil, err
	}
	n := len(t.prev)
	p := &tapePlayer{r: r, taus: make([]time.Duration, n), v: make([]int64, n)}
	p.raw = make([]byte, max(64<<10, 2+8*n)+8) // 8 bytes more: room for the last value's 8-byte load
	p.buf = p.raw[:len(p.raw)-8]
	return p, nil
}

// tapeRecorder is sweepRanked's first pass's detector when it records a
// tauTape: det, whose freshness points fill sets, and the tape of what
// it did at each heartbeat. The pass reads the freshness points it
// sampled from the tape's record (fill), not from det again.
type tapeRecorder struct {
	thresholdDetector
	detFP func([]time.Duration)
	tape  *tauTape
	taus  []time.Duration // the thresholds' τ after the last heartbeat, when ready
}

// newTapeRecorder returns the recorder of det, whose n thresholds'
// freshness points detFP sets, on tape.
func newTapeRecorder(det thresholdDetector, detFP func([]time.Duration), n int, tape *tauTape) *tapeRecorder {
	return &tapeRecorder{thresholdDetector: det, detFP: detFP, tape: tape, taus: make([]time.Duration, n)}
}

// Observe gives hb to the detector and records what it then reports.
func (r *tapeRecorder) Observe(hb detector.Heartbeat) {
	r.thresholdDetector.Observe(hb)
	ok := started(r.thresholdDetector)
	ready := ok && !r.thresholdDetector.WarmingUp()
	if ready {
		r.detFP(r.taus)
	}
	r.tape.record(hb.Arrival, ok, ready, r.taus)
}

// fill sets taus to the freshness points after the last heartbeat (the
// pass calls it only when the detector is ready).
func (r *tapeRecorder) fill(taus []time.Duration) { copy(taus, r.taus) }

// tapePlayer is sweepRanked's second pass's detector when the first
// recorded a tauTape: each Observe reads the record of the next
// heartbeat, and Started, WarmingUp and fill report it. It observes the
// heartbeats the first pass's detector observed, in the same order; past
// the last record, or on a record it cannot read, it keeps the error
// (err) and reports not started from then on.
type tapePlayer struct {
	r        io.Reader
	raw, buf []byte
	have     int
	pos      int
	read     int           // records read
	a        time.Duration // the last heartbeat's arrival
	err      error
	ok       bool
	ready    bool
	v        []int64
	taus     []time.Duration
}

var _ thresholdDetector = (*tapePlayer)(nil)

// Observe reads the next record.
func (p *tapePlayer) Observe(hb detector.Heartbeat) {
	if p.err != nil {
		return
	}
	p.a = hb.Arrival
	n := len(p.v)
	if p.have-p.pos < 1+8*n {
		p.have = copy(p.buf, p.buf[p.pos:p.have])
		p.pos = 0
		got, err := io.ReadFull(p.r, p.buf[p.have:])
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			p.fail(fmt.Errorf("qos: reading back the first pass's freshness points: %w", err))
			return
		}
		p.have += got
	}
	if p.pos >= p.have {
		p.fail(fmt.Errorf("qos: reading back the first pass's freshness points: %d records, the pass observed more", p.read))
		return
	}
	h := p.buf[p.pos]
	w := int(h & 15)
	p.ok, p.ready = h&tapeOK != 0, h&tapeReady != 0
	k := p.pos + 1
	if p.ready {
		if w > 8 || p.have-k < n*w {
			p.fail(fmt.Errorf("qos: reading back the first pass's freshness points: record %d is truncated", p.read+1))
			return
		}
		mask := uint64(1)<<(8*w) - 1 // all ones at w = 8 (a shift by 64 gives 0)
		raw := p.raw
		for j := range p.v {
			z := binary.LittleEndian.Uint64(raw[k:]) & mask
			k += w
			p.v[j] += unzigzag(z)
		}
	}
	p.pos = k
	p.read++
}

// fail keeps err and reports not started from then on.
func (p *tapePlayer) fail(err error) {
	p.err, p.ok, p.ready = err, false, false
}

// fill sets taus to the recorded freshness points of the last heartbeat
// observed (the pass calls it only when ready), τ_j = A + v_j with A that
// heartbeat's arrival.
func (p *tapePlayer) fill(taus []time.Duration) {
	a := int64(p.a)
	for j, v := range p.v[:len(taus)] {
		taus[j] = time.Duration(a + v)
	}
}

// Started reports whether the recorded detector's FreshnessPoint was ok.
func (p *tapePlayer) Started() bool { return p.ok }

// WarmingUp reports whether the recorded detector was warming up.
func (p *tapePlayer) WarmingUp() bool { return !p.ready }

// FreshnessPoint reports ok as recorded; the pass reads τ through fill.
func (p *tapePlayer) FreshnessPoint() (time.Duration, bool) { return 0, p.ok }

// Suspected is not used by the pass: false.
func (p *tapePlayer) Suspected(time.Duration) bool { return false }

// FreshnessPointAt is not used by the pass: not ok.
func (p *tapePlayer) FreshnessPointAt(float64) (time.Duration, bool) { return 0, false }
