package qos

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Targets are QoS requirements, the question asked by the SFD paper (Xiong et
// al., IPDPS 2012; docs/algorithms.md, “SFD, the self-tuning detector”): detect
// within MaxTD, make at most MaxMRPerSecond mistakes per second, be right with
// probability at least MinQAP. A zero field means "no requirement"; to forbid
// mistakes altogether (MR = 0: only settings that made no mistake over the
// replay), set NoMistakes.
type Targets struct {
	MaxTD          time.Duration `json:"max_td_ns"` // bound on the mean TD
	MaxMRPerSecond float64       `json:"max_mr_per_second"`
	MinQAP         float64       `json:"min_qap"`
	// NoMistakes requires MR = 0: no trust→suspect transition at all
	// (fdreplay's --mr-max 0). MaxMRPerSecond must then be 0. A setting
	// with a mistake misses it by an infinite factor (see Shortfall).
	NoMistakes bool `json:"no_mistakes"`
}

// Validate reports a negative or NaN target, an infinite MR bound (sfd
// rejects it, and a family sweep that takes these targets would fail), a
// QAP bound above 1, or NoMistakes together with a positive MR bound.
func (t Targets) Validate() error {
	switch {
	case t.MaxTD < 0:
		return fmt.Errorf("qos: TD target %v is negative", t.MaxTD)
	case !(t.MaxMRPerSecond >= 0) || math.IsInf(t.MaxMRPerSecond, 1):
		return fmt.Errorf("qos: MR target %g per second must be finite and ≥ 0", t.MaxMRPerSecond)
	case t.NoMistakes && t.MaxMRPerSecond != 0:
		return fmt.Errorf("qos: MR target %g per second with NoMistakes: want one of them (NoMistakes is MR = 0)", t.MaxMRPerSecond)
	case t.MinQAP < 0 || t.MinQAP > 1 || math.IsNaN(t.MinQAP):
		return fmt.Errorf("qos: QAP target %g must be in [0, 1]", t.MinQAP)
	}
	return nil
}

// Meets reports whether r meets every set target. A result with no
// observed time (Span 0: at most one evaluated heartbeat) meets no MR or
// QAP target: its MR 0 and QAP 1 are conventions, not measurements.
func (t Targets) Meets(r Result) bool {
	f := figures{MR: r.MRPerSecond, QAP: r.QAP, TD: float64(r.TD.Mean), Mistakes: float64(r.Mistakes), Span: float64(r.Span)}
	return t.accurate(f) && t.fast(f)
}

// Shortfall returns by how much r misses t: the largest of TD/MaxTD,
// MR/MaxMRPerSecond and (1 − QAP)/(1 − MinQAP) over the targets that are
// set, so 1 means "exactly at the binding target" and 2 "twice what is
// allowed". It is at most 1 when r meets t, 0 when no target is set, and
// +Inf when r has a mistake against MinQAP = 1 or NoMistakes, or no
// observed time against an MR or QAP target (see Meets).
func (t Targets) Shortfall(r Result) float64 {
	if t.needsTime() && r.Span <= 0 {
		return math.Inf(1)
	}
	worst := 0.0
	if t.MaxTD > 0 {
		worst = max(worst, float64(r.TD.Mean)/float64(t.MaxTD))
	}
	if t.MaxMRPerSecond > 0 {
		worst = max(worst, r.MRPerSecond/t.MaxMRPerSecond)
	}
	if t.NoMistakes && r.Mistakes > 0 {
		return math.Inf(1)
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

// needsTime reports whether an MR or QAP target is set: they can only be
// judged over observed time.
func (t Targets) needsTime() bool { return t.MaxMRPerSecond > 0 || t.NoMistakes || t.MinQAP > 0 }

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
	// Shortfall is Targets.Shortfall of Point: at most 1 when Found, +Inf
	// for a curve without points. JSON writes +Inf as null.
	Shortfall float64 `json:"shortfall"`
}

// choiceJSON is Choice with a Shortfall that JSON can hold (null: +Inf);
// the outer field hides the embedded one.
type choiceJSON struct {
	choiceFields
	Shortfall *float64 `json:"shortfall"`
}

// choiceFields is Choice without its methods, so that choiceJSON's encoding
// does not recurse.
type choiceFields Choice

// MarshalJSON encodes c with an infinite Shortfall as null (JSON has no
// infinity).
func (c Choice) MarshalJSON() ([]byte, error) {
	j := choiceJSON{choiceFields: choiceFields(c)}
	if !math.IsInf(c.Shortfall, 1) {
		j.Shortfall = &c.Shortfall
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes what MarshalJSON writes; a null or missing
// shortfall is +Inf.
func (c *Choice) UnmarshalJSON(b []byte) error {
	var j choiceJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Choice(j.choiceFields)
	c.Shortfall = math.Inf(1)
	if j.Shortfall != nil {
		c.Shortfall = *j.Shortfall
	}
	return nil
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
		default:
			ch.Shortfall = math.Inf(1) // no points: nothing meets
		}
		out = append(out, ch)
	}
	return out, nil
}

// nearer reports whether p, missing the targets by sh, comes nearer than
// near, missing them by nearShort: the smaller shortfall; among infinite
// ones (mistakes against MinQAP = 1 or NoMistakes) the larger QAP, since every point that
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
