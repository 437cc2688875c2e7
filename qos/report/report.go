package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/figure"
	"github.com/fdkit/fdkit/trace"
)

// Page is the content of a self-contained HTML report of a replay (see
// Write).
type Page struct {
	// Title heads the page; Command, when set, is shown as the command
	// that produced it.
	Title   string
	Command string
	Streams []Stream
}

// Stream is one sender's part of a Page.
type Stream struct {
	// Name is the stream's name as in qos.Curve.Stream; Title names the trace
	// and the sender ("jitter.fdkit.gz, sender p"). Label, when not
	// empty, names the stream in the navigation and the overview in place
	// of Title (the sender alone when the run has one input: "sender p").
	Name, Title, Label string
	// Input, when set, names the input the stream was read from: streams
	// are ordered by Input, then by Title (both in natural order), so
	// that one input's streams stay together when two inputs' names are
	// equal as numbers ("in010" and "in10").
	Input string
	// Heartbeats is the replayed stream in arrival order (for the
	// inter-arrival histogram and the loss bursts); Stats its summary and
	// Interval the Δ the detectors were configured with.
	Heartbeats []detector.Heartbeat
	// Source, when not nil, is read instead of Heartbeats (for a stream
	// kept out of memory, such as a trace.Spool). Summary, when not nil,
	// is Source's Summary (a Summarizer given its heartbeats in order);
	// the report then reads Source once instead of twice.
	Source   qos.Source
	Summary  *Summary
	Stats    trace.Stats
	Interval time.Duration
	// LeftOut is how many records of the stream the input check left out
	// (trace.Checker): received, so not in the loss when Stats counts
	// them as received (trace.Accumulator.AlsoReceived). Shown when
	// positive.
	LeftOut int
	// Notes are facts about the replay (warm-up, clock handling), Warnings
	// what the input check found (records left out, restarts); both are
	// shown as given.
	Notes, Warnings []string
	// Table holds every detector at its default setting (one point per
	// curve) and Settings describes each row's setting.
	Table    []qos.Curve
	Settings []string
	// Curves are the swept curves; Targets the tuner's targets and Choices
	// its answers for this stream (qos.Tune on Curves with Targets, or
	// the operating points of Verdict.Choices).
	Curves  []qos.Curve
	Targets qos.Targets
	Choices []qos.Choice
	// TargetsLabel, when not empty, names Targets in place of "Targets",
	// for example where nobody gave them and they are a detector's
	// defaults (fdreplay without --td-max, --mr-max or --qap-min).
	TargetsLabel string
	// Verdict, when not nil, is qos.Decide's answer for this stream,
	// shown as its String with the out-of-sample figures beside it.
	Verdict *qos.Verdict
}

// Write writes r as one HTML page that loads nothing from outside
// (inline CSS, SVG and script; no fonts, images or network), so it opens
// offline, for example from a mail attachment. Per stream it shows the
// trace statistics with an inter-arrival histogram, loss bursts and input
// warnings; the default table; MR and 1 − QAP against the mean TD as SVG
// with each point's setting and values on hover; the tuner's choice per
// detector; and a verdict naming the best detector and setting for the
// targets, compared with the others at their operating points (qos.Decide).
// Tables sort on a click on their header. Intervals appear when the
// curves were replayed with qos.Config.Intervals. The streams appear in
// the natural order of their inputs, then of their titles
// (trace.CompareSenders: numbers in them compare as numbers, "sender p2"
// before "sender p10"; equal ones keep r's order), and a page of more than one stream begins with an overview,
// a row per stream (see overviewRow).
func Write(w io.Writer, r Page) error {
	r.Streams = slices.Clone(r.Streams)
	slices.SortStableFunc(r.Streams, func(a, b Stream) int {
		if c := trace.CompareSenders(a.Input, b.Input); c != 0 {
			return c
		}
		return trace.CompareSenders(a.Title, b.Title)
	})
	page := reportPage{Title: r.Title, Command: r.Command, Streams: make([]streamView, len(r.Streams))}
	// The streams' views (each reads its stream, two or three passes for
	// a spooled one, and draws two plots) are built on GOMAXPROCS
	// goroutines, taken in order; the page is the same whatever their
	// number.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(r.Streams)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(r.Streams); i = int(next.Add(1) - 1) {
				page.Streams[i] = buildStreamView(i, r.Streams[i])
			}
		})
	}
	wg.Wait()
	if len(r.Streams) > 1 {
		page.OverviewCaption = overviewCaption(r.Streams)
	}
	if err := reportTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("report: writing report: %w", err)
	}
	return nil
}

