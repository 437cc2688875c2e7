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

// Validate reports a negative or NaN target, or a QAP bound above 1.
func (t Targets) Validate() error {
	switch {
	case t.MaxTD < 0:
		return fmt.Errorf("qos: TD target %v is negative", t.MaxTD)
	case t.MaxMRPerSecond < 0 || math.IsNaN(t.MaxMRPerSecond):
		return fmt.Errorf("qos: MR target %g per second must be ≥ 0", t.MaxMRPerSecond)
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

// Choice is the tuner's answer for one family on one stream: the point that
// meets the targets with the smallest mean TD, or Found = false.
type Choice struct {
	Stream string `json:"stream"`
	Family string `json:"family"`
	Param  string `json:"param"`
	Unit   string `json:"unit"`
	Found  bool   `json:"found"`
	Point  Point  `json:"point"`
}

// Tune answers, for every curve, which of its points meets t with the
// smallest mean TD (ties: the smaller MR). Curves are answered in order.
func Tune(curves []Curve, t Targets) ([]Choice, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	out := make([]Choice, 0, len(curves))
	for _, c := range curves {
		ch := Choice{Stream: c.Stream, Family: c.Family, Param: c.Param, Unit: c.Unit}
		for _, p := range c.Points {
			if !t.Meets(p.Result) {
				continue
			}
			if !ch.Found || p.TD.Mean < ch.Point.TD.Mean ||
				(p.TD.Mean == ch.Point.TD.Mean && p.MRPerSecond < ch.Point.MRPerSecond) {
				ch.Found, ch.Point = true, p
			}
		}
		out = append(out, ch)
	}
	return out, nil
}
