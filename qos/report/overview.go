package report

import (
	"fmt"
	"strconv"

	"github.com/fdkit/fdkit/qos"
)

// overviewRow returns the overview's cells for s (after its name): its
// heartbeats and loss, then a detector's family, setting, MR, QAP and
// mean TD: the verdict's best at its operating point when s has a
// verdict naming one, else the first detector of s's table at its
// default setting (the same family for every stream of a replay, whose
// tables list the same detectors). Cells without a figure are "–".
func overviewRow(s Stream) []cell {
	src := s.Source
	if src == nil {
		src = qos.SliceSource(s.Heartbeats)
	}
	n := src.Len()
	cells := []cell{numCell(strconv.Itoa(n), float64(n))}
	if s.Stats.HasSeq {
		cells = append(cells, numCell(fmt.Sprintf("%.2f %%", 100*s.Stats.LossRate), s.Stats.LossRate))
	} else {
		cells = append(cells, cell{Text: "–"})
	}
	none := func(family, setting string) []cell {
		return append(cells, cell{Text: family}, cell{Text: setting}, cell{Text: "–"}, cell{Text: "–"}, cell{Text: "–"})
	}
	var family, setting string
	var r qos.Result
	switch v := s.Verdict; {
	case v != nil && v.Best >= 0 && v.Best < len(v.Ops):
		op := v.Ops[v.Best]
		family, r = op.Family+" (verdict’s best)", op.Point.Result
		setting = choiceSetting(qos.Choice{Family: op.Family, Param: op.Param, Unit: op.Unit, Point: op.Point})
	case len(s.Table) == 0:
		return none("–", "–")
	default:
		c := s.Table[0]
		family = c.Family
		if len(s.Settings) > 0 {
			setting = s.Settings[0]
		}
		if len(c.Points) == 0 {
			return none(family, setting)
		}
		r = c.Points[0].Result
	}
	return append(cells, cell{Text: family}, cell{Text: setting},
		metricCell(mrText(r), r.MRPerSecond), metricCell(qapText(r), r.QAP), metricCell(tdText(r), float64(r.TD.Mean)))
}

// overviewCaption says which detector the overview shows: the verdict's
// best where a stream has one, else the first detector of the tables
// (streams[0]'s) at its default setting, and how the columns sort.
func overviewCaption(streams []Stream) string {
	first := "the first detector of the table"
	if len(streams) > 0 && len(streams[0].Table) > 0 {
		first += " (" + streams[0].Table[0].Family + ")"
	}
	return "Every stream, with the MR, QAP and mean TD of one detector: the verdict’s best at its operating point where the targets give a verdict naming one, else " + first + " at its default setting. Click a header to sort: the first click puts the worst stream first (the highest loss, MR or TD, the lowest QAP), the next reverses, and “–” (undefined: no observed time, a single evaluated heartbeat) stays last either way; a name leads to its section."
}