type reportPage struct {
	Title, Command  string
	OverviewCaption string
	Streams         []streamView
}

type streamView struct {
	ID, Title, Label   string
	Overview           []cell
	Facts              [][2]string
	Notes, Warnings    []string
	Hist               template.HTML
	Bursts             [][2]string
	Table              []tableRow
	MR, QAP            template.HTML
	NoMR               bool
	Targets            string
	TargetsLabel       string
	Choices            []choiceRow
	Verdict            string
	Holdout            [][]string
	HoldoutHeader      []string
	VerdictFound       bool
	HasIntervals       bool
	CurveCount, Points int
}

// cell is a table cell with its sort key.
type cell struct {
	Text string
	Key  string // numeric sort key, or "" to sort by text
}

type tableRow struct {
	Cells  []cell
	Colour string
}

type choiceRow struct {
	Cells  []cell
	Best   bool
	Colour string
}

func numCell(text string, key float64) cell {
	if math.IsNaN(key) {
		return cell{Text: text}
	}
	return cell{Text: text, Key: strconv.FormatFloat(key, 'g', 10, 64)}
}

func buildStreamView(i int, s Stream) streamView {
	v := streamView{ID: "s" + strconv.Itoa(i), Title: s.Title, Label: s.Label, Notes: s.Notes, Warnings: s.Warnings}
	if v.Label == "" {
		v.Label = s.Title
	}
	v.Overview = overviewRow(s)
	v.Facts = streamFacts(s)
	hist, bursts := histogramAndBursts(s.Heartbeats, s.Source, s.Summary)
	v.Hist, v.Bursts = template.HTML(hist), bursts
	v.Table, v.HasIntervals = tableRows(s)

	var ok bool
	var mr, qap string
	mr, ok = svgPlot(s.Curves, figure.MR, v.ID+"-mr")
	v.MR, v.NoMR = template.HTML(mr), !ok
	if qap, ok = svgPlot(s.Curves, figure.QAP, v.ID+"-qap"); ok {
		v.QAP = template.HTML(qap)
	}
	v.CurveCount = len(s.Curves)
	for _, c := range s.Curves {
		v.Points += len(c.Points)
	}

	v.Targets = s.Targets.String()
	v.TargetsLabel = "Targets"
	if s.TargetsLabel != "" {
		v.TargetsLabel = s.TargetsLabel
	}
	bestFamily := ""
	v.Verdict = "No verdict: give targets (fdreplay --td-max, --mr-max, --qap-min) to compare the detectors at their operating points."
	if s.Verdict != nil {
		v.Verdict = s.Verdict.String()
		v.VerdictFound = s.Verdict.Best >= 0
		if v.VerdictFound {
			bestFamily = s.Verdict.Ops[s.Verdict.Best].Family
		}
		v.Holdout, v.HoldoutHeader = s.Verdict.HoldoutRows(), qos.HoldoutHeader
	}
	v.Choices = choiceRows(s.Choices, bestFamily)
	return v
}

