package qos

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
)

// sharedWarmUp reports whether every threshold of the normal φ with the
// settings of cfg leaves warm-up at the same heartbeat, as sweepNormalShared
// needs: while the window holds fewer than min(2, n) intervals (the
// bootstrap) every threshold records every interval alike, so a warm-up of
// MinSamples ≤ min(2, n) intervals (the default) ends at the same heartbeat
// for all; a longer one ends later for a threshold that leaves out more.
func sharedWarmUp(cfg phi.NormalConfig) bool {
	n := cmp.Or(cfg.WindowSize, phi.DefaultWindowSize)
	return cfg.MinSamples == nil || *cfg.MinSamples <= min(2, n)
}

// sweepNormalShared computes the points of a threshold sweep of the normal
// φ with skip-suspected (settings cfg, thresholds values) in one pass over
// src, exactly as one replay per threshold would (docs/algorithms.md, “φ
// accrual: normal model” and “Replaying a trace”): a normalSet replays
// every threshold's detector, and sweepShared's thresholdPass does, once
// for all of them, everything a replay does apart from τ (method
// SharedState). The thresholds must share their warm-up (sharedWarmUp).
// Where sweepRanked takes the stream, its first pass runs the set and
// records every freshness point on a tauTape, which its second pass
// replays instead of running the set again.
//
// It returns errNotLinear (Sweep then replays each point, which reports
// the errors) for a value below log10 2 or infinite, or when a pass fails
// (arrivals out of order, nothing evaluated).
func sweepNormalShared(cfg phi.NormalConfig, values []float64, src Source, rc Config) ([]*Point, error) {
	for _, v := range values {
		if !validNormalThreshold(v) {
			return nil, errNotLinear
		}
	}
	class := classes(len(values), func(i, j int) bool { return values[i] == values[j] })
	var failed bool // a fork failed: not reached, the thresholds are valid
	newDet := func(v float64) (thresholdDetector, error) { return newNormalSet(cfg, v, &failed) }
	trackAll := func(d thresholdDetector, ths []float64) func([]time.Duration) {
		return d.(*normalSet).track(ths)
	}
	pts, err := sweepSharedPasses(newDet, nil, trackAll, values, class, src, rc, normalLeanPasses, true)
	if err == nil && failed {
		return nil, errNotLinear
	}
	return pts, err
}

// normalLeanPasses is the most passes of a stream in memory, each taking
// a chunk of the thresholds and keeping their TD_k (leanBudget), that
// sweepNormalShared prefers to sweepRanked's two over all thresholds. A
// chunk's set holds the groups of its own thresholds only, so the chunks'
// sets together cost about one set of all thresholds, where sweepRanked
// runs that set once and records its freshness points (tauTape); each
// pass costs its bookkeeping and the selection
// of its TD ranks, so many passes lose. Measured on the stream of
// BenchmarkSweepEveryFamily, 40 thresholds (docs/experiments.md, “The
// normal φ's sweep on the shared-state pass (issue 24)”): 2, 3 and 4
// passes took 20, 17 and 12 % less CPU than sweepRanked, 6 passes the
// same, 10 passes 14 % more; against sweepRanked with its tape, 2 to 4
// passes still take 3 to 12 % less (docs/experiments.md, “fdreplay's
// default run at 10^7 (issue 24, session 19)”). The passes keep TD_k in
// tdNarrowBytes while they fit, so four of them take 40 thresholds of up
// to about 840,000 heartbeats (docs/experiments.md, “The normal φ's
// TD_k in 4 bytes (issue 24, session 20)”).
const normalLeanPasses = 4

// validNormalThreshold reports whether v is a threshold the normal φ's
// sweep takes: finite and at least log10 2 (z(Θ) ≥ 0; PhiNormalFamily's New
// rejects the others).
func validNormalThreshold(v float64) bool { return v >= math.Log10(2) && !math.IsInf(v, 1) }

