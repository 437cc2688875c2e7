// The table and the sweep replayed together.

package main

import (
	"io"
	"slices"

	"github.com/fdkit/fdkit/qos"
)

// rowAt says where a stream's table row is among the curves of its
// replay with the sweep: curve (an index into the stream's families) and,
// when at ≥ 0, the value of that swept family the row is, or, when apart
// ≥ 0, its value of Family.Apart (the row's family was merged into the
// sweep's); with both −1 the curve is the row's own.
type rowAt struct {
	curve, at, apart int
}

// together is the plan of a run's table replayed with its sweep: per
// stream the families given to qos.SweepEach (the swept families, some
// with one more value, then the table's families not merged) and where
// each table row and each curve of the sweep is among them.
type together struct {
	sw   sweep          // the sweep as sweepRuns would run it
	fams [][]qos.Family // per stream, the families replayed
	rows [][]rowAt      // per stream, per detector
}

// planTogether merges each stream's table into its sweep: a bare family
// that is both in the table and swept has the table's setting computed
// with its curve, since the sweep computes a point as the replay of that
// setting alone does, in every field (qos.Sweep), and a sweep's point
// costs a fraction of a replay. It is one more value of the curve (or the
// value the curve has already), or, for a linear family, whose points
// depend on their neighbours in their last bits, a value of
// qos.Family.Apart. A table row that cannot be merged (a spec entry, a
// detector not swept) is a family of its own in the same sweep, so that
// every stream is still read once for both. sw is planSweep's sweep of
// runs.
func planTogether(o options, runs []streamRun, sw sweep) together {
	swept := sweptDetectors(o)
	t := together{sw: sw, fams: make([][]qos.Family, len(runs)), rows: make([][]rowAt, len(runs))}
	for i, r := range runs {
		fams := slices.Clone(sw.fams[i])
		rows := make([]rowAt, len(o.detectors))
		for d, name := range o.detectors {
			tf := r.table[d]
			j := slices.Index(swept, name)
			switch {
			case j < 0 || !mergeable(name, tf, fams[j]):
				rows[d] = rowAt{curve: len(fams), at: -1, apart: -1}
				fams = append(fams, tf)
			case fams[j].Linear != nil:
				fams[j].Apart = append(slices.Clip(fams[j].Apart), tf.Values[0])
				rows[d] = rowAt{curve: j, at: -1, apart: len(fams[j].Apart) - 1}
			default:
				v := tf.Values[0]
				k := slices.Index(fams[j].Values, v)
				if k < 0 {
					fams[j].Values = append(slices.Clone(fams[j].Values), v)
					k = len(fams[j].Values) - 1
				}
				rows[d] = rowAt{curve: j, at: k, apart: -1}
			}
		}
		t.fams[i], t.rows[i] = fams, rows
	}
	return t
}

// mergeable reports whether the table row tf of detector entry name can
// be computed with the swept family f: a bare family name
// (familyTableRow and familySweepFamily then build both from the same
// familySpec, differing in their values only) with one setting.
func mergeable(name string, tf, f qos.Family) bool {
	return !isSpecEntry(name) && len(tf.Values) == 1 && tf.Name == f.Name && tf.Param == f.Param &&
		tf.Unit == f.Unit && tf.WarmUp == f.WarmUp && (tf.Linear == nil) == (f.Linear == nil)
}