// streamFacts returns the stream's facts as (name, value) rows: its
// length, span, interval, inter-arrival times, loss and clock.
func streamFacts(s Stream) [][2]string {
	var facts [][2]string
	add := func(k, val string) { facts = append(facts, [2]string{k, val}) }
	st := s.Stats
	src := s.Source
	if src == nil {
		src = qos.SliceSource(s.Heartbeats)
	}
	add("heartbeats", strconv.Itoa(src.Len()))
	add("observed", st.Span.Round(time.Millisecond).String())
	add("heartbeat interval Δ", s.Interval.String())
	if st.InterArrival.N > 0 {
		ia := st.InterArrival
		add("inter-arrival (ms)", fmt.Sprintf("mean %s, s.d. %s, p50 %s, p99 %s, max %s", msString(ia.Mean), msString(ia.SD), msString(ia.P50), msString(ia.P99), msString(ia.Max)))
	}
	if st.HasSeq {
		add("loss", fmt.Sprintf("%.2f %% (%d of %d sequence numbers)", 100*st.LossRate, st.Lost, st.Expected))
		add("loss bursts", fmt.Sprintf("%d, longest %d", st.LossBursts, st.LongestBurst))
		if st.Reordered+st.Duplicates > 0 {
			add("stale", fmt.Sprintf("%d reordered, %d duplicates", st.Reordered, st.Duplicates))
		}
	}
	if s.LeftOut > 0 {
		add("left out by the input check", fmt.Sprintf("%d record(s), received but not replayed: not counted as loss", s.LeftOut))
	}
	if st.HasClock {
		add("clock (A − σ)", fmt.Sprintf("offset %s, drift %.1f ppm", longDuration(st.ClockOffset), st.DriftPPM))
	}
	return facts
}

// tableRows returns a row per curve of the stream's table (9 cells: its
// family, setting and first point's figures, or the error), and whether
// any point has confidence intervals.
func tableRows(s Stream) ([]tableRow, bool) {
	var rows []tableRow
	intervals := false
	for ri, c := range s.Table {
		col, _ := figure.Style(c.Family, nil)
		row := tableRow{Colour: hexColour(col)}
		setting := ""
		if ri < len(s.Settings) {
			setting = s.Settings[ri]
		}
		if len(c.Points) == 0 {
			msg := "no result"
			if c.Err != nil {
				msg = c.Err.Error()
			}
			row.Cells = []cell{{Text: c.Family}, {Text: setting}, {Text: msg}}
			for len(row.Cells) < 9 {
				row.Cells = append(row.Cells, cell{Text: "–"})
			}
			rows = append(rows, row)
			continue
		}
		r := c.Points[0].Result
		intervals = intervals || r.CI != nil
		row.Cells = []cell{{Text: c.Family}, {Text: setting},
			numCell(strconv.Itoa(r.Evaluated), float64(r.Evaluated)),
			numCell(strconv.Itoa(r.Mistakes), float64(r.Mistakes)),
			metricCell(mrText(r), r.MRPerSecond),
			metricCell(qapText(r), r.QAP),
			metricCell(tdText(r), float64(r.TD.Mean)),
			metricCell(tdP99Text(r), float64(r.TD.P99)),
			metricCell(tmText(r), float64(r.MeanTM)),
		}
		rows = append(rows, row)
	}
	return rows, intervals
}

// choiceRows returns a row per detector's choice under the targets: its
// setting, whether it meets them (or by how much the nearest point
// misses) and its TD, MR and QAP; bestFamily's row is marked best.
func choiceRows(choices []qos.Choice, bestFamily string) []choiceRow {
	var rows []choiceRow
	for _, c := range choices {
		col, _ := figure.Style(c.Family, nil)
		r := c.Point.Result
		row := choiceRow{Best: c.Family == bestFamily, Colour: hexColour(col)}
		setting := choiceSetting(c)
		status := "meets"
		switch {
		case c.Found:
		case c.Point.Records == 0:
			status, setting = "no result", "–"
		case math.IsInf(c.Shortfall, 1) && r.Span <= 0:
			status = "no observed time (one heartbeat) to judge MR or QAP by"
		case math.IsInf(c.Shortfall, 1):
			// MinQAP = 1 or NoMistakes: every point with a mistake
			// misses by +Inf; the nearest is the most accurate one.
			status = "still makes mistakes, which the targets allow none of (nearest)"
		default:
			status = "misses by " + strconv.FormatFloat(c.Shortfall, 'g', 3, 64) + "× (nearest)"
		}
		row.Cells = []cell{{Text: c.Family}, {Text: setting}, {Text: status},
			metricCell(tdText(r), float64(r.TD.Mean)), metricCell(mrText(r), r.MRPerSecond), metricCell(qapText(r), r.QAP)}
		rows = append(rows, row)
	}
	return rows
}

