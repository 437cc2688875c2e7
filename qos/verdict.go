package qos

import (
	"cmp"
	"errors"
	"slices"
)

// Verdict answers, for one stream, which detector and setting the tuner
// recommends and whether that is better than the alternatives beyond
// chance: Best is the choice (among those that meet the targets) with the
// smallest mean TD, RunnerUp the next one, and each Rival is compared with
// Best on the same resampled time cells (Compare).
type Verdict struct {
	Stream string `json:"stream"`
	// Best and RunnerUp index the choices given to Verdicts; −1 when there
	// is none (no choice meets the targets, or only one does).
	Best     int `json:"best"`
	RunnerUp int `json:"runner_up"`
	// Significant reports whether Best's mean TD is below RunnerUp's with
	// 95 % confidence (the interval of the paired difference lies below 0).
	Significant bool `json:"significant"`
	// Rivals are the other choices that meet the targets, fastest first,
	// each with its paired difference to Best (Best minus rival).
	Rivals []Rival `json:"rivals,omitempty"`
}

// Rival is one alternative to a Verdict's Best.
type Rival struct {
	Choice int        `json:"choice"`
	Diff   Difference `json:"diff"`
	// Indistinguishable: the 95 % interval of the mean-TD difference holds
	// 0 (or no comparison was possible: Err).
	Indistinguishable bool   `json:"indistinguishable"`
	Err               string `json:"error,omitempty"`
}

// Verdicts groups choices (from Tune on curves swept with
// Config.Intervals) by stream, in order of first appearance, and returns
// one Verdict per stream. Without per-cell data (Config.Intervals off)
// every rival is reported indistinguishable with Err set.
func Verdicts(choices []Choice) []Verdict {
	var order []string
	by := map[string][]int{}
	for i, c := range choices {
		if _, ok := by[c.Stream]; !ok {
			order = append(order, c.Stream)
		}
		by[c.Stream] = append(by[c.Stream], i)
	}
	out := make([]Verdict, 0, len(order))
	for _, s := range order {
		v := Verdict{Stream: s, Best: -1, RunnerUp: -1}
		var found []int
		for _, i := range by[s] {
			if choices[i].Found {
				found = append(found, i)
			}
		}
		slices.SortStableFunc(found, func(a, b int) int {
			pa, pb := choices[a].Point, choices[b].Point
			if c := cmp.Compare(pa.TD.Mean, pb.TD.Mean); c != 0 {
				return c
			}
			return cmp.Compare(pa.MRPerSecond, pb.MRPerSecond)
		})
		if len(found) > 0 {
			v.Best = found[0]
		}
		if len(found) > 1 {
			v.RunnerUp = found[1]
		}
		for k, i := range found[min(1, len(found)):] {
			r := Rival{Choice: i}
			d, err := Compare(choices[v.Best].Point.Result, choices[i].Point.Result)
			switch {
			case errors.Is(err, ErrNoCells):
				r.Indistinguishable, r.Err = true, err.Error()
			default:
				r.Diff = d
				r.Indistinguishable = !(d.TDMeanCI[1] < 0)
			}
			if k == 0 {
				v.Significant = !r.Indistinguishable
			}
			v.Rivals = append(v.Rivals, r)
		}
		out = append(out, v)
	}
	return out
}
