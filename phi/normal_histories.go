package phi

import (
	"math/bits"
	"slices"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// NormalHistories is several Normal detectors of one configuration that
// observe the same heartbeats and differ in their threshold and in which
// intervals they recorded, kept side by side in flat state: a threshold
// sweep of the normal φ with SkipIfSuspected (qos.PhiNormalFamily) keeps
// one history per group of thresholds that recorded the same intervals
// (docs/algorithms.md, “φ accrual: normal model”, “Replaying a trace”).
// History i behaves exactly as a Normal with the configuration and its
// own threshold that had recorded the same intervals: after every
// heartbeat its T_last, μ, σ_eff and freshness point are that Normal's,
// bit for bit, and its Fork, Same and FreshnessPointsZ are Normal's Fork,
// SameHistory and FreshnessPointsZ.
//
// The histories share the arrival rules' state (T_last, the sequence
// numbers: every history accepts the same heartbeats). Each keeps its
// window as a ring in one slab of samples, and the exact sums Σx (modulo
// 2^64) and Σx² (modulo 2^128) of the samples it holds in an array of
// plain values (detector.Sums), so that Observe updates every history in
// one loop without pointers, then computes every history's μ and σ in
// another (detector.MeanStdDevs, whose divisions and square roots
// overlap), then every σ_eff and τ. While every sample a history holds
// is below 2^32 ns (4.29 s) its sums are exact and detector.MeanStdDevs
// gives detector.Window's μ and σ bit for bit; a history that holds a
// longer sample keeps a detector.Window beside its ring until the sample
// leaves, and reads μ and σ from it. The common case is inline: the
// interval alone recorded (by the ordinary rule, or by a run of the
// relearn rule that has reached K). The bootstrap, intervals left out,
// the other steps of the relearn rule, MaxInterval and long samples take
// Normal's path for the history concerned (DivideBySeqGap applies to all
// alike).
//
// A NormalHistories is not safe for concurrent use.
type NormalHistories struct {
	w          int     // the window size n
	boot       int     // min(2, n): fewer samples is the bootstrap
	minStd     float64 // as Normal's
	bootstrap  float64
	minSamples int
	skip       bool
	pause      float64
	maxIv      time.Duration
	divGap     bool
	k          int // the relearn rule's K

	arr arrivals
	buf []time.Duration // history i's ring is buf[i·n:(i+1)·n]
	hs  []normalHistory
	// sums[i]: history i's samples held (N) and their sums Σx (modulo
	// 2^64) and Σx² (modulo 2^128); mean and sd: scratch for their μ and
	// σ (detector.MeanStdDevs).
	sums     []detector.Sums
	mean, sd []float64
}

// normalHistory is one history of a NormalHistories.
type normalHistory struct {
	ring  []time.Duration // its part of the slab (NormalHistories.ring)
	start int             // the ring's oldest sample (the samples held are in sums)
	big   int             // samples ≥ 2^32 held
	// wide: the window of the samples held, kept while big > 0 (the sums
	// above may then have wrapped).
	wide *detector.Window
	rl   relearn

	th  float64 // Θ
	z   float64 // z(Θ)
	mu  float64 // μ + pause, in ns
	sd  float64 // σ_eff in ns
	tau time.Duration
}

// smallSample bounds the samples whose sums the histories keep exact.
const smallSample = 1 << 32

// NewNormalHistories returns one history, a Normal with configuration cfg
// (the others come from Fork), or NewNormal's error for cfg.
func NewNormalHistories(cfg NormalConfig) (*NormalHistories, error) {
	d, err := NewNormal(cfg)
	if err != nil {
		return nil, err
	}
	n := d.window.Size()
	h := &NormalHistories{w: n, boot: min(2, n), minStd: d.minStd, bootstrap: d.bootstrap,
		minSamples: d.minSamples, skip: d.skip, pause: d.pause, maxIv: d.maxIv, divGap: d.divGap,
		k: d.relearn.k, buf: make([]time.Duration, n)}
	h.hs = []normalHistory{{rl: relearn{k: d.relearn.k}, th: d.threshold, z: d.zTh}}
	h.sums = make([]detector.Sums, 1)
	h.mean, h.sd = make([]float64, 1), make([]float64, 1)
	h.rerings()
	return h, nil
}

// Len returns the number of histories; they are numbered 0 to Len()−1.
func (h *NormalHistories) Len() int { return len(h.hs) }

// WindowSize returns the window size n.
func (h *NormalHistories) WindowSize() int { return h.w }

// WindowLen returns how many samples history i's window holds.
func (h *NormalHistories) WindowLen(i int) int { return h.sums[i].N }

// Threshold returns history i's Θ.
func (h *NormalHistories) Threshold(i int) float64 { return h.hs[i].th }

// ring returns history i's ring.
func (h *NormalHistories) ring(i int) []time.Duration { return h.buf[i*h.w : (i+1)*h.w : (i+1)*h.w] }

// rerings points every history's ring at its part of the slab (after the
// slab moved, or histories did).
func (h *NormalHistories) rerings() {
	for i := range h.hs {
		h.hs[i].ring = h.ring(i)
	}
}

// Observe gives hb to every history, as Normal.Observe.
func (h *NormalHistories) Observe(hb detector.Heartbeat) {
	iv, gap, first, ok := h.arr.accept(hb)
	switch {
	case !ok:
		return // nothing moved
	case first:
		for i := range h.hs {
			h.stats(i) // the bootstrap's
		}
		h.refresh()
		return
	}
	if h.divGap && gap > 1 {
		if gap > 1<<63-1 {
			iv = 0
		} else {
			iv /= time.Duration(gap)
		}
	}
	capped := h.maxIv > 0 && iv > h.maxIv
	fast := !capped && uint64(iv) < smallSample
	at := hb.Arrival
	for i := range h.hs {
		s, m := &h.hs[i], &h.sums[i]
		if !fast || s.wide != nil || m.N < h.boot {
			h.record(i, at, iv, capped)
			continue
		}
		// The common case, inline: iv alone recorded (by the ordinary
		// rule, or left out by the skip rule and recorded by a run of
		// the relearn rule that has reached K), every sample below
		// 2^32.
		if h.skip && at > s.tau {
			if !s.rl.skipAlone() {
				h.record(i, at, iv, capped)
				continue
			}
		} else if s.rl.n != 0 {
			s.rl.recorded()
		}
		ring := s.ring
		if m.N == len(ring) {
			old := ring[s.start]
			ring[s.start] = iv
			if s.start++; s.start == len(ring) {
				s.start = 0
			}
			m.Sum += uint64(iv) - uint64(old)
			d, b := bits.Sub64(uint64(iv)*uint64(iv), uint64(old)*uint64(old), 0)
			var c uint64
			m.Sq0, c = bits.Add64(m.Sq0, d, 0)
			m.Sq1 += c - b
		} else {
			ring[m.N] = iv
			m.N++
			s.put(m, iv)
		}
	}
	// μ and σ of every window, changed or not (the same sums give the
	// same values), in one loop; then σ_eff and τ, the histories whose
	// window is in the bootstrap or holds long samples taking their own
	// path.
	detector.MeanStdDevs(h.sums, h.mean, h.sd)
	last := h.arr.last
	for i := range h.hs {
		s := &h.hs[i]
		if s.wide != nil || h.sums[i].N < h.boot {
			h.stats(i)
		} else {
			s.mu, s.sd = clampNormal(h.minStd, h.pause, h.mean[i], h.sd[i])
		}
		t := max(0, s.mu+s.sd*s.z) // Normal.refresh, inline
		tau, ok := freshnessPointNear(last, t)
		if !ok {
			tau = freshnessPoint(last, t)
		}
		s.tau = tau
	}
}

// refresh recomputes every history's τ = T_last + ⌈t*(Θ)⌉ from its μ and
// σ_eff (Normal.refresh).
func (h *NormalHistories) refresh() {
	for i := range h.hs {
		s := &h.hs[i]
		s.tau = freshnessPoint(h.arr.last, NormalCrossing(s.mu, s.sd, s.z))
	}
}

// record is Normal.recordAccepted past the first heartbeat for history i,
// the heartbeat arriving at at with the interval iv (DivideBySeqGap
// applied), capped when MaxInterval leaves it out; Observe then
// recomputes μ and σ_eff.
func (h *NormalHistories) record(i int, at, iv time.Duration, capped bool) {
	s := &h.hs[i]
	// s.tau is still the previous heartbeat's freshness point.
	if h.skip && at > s.tau && h.sums[i].N >= h.boot || capped {
		run, rec := s.rl.skip(iv)
		if !rec {
			return
		}
		for _, v := range run {
			h.add(i, v)
		}
	} else {
		s.rl.recorded()
	}
	h.add(i, iv)
}

// add appends x to history i's window, evicting the oldest sample when it
// is full, as detector.Window.Add.
func (h *NormalHistories) add(i int, x time.Duration) {
	s, m := &h.hs[i], &h.sums[i]
	ring := s.ring
	if m.N == len(ring) {
		old := ring[s.start]
		ring[s.start] = x
		if s.start++; s.start == len(ring) {
			s.start = 0
		}
		s.drop(m, old)
	} else {
		ring[m.N] = x
		m.N++
	}
	s.put(m, x)
	switch {
	case uint64(x) >= smallSample && s.wide == nil:
		h.widen(i) // from the ring, x included
	case s.wide != nil:
		s.wide.Add(x)
		if s.big == 0 {
			s.wide = nil // the sums are exact again
		}
	}
}

// put adds x to the sums m.
func (s *normalHistory) put(m *detector.Sums, x time.Duration) {
	u := uint64(x)
	m.Sum += u
	hi, lo := bits.Mul64(u, u)
	var c uint64
	m.Sq0, c = bits.Add64(m.Sq0, lo, 0)
	m.Sq1 += hi + c
	if u >= smallSample {
		s.big++
	}
}

// drop removes x from the sums m.
func (s *normalHistory) drop(m *detector.Sums, x time.Duration) {
	u := uint64(x)
	m.Sum -= u
	hi, lo := bits.Mul64(u, u)
	var b uint64
	m.Sq0, b = bits.Sub64(m.Sq0, lo, 0)
	m.Sq1 -= hi + b
	if u >= smallSample {
		s.big--
	}
}

// widen gives history i a detector.Window holding its ring's samples.
func (h *NormalHistories) widen(i int) {
	s := &h.hs[i]
	w, _ := detector.NewWindow(h.w) // h.w is a valid size: NewNormal took it
	older, newer := h.held(i)
	for _, x := range older {
		w.Add(x)
	}
	for _, x := range newer {
		w.Add(x)
	}
	s.wide = w
}

// stats is Normal.stats for history i: μ and σ_eff from its window, or the
// bootstrap's.
func (h *NormalHistories) stats(i int) {
	s := &h.hs[i]
	var mu, sd float64
	switch {
	case h.sums[i].N < h.boot:
		mu, sd = h.bootstrap, h.bootstrap/4
	case s.wide != nil:
		mu, sd = s.wide.MeanStdDev()
	default:
		var m, d [1]float64
		if !detector.MeanStdDevs(h.sums[i:i+1], m[:], d[:]) {
			h.widen(i) // cannot happen for samples below 2^32
			m[0], d[0] = s.wide.MeanStdDev()
		}
		mu, sd = m[0], d[0]
	}
	s.mu, s.sd = clampNormal(h.minStd, h.pause, mu, sd)
}

// Fork adds a copy of history i with threshold Θ (0 means
// DefaultThreshold), as Normal.Fork, and returns its number, Len()−1.
// Errors: a threshold NewNormal rejects (nothing added).
func (h *NormalHistories) Fork(i int, threshold float64) (int, error) {
	f := fields{model: "normal"}
	threshold = f.threshold(threshold)
	if f.err != nil {
		return 0, f.err
	}
	j := len(h.hs)
	h.buf = slices.Grow(h.buf, h.w)[:(j+1)*h.w]
	copy(h.ring(j), h.ring(i))
	c := h.hs[i]
	c.rl = c.rl.cloneInto(nil)
	if c.wide != nil {
		c.wide = c.wide.Clone()
	}
	c.th, c.z = threshold, ZOfLevel(threshold)
	if h.arr.seen {
		c.tau = freshnessPoint(h.arr.last, NormalCrossing(c.mu, c.sd, c.z))
	}
	h.hs = append(h.hs, c)
	h.rerings() // the slab may have moved
	h.sums = append(h.sums, h.sums[i])
	h.mean, h.sd = append(h.mean, 0), append(h.sd, 0)
	return j, nil
}

// Delete removes history i. The last history, if it is not i, takes
// number i; Delete returns the number it had (Len() before the call,
// less one), so that the caller can follow it.
func (h *NormalHistories) Delete(i int) (moved int) {
	last := len(h.hs) - 1
	if i != last {
		copy(h.ring(i), h.ring(last))
		h.hs[i] = h.hs[last]
		h.sums[i] = h.sums[last]
		h.hs[i].ring = h.ring(i)
	}
	h.hs[last] = normalHistory{}
	h.hs = h.hs[:last]
	h.sums, h.mean, h.sd = h.sums[:last], h.mean[:last], h.sd[:last]
	h.buf = h.buf[:last*h.w]
	return last
}

// Same reports whether histories i and j differ at most in their
// threshold (Normal.SameHistory): the same window, samples in the same
// order, and run of the relearn rule, hence the same μ and σ_eff.
func (h *NormalHistories) Same(i, j int) bool {
	a, b := &h.hs[i], &h.hs[j]
	if a.mu != b.mu || a.sd != b.sd || h.sums[i] != h.sums[j] || a.big != b.big || !a.rl.equal(&b.rl) {
		return false
	}
	a1, a2 := h.held(i)
	b1, b2 := h.held(j)
	for len(a1) > 0 { // compare the two rings in runs
		if len(b1) == 0 {
			b1, b2 = b2, nil
		}
		k := min(len(a1), len(b1))
		if !slices.Equal(a1[:k], b1[:k]) {
			return false
		}
		a1, b1 = a1[k:], b1[k:]
		if len(a1) == 0 {
			a1, a2 = a2, nil
		}
	}
	return true
}

// held returns the samples history i holds, oldest first, as two runs of
// its ring.
func (h *NormalHistories) held(i int) (older, newer []time.Duration) {
	ring, start, n := h.ring(i), h.hs[i].start, h.sums[i].N
	if end := start + n; end <= len(ring) {
		return ring[start:end], nil
	}
	return ring[start:], ring[:start+n-len(ring)]
}

// FreshnessPoint returns history i's τ = T_last + t*(Θ), as
// Normal.FreshnessPoint; ok is false before the first heartbeat.
func (h *NormalHistories) FreshnessPoint(i int) (time.Duration, bool) {
	return h.hs[i].tau, h.arr.seen
}

// FreshnessPointZ returns the freshness point that history i's state
// gives a threshold with z = ZOfLevel(Θ), as Normal.FreshnessPointZ.
func (h *NormalHistories) FreshnessPointZ(i int, z float64) (time.Duration, bool) {
	s := &h.hs[i]
	return freshnessPoint(h.arr.last, NormalCrossing(s.mu, s.sd, z)), h.arr.seen
}

// FreshnessPointsZ sets taus[k] to FreshnessPointZ(i, zs[k]) for each k <
// len(taus) (len(zs) ≥ len(taus)), as Normal.FreshnessPointsZ.
func (h *NormalHistories) FreshnessPointsZ(i int, zs []float64, taus []time.Duration) {
	s := &h.hs[i]
	freshnessPointsZ(h.arr.last, s.mu, s.sd, zs, taus)
}

// Form returns history i's T_last, μ (the pause included) and σ_eff in
// nanoseconds, as Normal.Form.
func (h *NormalHistories) Form(i int) (last time.Duration, mean, sd float64, ok bool) {
	return h.arr.last, h.hs[i].mu, h.hs[i].sd, h.arr.seen
}

// WarmingUp reports whether history i is warming up, as
// Normal.WarmingUp.
func (h *NormalHistories) WarmingUp(i int) bool {
	return !h.arr.seen || h.sums[i].N < h.minSamples
}

// Suspected reports whether history i suspects at now, as
// Normal.Suspected.
func (h *NormalHistories) Suspected(i int, now time.Duration) bool {
	return h.arr.seen && now > h.hs[i].tau
}