// histogramAndBursts returns interArrivalHistogram(src), src being
// SliceSource(hbs) when nil, and the loss bursts (lossBursts) of hbs or
// src, reading a Source twice: the bursts are counted (sourceBursts)
// in the histogram's first read. Given sum (src's Summary), it reads src
// once, for the histogram's counts. Both are empty when the first read
// fails, the histogram alone when the second does.
func histogramAndBursts(hbs []detector.Heartbeat, src qos.Source, sum *Summary) (string, [][2]string) {
	if src == nil {
		return interArrivalHistogram(qos.SliceSource(hbs)), lossBursts(hbs)
	}
	if sum == nil {
		var z Summarizer
		seq, done := src.Pass()
		for hb := range seq {
			z.Add(hb)
		}
		if done() != nil {
			return "", nil
		}
		s := z.Summary()
		sum = &s
	}
	return sum.gaps.histogram(src), sum.bursts
}

// A Summary is what the report reads from a Source before it counts the
// inter-arrival histogram: the range of the gaps between consecutive
// arrivals and the loss bursts. A caller that reads the stream anyway
// can take it there with a Summarizer and give it as Stream.Summary, so
// that the report reads the Source once instead of twice.
type Summary struct {
	gaps   gapRange
	bursts [][2]string
}

// A Summarizer takes a Summary from heartbeats added in arrival order;
// its zero value is ready. It holds at most a few thousand sequence
// numbers (the loss bursts' reordering window).
type Summarizer struct {
	prev time.Duration
	seen bool
	g    gapRange
	b    sourceBursts
}

// Add adds the next heartbeat in arrival order.
func (z *Summarizer) Add(hb detector.Heartbeat) {
	if d := hb.Arrival - z.prev; z.seen && d > 0 {
		z.g.add(float64(d) / float64(time.Millisecond))
	}
	z.prev, z.seen = hb.Arrival, true
	z.b.add(hb)
}

// Summary returns the Summary of the heartbeats added and releases the
// sequence numbers held; z is not used after.
func (z *Summarizer) Summary() Summary {
	return Summary{gaps: z.g, bursts: z.b.classes()}
}

// interArrivalHistogram bins the gaps between consecutive arrivals on a
// log scale (30 bins from the smallest positive gap to the largest).
// It reads src twice (the range, then the counts) and returns "" when src
// cannot be read.
func interArrivalHistogram(src qos.Source) string {
	var r gapRange
	if arrivalGaps(src, r.add) != nil {
		return ""
	}
	return r.histogram(src)
}

// arrivalGaps reads src once, calling gap with each positive gap between
// consecutive arrivals, in milliseconds (as Summarizer.Add counts them).
// It returns what ended the read early.
func arrivalGaps(src qos.Source, gap func(float64)) error {
	seq, done := src.Pass()
	first := true
	var prev time.Duration
	for hb := range seq {
		if d := hb.Arrival - prev; !first && d > 0 {
			gap(float64(d) / float64(time.Millisecond))
		}
		prev, first = hb.Arrival, false
	}
	return done()
}

// gapRange is the count and the range of the gaps arrivalGaps gives.
type gapRange struct {
	n      int
	lo, hi float64
}

func (r *gapRange) add(g float64) {
	if r.n == 0 {
		r.lo, r.hi = math.Inf(1), math.Inf(-1)
	}
	r.n, r.lo, r.hi = r.n+1, min(r.lo, g), max(r.hi, g)
}

