package qos

import (
	"fmt"
	"math"
	"time"
)

// Targets are QoS requirements, the question asked by the SFD paper (Xiong
// et al., IPDPS 2012; ALGORITHMS.md §6): detect within MaxTD, make at most
// MaxMRPerSecond mistakes per second, be right with probability at least
// MinQAP. A zero field means "no requirement" (to forbid mistakes
// altogether, set MaxMRPerSecond to a tiny positive rate).
type Targets struct {
	MaxTD          time.Duration // bound on the mean TD
	MaxMRPerSecond float64
	MinQAP         float64
}

// Validate reports a negative or NaN target, an infinite MR bound (sfd
// rejects it, and a family sweep that takes these targets would fail), or a
// QAP bound above 1.
func (t Targets) Validate() error {
	switch {
	case t.MaxTD < 0:
		return fmt.Errorf("qos: TD target %v is negative", t.MaxTD)
	case !(t.MaxMRPerSecond >= 0) || math.IsInf(t.MaxMRPerSecond, 1):
		return fmt.Errorf("qos: MR target %g per second must be finite and ≥ 0", t.MaxMRPerSecond)
	case t.MinQAP < 0 || t.MinQAP > 1 || math.IsNaN(t.MinQAP):
		return fmt.Errorf("qos: QAP target %g must be in [0, 1]", t.MinQAP)
	}
	return nil
}

// Meets reports whether r meets every set target.
func (t Targets) Meets(r Result) bool {
	if t.MaxTD > 0 && r.TD.Mean > t.MaxTD {
		return false
	}
	if t.MaxMRPerSecond > 0 && r.MRPerSecond > t.MaxMRPerSecond {
		return false
	}
	if t.MinQAP > 0 && r.QAP < t.MinQAP {
		return false
	}
	return true
}

// Shortfall returns by how much r misses t: the largest of TD/MaxTD,
// MR/MaxMRPerSecond and (1 − QAP)/(1 − MinQAP) over the targets that are
// set, so 1 means "exactly at the binding target" and 2 "twice what is
// allowed". It is at most 1 when r meets t, 0 when no target is set, and
// +Inf when r has a mistake against MinQAP = 1 or an infinite TD.
func (t Targets) Shortfall(r Result) float64 {
	worst := 0.0
	if t.MaxTD > 0 {
		worst = max(worst, float64(r.TD.Mean)/float64(t.MaxTD))
	}
	if t.MaxMRPerSecond > 0 {
		worst = max(worst, r.MRPerSecond/t.MaxMRPerSecond)
	}
	if t.MinQAP > 0 {
		switch miss, allowed := 1-r.QAP, 1-t.MinQAP; {
		case miss <= 0:
		case allowed <= 0:
			worst = math.Inf(1)
		default:
			worst = max(worst, miss/allowed)
		}
	}
	return worst
}

// Choice is the tuner's answer for one family on one stream: the point that
// meets the targets with the smallest mean TD, or Found = false and the
// point that comes nearest (smallest Targets.Shortfall; ties: the larger QAP
// when the shortfall is infinite, as for every point with a mistake against
// MinQAP = 1, then the smaller mean TD), so that a user sees how far off the
// family is and which way to relax.
type Choice struct {
	Stream string `json:"stream"`
	Family string `json:"family"`
	Param  string `json:"param"`
	Unit   string `json:"unit"`
	Found  bool   `json:"found"`
	// Point is the chosen point when Found, else the nearest one (the zero
	// Point for a curve without points).
	Point Point `json:"point"`
	// Shortfall is Targets.Shortfall of Point: at most 1 when Found.
	Shortfall float64 `json:"shortfall"`
}

// Tune answers, for every curve, which of its points meets t with the
// smallest mean TD (ties: the smaller MR), or, when none does, which point
// comes nearest. Curves are answered in order. It fails only for invalid
// targets.
func Tune(curves []Curve, t Targets) ([]Choice, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	out := make([]Choice, 0, len(curves))
	for _, c := range curves {
		ch := Choice{Stream: c.Stream, Family: c.Family, Param: c.Param, Unit: c.Unit}
		near, nearSet := Point{}, false
		nearShort := math.Inf(1)
		for _, p := range c.Points {
			if !t.Meets(p.Result) {
				sh := t.Shortfall(p.Result)
				if !nearSet || nearer(p, sh, near, nearShort) {
					near, nearShort, nearSet = p, sh, true
				}
				continue
			}
			if !ch.Found || p.TD.Mean < ch.Point.TD.Mean ||
				(p.TD.Mean == ch.Point.TD.Mean && p.MRPerSecond < ch.Point.MRPerSecond) {
				ch.Found, ch.Point = true, p
			}
		}
		switch {
		case ch.Found:
			ch.Shortfall = t.Shortfall(ch.Point.Result)
		case nearSet:
			ch.Point, ch.Shortfall = near, nearShort
		}
		out = append(out, ch)
	}
	return out, nil
}

// nearer reports whether p, missing the targets by sh, comes nearer than
// near, missing them by nearShort: the smaller shortfall; among infinite
// ones (mistakes against MinQAP = 1) the larger QAP, since every point that
// suspects at all then misses by +Inf and the fastest is the least
// accurate; then the smaller mean TD.
func nearer(p Point, sh float64, near Point, nearShort float64) bool {
	switch {
	case sh != nearShort:
		return sh < nearShort
	case math.IsInf(sh, 1) && p.QAP != near.QAP:
		return p.QAP > near.QAP
	}
	return p.TD.Mean < near.TD.Mean
}