// replayTogether replays runs' tables and sweeps in one qos.SweepEach and
// returns what replayTable and sweepRuns would: the streams kept, their
// table and their sweep. A row or curve whose replay with the other's
// settings failed somewhere, or gave up its family's own method
// (qos.PerPoint) where its replay alone might not have, is replayed again
// as replayTable or sweepRuns would replay it, so that failures read the
// same and every field equals theirs.
func replayTogether(o options, runs []streamRun, t together, cfg qos.Config, progress func(done, total int), stderr io.Writer) ([]streamRun, []qos.Curve, sweep, error) {
	curves, err := qos.SweepEach(t.sw.streams, t.fams, sweepConfig(o, cfg, progress))
	if err != nil {
		return nil, nil, sweep{}, err
	}
	table := make([]qos.Curve, 0, len(runs)*len(o.detectors))
	var swept []qos.Curve
	again := make([]replayAgain, len(runs))
	first := 0
	for i, r := range runs {
		cs := curves[first : first+len(t.fams[i])]
		first += len(t.fams[i])
		for d, at := range t.rows[i] {
			c := cs[at.curve]
			var p *qos.Point
			switch {
			case at.at < 0 && at.apart < 0:
				table = append(table, c)
				continue
			case at.apart >= 0:
				if c.Err == nil && c.Method == qos.OnePass && c.Apart != nil {
					p = c.Apart[at.apart]
				}
			default:
				vs := t.fams[i][at.curve].Values
				k := slices.IndexFunc(c.Points, func(p qos.Point) bool { return p.Value == vs[at.at] })
				if c.Err == nil && k >= 0 && (c.Method != qos.PerPoint || len(vs) == 1) {
					p = &c.Points[k]
				}
			}
			if p == nil {
				again[i].add(r.table[d], &table, true)
				continue
			}
			tf := r.table[d]
			table = append(table, qos.Curve{Stream: c.Stream, Family: tf.Name, Param: tf.Param, Unit: tf.Unit, Method: c.Method, Points: []qos.Point{*p}})
		}
		for j, f := range t.sw.fams[i] {
			c := cs[j]
			c.Apart = nil
			if vs := t.fams[i][j].Values; len(vs) > len(f.Values) { // the table's value added
				if c.Err != nil || c.Method == qos.PerPoint {
					again[i].add(f, &swept, false)
					continue
				}
				v := vs[len(f.Values)]
				c.Points = slices.DeleteFunc(slices.Clone(c.Points), func(p qos.Point) bool { return p.Value == v })
			}
			swept = append(swept, c)
		}
	}
	if err := replayEachAgain(t.sw.streams, again, table, swept, sweepConfig(o, cfg, nil)); err != nil {
		return nil, nil, sweep{}, err
	}
	kept, keptTable, err := keepEvaluated(o, runs, table, stderr)
	if err != nil {
		return nil, nil, sweep{}, err
	}
	// The sweep of the streams kept, in their order (a subsequence of runs).
	var sw sweep
	j, at := 0, 0
	for i, r := range runs {
		n := len(t.sw.fams[i])
		if j < len(kept) && kept[j].in == r.in {
			j++
			sw.streams = append(sw.streams, t.sw.streams[i])
			sw.fams = append(sw.fams, t.sw.fams[i])
			sw.curves = append(sw.curves, swept[at:at+n]...)
		}
		at += n
	}
	return kept, keptTable, sw, nil
}

// replayAgain is what one stream replays again after replayTogether: the
// families, each with where its curve goes (an index into the table, or
// into the sweep's curves).
type replayAgain struct {
	fams  []qos.Family
	at    []int
	table []bool
}

// add appends f, whose curve goes next in *to, and reserves its place.
func (a *replayAgain) add(f qos.Family, to *[]qos.Curve, table bool) {
	a.fams = append(a.fams, f)
	a.at = append(a.at, len(*to))
	a.table = append(a.table, table)
	*to = append(*to, qos.Curve{})
}

// replayEachAgain replays the families of again, all streams in one
// qos.SweepEach, and puts their curves in place.
func replayEachAgain(streams []qos.Stream, again []replayAgain, table, swept []qos.Curve, scfg qos.SweepConfig) error {
	fams := make([][]qos.Family, len(again))
	n := 0
	for i, a := range again {
		fams[i] = a.fams
		n += len(a.fams)
	}
	if n == 0 {
		return nil
	}
	curves, err := qos.SweepEach(streams, fams, scfg)
	if err != nil {
		return err
	}
	k := 0
	for _, a := range again {
		for m, at := range a.at {
			if a.table[m] {
				table[at] = curves[k]
			} else {
				swept[at] = curves[k]
			}
			k++
		}
	}
	return nil
}