// histogram reads src (the Source whose gaps r ranges) a second time to
// count its gaps in interArrivalHistogram's bins; "" for fewer than two
// gaps or when src cannot be read.
func (r gapRange) histogram(src qos.Source) string {
	if r.n < 2 {
		return ""
	}
	lo, hi := r.lo, r.hi
	if !(hi > lo) {
		lo, hi = lo/1.5, hi*1.5
	}
	const bins = 30
	edges := make([]float64, bins+1)
	for i := range edges {
		edges[i] = lo * math.Pow(hi/lo, float64(i)/bins)
	}
	edges[bins] = hi * (1 + 1e-9)
	counts := make([]int, bins)
	span := math.Log(edges[bins] / lo)
	if arrivalGaps(src, func(g float64) {
		k := int(float64(bins) * math.Log(g/lo) / span)
		counts[min(max(k, 0), bins-1)]++
	}) != nil {
		return ""
	}
	return svgHistogram(edges, counts, "gap between consecutive arrivals (ms, log scale)")
}

// lossBursts counts the runs of consecutive missing sequence numbers by
// length (1, 2, 3–5, 6–10, 11–100, more) in a stream in memory, sorted by
// sequence number, or nil without sequence numbers. histogramAndBursts
// counts them in a Source with sourceBursts.
func lossBursts(hbs []detector.Heartbeat) [][2]string {
	var seqs []uint64
	for _, hb := range hbs {
		if hb.HasSeq {
			seqs = append(seqs, hb.Seq)
		}
	}
	slices.Sort(seqs)
	var c burstCounter
	for _, v := range slices.Compact(seqs) {
		c.add(v)
	}
	return c.classes()
}

// sourceBursts is lossBursts's count over a Source's heartbeats in
// arrival order: a burstCounter behind a seqWindow, which holds the
// burstWindow lowest sequence numbers not yet placed, so that memory
// stays bounded: a heartbeat arriving after burstWindow heartbeats with
// higher numbers is taken as lost (its gap is already counted).
type sourceBursts struct {
	w seqWindow
	c burstCounter
}

func (b *sourceBursts) add(hb detector.Heartbeat) {
	if !hb.HasSeq {
		return
	}
	if v, ok := b.w.push(hb.Seq); ok {
		b.c.add(v)
	}
}

// classes empties the window into the counter and returns its classes.
func (b *sourceBursts) classes() [][2]string {
	for b.w.len() > 0 {
		b.c.add(b.w.pop())
	}
	return b.c.classes()
}

// burstWindow is lossBursts's reordering window for a qos.Source.
const burstWindow = 1 << 12

// burstClasses are lossBursts's classes of run lengths.
var burstClasses = [...]struct {
	name   string
	lo, hi uint64
}{{"1", 1, 1}, {"2", 2, 2}, {"3–5", 3, 5}, {"6–10", 6, 10}, {"11–100", 11, 100}, {"> 100", 101, math.MaxUint64}}

// burstCounter counts the runs of missing numbers between the sequence
// numbers added in increasing order (duplicates and numbers below the
// previous one are skipped) by burstClasses.
type burstCounter struct {
	n      int // numbers counted
	prev   uint64
	counts [len(burstClasses)]int
}

func (c *burstCounter) add(s uint64) {
	if c.n > 0 && s <= c.prev {
		return
	}
	if c.n > 0 {
		if gap := s - c.prev - 1; gap > 0 {
			for k, cl := range burstClasses {
				if gap >= cl.lo && gap <= cl.hi {
					c.counts[k]++
				}
			}
		}
	}
	c.n++
	c.prev = s
}

// classes returns each class's name and count, nil for fewer than two
// numbers.
func (c *burstCounter) classes() [][2]string {
	if c.n < 2 {
		return nil
	}
	out := make([][2]string, len(burstClasses))
	for k, cl := range burstClasses {
		out[k] = [2]string{cl.name, strconv.Itoa(c.counts[k])}
	}
	return out
}