// normalSet is the normal φ detectors with skip-suspected (phi.Normal with
// the settings cfg) of several thresholds, replayed side by side: a
// detector of sweepShared whose track sets every threshold's freshness
// point. A threshold's history depends on Θ only through the skip rule: an
// interval is left out when its arrival is after τ(Θ) = T_last + ⌈t*(Θ)⌉,
// t* = μ + σ_eff·z(Θ), non-decreasing in z(Θ). So thresholds whose replays
// have recorded the same intervals share one history: the set keeps
// groups of consecutive thresholds in increasing z(Θ), one history of a
// phi.NormalHistories each, whose state is what each of their replays has
// (phi.NormalHistories.Fork), and reads each threshold's τ from it
// (phi.NormalHistories.FreshnessPointsZ). The histories are kept side by
// side in flat state and observe each heartbeat in one loop. An arrival
// after the freshness points of a group's lower thresholds but not of its
// upper ones splits it: the upper ones, which record the interval, go on
// with a fork of the history before the arrival. Two neighbouring groups
// whose histories come to the same state again (phi.NormalHistories.Same:
// the intervals they parted on have left both windows) join. Splits need
// an arrival after a freshness point (a mistake), so groups stay few where
// mistakes are rare; at worst there is one per threshold.
//
// The warm-up and ok of every threshold's detector are those of the first
// group's (sharedWarmUp), as sweepShared requires.
type normalSet struct {
	cfg    phi.NormalConfig
	failed *bool // set when a fork fails

	ths []float64 // the thresholds in increasing z(Θ)
	zs  []float64 // their z(Θ)
	pos []int     // the position of each in track's thresholds
	// runs: the starts, in z(Θ) order, of the runs of thresholds whose
	// positions follow each other (pos[j+1] = pos[j]+1), then len(ths).
	// With one run (track's thresholds in increasing z(Θ)) fill writes
	// to taus directly; else to scratch, then a copy per run.
	runs    []int
	scratch []time.Duration
	hs      *phi.NormalHistories
	grps    []*normalGroup
	// judged: the intervals judged so far (split's calls); join runs
	// every joinEvery of them.
	judged, joinEvery int
	// every: two groups are compared once they have judged this many
	// intervals in a row alike (the window size), the fewest after which
	// the interval they parted on can have left the window.
	every int

	seen   bool
	last   time.Duration // T_last
	hasSeq bool
	maxSeq uint64
}

// normalGroup is a run ths[lo..hi−1] of a normalSet's thresholds whose
// replays have recorded the same intervals so far, with history h of the
// set's histories, threshold lo's, whose state all of them have.
type normalGroup struct {
	h      int
	lo, hi int
	rec    bool // whether the group recorded the latest interval judged
	// since: judged when this group and the next one last judged an
	// interval differently (or became neighbours).
	since int
}

// newNormalSet returns the set of the single threshold v (track sets the
// thresholds the set replays).
func newNormalSet(cfg phi.NormalConfig, v float64, failed *bool) (*normalSet, error) {
	every := cmp.Or(cfg.WindowSize, phi.DefaultWindowSize)
	s := &normalSet{cfg: cfg, failed: failed, every: every, joinEvery: max(1, every/8)}
	if err := s.reset([]float64{v}); err != nil {
		return nil, err
	}
	return s, nil
}

// reset makes ths the set's thresholds, in one group (no heartbeat
// observed yet).
func (s *normalSet) reset(ths []float64) error {
	n := len(ths)
	s.pos = make([]int, n)
	for i := range n {
		s.pos[i] = i
	}
	zs := make([]float64, n)
	for i, v := range ths {
		zs[i] = phi.ZOfLevel(v)
	}
	slices.SortStableFunc(s.pos, func(a, b int) int { return cmp.Compare(zs[a], zs[b]) })
	s.runs = []int{0}
	for j := 1; j < n; j++ {
		if s.pos[j] != s.pos[j-1]+1 {
			s.runs = append(s.runs, j)
		}
	}
	s.runs = append(s.runs, n)
	s.scratch = make([]time.Duration, n)
	s.ths, s.zs = make([]float64, n), make([]float64, n)
	for j, i := range s.pos {
		s.ths[j], s.zs[j] = ths[i], zs[i]
	}
	c := s.cfg
	c.Threshold = s.ths[0]
	hs, err := phi.NewNormalHistories(c)
	if err != nil {
		return err
	}
	s.hs = hs
	s.grps = []*normalGroup{{h: 0, lo: 0, hi: n}}
	s.judged = 0
	return nil
}

// track makes ths the set's thresholds (before the first heartbeat) and
// returns the function that sets taus[i] to the freshness point of ths[i].
func (s *normalSet) track(ths []float64) func([]time.Duration) {
	if err := s.reset(ths); err != nil {
		*s.failed = true
	}
	return s.fill
}

// fill sets taus[i] to the freshness point of the i-th threshold of track.
// Unless track's thresholds are in increasing z(Θ) it computes them in
// that order in scratch and copies each run to its place: fdreplay's
// order, its sweep then the table's setting, makes three runs.
func (s *normalSet) fill(taus []time.Duration) {
	out := taus
	if len(s.runs) > 2 {
		out = s.scratch
	}
	for _, g := range s.grps {
		// The history's own τ is threshold lo's (its threshold), as
		// Observe left it.
		out[g.lo], _ = s.hs.FreshnessPoint(g.h)
		if g.hi-g.lo > 1 {
			s.hs.FreshnessPointsZ(g.h, s.zs[g.lo+1:g.hi], out[g.lo+1:g.hi])
		}
	}
	if len(s.runs) > 2 {
		for k, a := range s.runs[:len(s.runs)-1] {
			copy(taus[s.pos[a]:], out[a:s.runs[k+1]])
		}
	}
}

// Observe gives hb to every group's history, splitting first the groups
// whose thresholds judge the interval it ends differently, then joining
// the groups whose histories have come to the same state.
func (s *normalSet) Observe(hb detector.Heartbeat) {
	// phi's arrival rules: a stale or duplicate sequence number is
	// dropped; a heartbeat before T_last too (sweepShared's pass stops at
	// one first).
	fresh := !(hb.HasSeq && s.hasSeq && hb.Seq <= s.maxSeq)
	if fresh && hb.HasSeq {
		s.maxSeq, s.hasSeq = hb.Seq, true
	}
	judged := fresh && s.seen && hb.Arrival >= s.last
	if judged {
		s.split(hb.Arrival)
	}
	s.hs.Observe(hb)
	if fresh && (!s.seen || hb.Arrival >= s.last) {
		s.seen, s.last = true, hb.Arrival
	}
	if judged && s.judged%s.joinEvery == 0 {
		s.join()
	}
}

// split divides every group whose thresholds disagree on leaving out the
// interval that ends at a: those whose τ is at least a (the upper part,
// τ being non-decreasing in z) record it and continue on a fork of the
// history before the arrival.
func (s *normalSet) split(a time.Duration) {
	// The bootstrap records every interval; it ends at the same
	// heartbeat for every group (sharedWarmUp), the first's.
	boot := s.hs.WindowLen(s.grps[0].h) < min(2, s.hs.WindowSize())
	s.judged++
	out := false // some group left the interval out
	for gi := 0; gi < len(s.grps); gi++ {
		g := s.grps[gi]
		lo, _ := s.hs.FreshnessPoint(g.h) // the history's threshold is ths[lo]
		g.rec = boot || a <= lo
		if g.rec {
			continue
		}
		out = true
		if a > s.tau(g, g.hi-1) {
			continue
		}
		// The first threshold that records (hi−1 does, lo does not; τ is
		// non-decreasing in j), by bisection: a group may hold hundreds.
		j := g.lo + 1 + sort.Search(g.hi-1-(g.lo+1), func(k int) bool { return a <= s.tau(g, g.lo+1+k) })
		h, err := s.hs.Fork(g.h, s.ths[j])
		if err != nil {
			*s.failed = true
			return
		}
		up := &normalGroup{h: h, lo: j, hi: g.hi, rec: true, since: s.judged}
		g.hi = j
		s.grps = slices.Insert(s.grps, gi+1, up)
		gi++
	}
	if !out {
		return // every group recorded it: every two neighbours agree
	}
	for i, g := range s.grps[:len(s.grps)-1] {
		if g.rec != s.grps[i+1].rec {
			g.since = s.judged
		}
	}
}

// tau returns the freshness point of threshold j of group g.
func (s *normalSet) tau(g *normalGroup, j int) time.Duration {
	t, _ := s.hs.FreshnessPointZ(g.h, s.zs[j])
	return t
}

// join merges each group into the one below it when their histories
// differ at most in their threshold: the upper group's thresholds go on
// with the lower group's history. Observe calls it every joinEvery
// (every/8) judged intervals, and it compares two groups once they have
// judged every intervals alike, the fewest after which the interval they
// parted on can have left both windows: most comparisons fail at once
// (the means differ), a few compare whole windows.
func (s *normalSet) join() {
	for i := 0; i+1 < len(s.grps); i++ {
		g, u := s.grps[i], s.grps[i+1]
		if s.judged-g.since < s.every || !s.hs.Same(g.h, u.h) {
			continue
		}
		g.hi, g.since = u.hi, u.since
		s.grps = slices.Delete(s.grps, i+1, i+2)
		if moved := s.hs.Delete(u.h); moved != u.h {
			for _, o := range s.grps {
				if o.h == moved {
					o.h = u.h
				}
			}
		}
		i-- // g may join the next group too
	}
}

// FreshnessPoint is the first threshold's; ok, the same for every
// threshold, is whether a heartbeat was seen.
func (s *normalSet) FreshnessPoint() (time.Duration, bool) {
	return s.hs.FreshnessPoint(s.grps[0].h)
}

// WarmingUp is the same for every threshold (sharedWarmUp).
func (s *normalSet) WarmingUp() bool { return s.hs.WarmingUp(s.grps[0].h) }

// Suspected is the first threshold's.
func (s *normalSet) Suspected(now time.Duration) bool { return s.hs.Suspected(s.grps[0].h, now) }

// FreshnessPointAt returns the freshness point of threshold th, one of the
// set's; ok is false for another value or before the first heartbeat.
func (s *normalSet) FreshnessPointAt(th float64) (time.Duration, bool) {
	for _, g := range s.grps {
		for j := g.lo; j < g.hi; j++ {
			if s.ths[j] == th {
				return s.hs.FreshnessPointZ(g.h, s.zs[j])
			}
		}
	}
	return 0, false
}
