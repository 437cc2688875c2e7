package report

import (
	"bytes"
	"errors"
	"iter"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/figure"
	"github.com/fdkit/fdkit/qos/internal/qostest"
	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reportFixture replays a generated stream (with a hostile sender name)
// through three families and the default-style table, with intervals, and
// returns the report.
func reportFixture(t *testing.T) Page {
	t.Helper()
	name := `p<script>alert(1)</script>`
	recs, hbs := qostest.JitterLoss(t, name)
	cfg := qos.Config{Intervals: true, WarmUp: 100}
	est := chen.EstimatorConfig{Interval: ms(100), WindowSize: 100}
	fams := []qos.Family{
		qos.FixedFamily(durs(110, 150, 200, 300, 500)),
		qos.ChenFamily(chen.Config{Estimator: est}, durs(10, 50, 100, 200)),
		qos.PhiNormalFamily(phi.NormalConfig{WindowSize: 100}, []float64{1, 2, 4, 8}),
	}
	curves, err := qos.Sweep([]qos.Stream{{Name: name, Heartbeats: hbs}}, fams, qos.SweepConfig{Config: cfg})
	require.NoError(t, err)
	table, err := qos.Sweep([]qos.Stream{{Name: name, Heartbeats: hbs}}, []qos.Family{qos.FixedFamily(durs(1000)), qos.ChenFamily(chen.Config{Estimator: est}, durs(100))}, qos.SweepConfig{Config: cfg})
	require.NoError(t, err)
	tg := qos.Targets{MaxTD: time.Second, MinQAP: 0.99}
	choices, err := qos.Tune(curves, tg)
	require.NoError(t, err)
	v, err := qos.Decide(qos.Stream{Name: name, Heartbeats: hbs}, fams, curves, tg, qos.DecideConfig{Sweep: qos.SweepConfig{Config: cfg}})
	require.NoError(t, err)
	return Page{Title: "report of " + name, Command: "fdreplay --report r.html 'a b'", Streams: []Stream{{
		Name: name, Title: "gen.txt, sender " + name, Heartbeats: hbs, Stats: trace.Summarize(recs), Interval: ms(100),
		Notes: []string{"warm-up 100"}, Warnings: []string{"left out <b>3</b> records"},
		Table: table, Settings: []string{"T=1s", "α=100ms"}, Curves: curves, Targets: tg, Choices: choices, Verdict: &v,
	}}}
}

var ms, durs = qostest.Ms, qostest.Durations

// The report is one self-contained page: nothing loaded from outside,
// every value escaped, two plots with a tooltip per point, the statistics,
// histogram, loss bursts, warnings, tables and the verdict.
func TestWriteReport(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Write(&b, reportFixture(t)))
	page := b.String()
	for _, ext := range []string{`src=`, `href="http`, `href='http`, `@import`, `url(h`, `url(/`, `url(.`, `url('`, `url("`, `<link`, `<iframe`, `<img`} {
		assert.NotContains(t, page, ext, "nothing loaded from outside")
	}
	assert.NotRegexp(t, `url\([^#]`, page, "only fragment URLs (clip paths) in the page")
	assert.NotContains(t, page, "<script>alert(1)", "values are escaped")
	assert.Contains(t, page, "&lt;script&gt;alert(1)")
	assert.NotContains(t, page, "<b>3</b>")
	assert.Equal(t, 2, strings.Count(page, `<svg id="s0-`), "MR and 1 − QAP plots")
	assert.Equal(t, 1, strings.Count(page, `<svg class="hist"`), "inter-arrival histogram")
	assert.Regexp(t, `<title>chen α=50ms\nTD [0-9.]+ ms \[[0-9.]+, [0-9.]+\]\nMR [0-9.e-]+/s \[`, page, "tooltips with setting and intervals")
	assert.Contains(t, page, "sender p&lt;script&gt;alert(1)&lt;/script&gt;: best ")
	assert.Contains(t, page, "TD ms held out")
	assert.Regexp(t, `It meets the targets even at the unfavourable ends|crosses the target`, page)
	assert.Contains(t, page, "Targets: TD ≤ 1s, QAP ≥ 0.99.")
	assert.Contains(t, page, "loss bursts")
	assert.Contains(t, page, `class="sortable"`)
	assert.Contains(t, page, `data-v="`)
	assert.Contains(t, page, "fdreplay --report r.html &#39;a b&#39;")
	assert.Regexp(t, regexp.MustCompile(`<tr class="best">`), page)
	assert.NotContains(t, page, "NaN")
	assert.NotContains(t, page, "qos.", "no Go name in the text (the verdict read \"95 % qos.CI\")")
	assert.NotContains(t, page, "ZgotmplZ", "no value rejected by html/template")
}

// Loss bursts by length and the inter-arrival histogram on a stream with
// known gaps.
func TestReportLossBurstsAndHistogram(t *testing.T) {
	var hbs []detector.Heartbeat
	for s := uint64(1); s <= 40; s++ {
		if s == 5 || s == 10 || s == 11 || (s >= 20 && s <= 23) {
			continue // bursts of 1, 2 and 4
		}
		hbs = append(hbs, detector.Heartbeat{Seq: s, HasSeq: true, Arrival: time.Duration(s) * ms(100)})
	}
	assert.Equal(t, [][2]string{{"1", "1"}, {"2", "1"}, {"3–5", "1"}, {"6–10", "0"}, {"11–100", "0"}, {"> 100", "0"}}, lossBursts(hbs))
	h := interArrivalHistogram(qos.SliceSource(hbs))
	assert.Equal(t, 4, strings.Count(h, `class="bin"`), "gaps of 100, 200, 300 and 500 ms: four log bins")
	assert.Nil(t, lossBursts(hbs[:1]))
	assert.Empty(t, interArrivalHistogram(qos.SliceSource(hbs[:2])))

	// Read from a spool, with heartbeats reordered within the window and
	// duplicated: the same classes as in memory, and the same histogram.
	mixed := slices.Clone(hbs)
	mixed[3].Seq, mixed[4].Seq = mixed[4].Seq, mixed[3].Seq
	mixed = append(mixed[:8], append([]detector.Heartbeat{mixed[7]}, mixed[8:]...)...)
	mixed[8].Arrival++
	for i := 9; i < len(mixed); i++ {
		mixed[i].Arrival += 1
	}
	sp := qostest.Spooled(t, mixed)
	// Both from one function, reading the spool twice.
	cs := &countingSource{Source: sp}
	hist, bursts := histogramAndBursts(nil, cs, nil)
	assert.Equal(t, interArrivalHistogram(qos.SliceSource(mixed)), interArrivalHistogram(sp))
	assert.Equal(t, interArrivalHistogram(sp), hist)
	assert.Equal(t, lossBursts(hbs), bursts)
	assert.Equal(t, 2, cs.passes)
	_, bursts = histogramAndBursts(nil, qostest.Spooled(t, hbs[:1]), nil)
	assert.Nil(t, bursts)
	hist, bursts = histogramAndBursts(hbs, nil, nil)
	assert.Equal(t, interArrivalHistogram(qos.SliceSource(hbs)), hist)
	assert.Equal(t, lossBursts(hbs), bursts)
	hist, bursts = histogramAndBursts(nil, failingSource{sp}, nil)
	assert.Empty(t, hist)
	assert.Nil(t, bursts)

	// With the spool's Summary taken by the caller: one read, the same
	// histogram and bursts.
	var z Summarizer
	for _, hb := range mixed {
		z.Add(hb)
	}
	sum := z.Summary()
	cs = &countingSource{Source: sp}
	hist, bursts = histogramAndBursts(nil, cs, &sum)
	assert.Equal(t, interArrivalHistogram(sp), hist)
	assert.Equal(t, lossBursts(hbs), bursts)
	assert.Equal(t, 1, cs.passes)
	// The Summary, not the Source, gives the range and the bursts: a
	// Summary of the first half alone bins the whole stream in its
	// narrower range and counts only its bursts.
	var half Summarizer
	for _, hb := range mixed[:7] {
		half.Add(hb)
	}
	hs := half.Summary()
	hist, bursts = histogramAndBursts(nil, sp, &hs)
	assert.NotEqual(t, interArrivalHistogram(sp), hist)
	assert.NotEqual(t, lossBursts(hbs), bursts)
}

// countingSource counts the reads of its Source.
type countingSource struct {
	qos.Source
	passes int
}

func (c *countingSource) Pass() (iter.Seq[detector.Heartbeat], func() error) {
	c.passes++
	return c.Source.Pass()
}

// failingSource is a Source whose reads stop after its first heartbeat
// with an error.
type failingSource struct{ qos.Source }

func (f failingSource) Pass() (iter.Seq[detector.Heartbeat], func() error) {
	seq, _ := f.Source.Pass()
	return func(yield func(detector.Heartbeat) bool) {
		n := 0
		for hb := range seq {
			if n == 1 || !yield(hb) {
				return
			}
			n++
		}
	}, func() error { return errors.New("read failed") }
}

// The report writes a lopsided interval as +up/−down (see
// TestCellLopsidedInterval in cmd/fdreplay) and a symmetric one as ±.
func TestReportLopsidedInterval(t *testing.T) {
	r := qos.Result{Span: 233 * time.Second, Mistakes: 1, MRPerSecond: 0.00428, Suspected: 1, QAP: 0.999957,
		CI: &qos.CI{MRPerSecond: [2]float64{0.0001, 0.0239}, QAP: [2]float64{0.9999, 1}}}
	assert.Equal(t, "0.00428 +0.02/−0.0042", mrText(r))
	assert.Equal(t, "0.999957 +0.000043/−0.000057", qapText(r))
	r.CI.MRPerSecond = [2]float64{0.0033, 0.0053}
	assert.Equal(t, "0.00428 ±0.001", mrText(r))
}

// Against MR = 0 (NoMistakes) or QAP ≥ 1 a point with a mistake misses by
// +Inf: the report says that it still makes mistakes, not "misses by
// +Inf×".
func TestReportNoMistakesTarget(t *testing.T) {
	rep := reportFixture(t)
	s := &rep.Streams[0]
	s.Targets = qos.Targets{NoMistakes: true, MaxTD: 300 * time.Millisecond}
	var err error
	s.Choices, err = qos.Tune(s.Curves, s.Targets)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, Write(&b, rep))
	page := b.String()
	assert.Contains(t, page, "Targets: TD ≤ 300ms, MR = 0 (no mistake).")
	assert.Equal(t, "MR = 0 (no mistake)", qos.Targets{NoMistakes: true}.String())
	assert.Contains(t, page, "still makes mistakes, which the targets allow none of (nearest)")
	assert.NotContains(t, page, "Inf")
}

// A clock offset of years reads as years (it read "12604h41m36.55s"),
// one of days as days, a short one as a duration.
func TestLongDuration(t *testing.T) {
	assert.Equal(t, "1.44 years (12604h41m36.55s)", longDuration(12604*time.Hour+41*time.Minute+36550*time.Millisecond))
	assert.Equal(t, "-3.5 days (-84h0m0s)", longDuration(-84*time.Hour))
	assert.Equal(t, "1.5s", longDuration(1500*time.Millisecond))
	assert.Equal(t, "-292.3 years (-2562047h47m16.854775808s)", longDuration(math.MinInt64))
}

// The histogram writes counts on its y axis and labels its x axis at 1, 2
// and 5 of each decade, not one or two x labels.
func TestHistogramAxes(t *testing.T) {
	edges := make([]float64, 31)
	for i := range edges {
		edges[i] = 50 * math.Pow(40, float64(i)/30) // 50 ms to 2 s
	}
	counts := make([]int, 30)
	counts[8], counts[9], counts[20] = 3000, 400, 7
	h := svgHistogram(edges, counts, "gap")
	var ys []string
	for _, m := range regexp.MustCompile(`text-anchor="end">([0-9]+)</text>`).FindAllStringSubmatch(h, -1) {
		ys = append(ys, m[1])
	}
	assert.Equal(t, "0", ys[0])
	assert.Equal(t, "3000", ys[len(ys)-1])
	assert.GreaterOrEqual(t, len(ys), 4, ys)
	var xs []string
	for _, m := range regexp.MustCompile(`text-anchor="middle">([0-9.]+)</text>`).FindAllStringSubmatch(h, -1) {
		xs = append(xs, m[1])
	}
	assert.Equal(t, []string{"50", "100", "200", "500", "1000", "2000"}, xs)
}

// In print the tables wrap and shrink to the page instead of being cut.
func TestPrintStyle(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Write(&b, Page{Title: "t"}))
	assert.Regexp(t, `@media print \{[^@]*\.scroll \{ overflow: visible; \}[^@]*white-space: normal`, b.String())
}

// The report's plots follow the figures' rules: a point without mistakes
// is a bound marker at 3/T, a family alone far off is marked at the
// border, a line stops at a point without observed time, the legend sits
// below the data and log labels are powers of ten.
func TestReportPlotRules(t *testing.T) {
	mk := func(v, td float64, mistakes int) qos.Point {
		r := qos.Result{Span: 100 * time.Second, Mistakes: mistakes, MRPerSecond: float64(mistakes) / 100, QAP: 1 - float64(mistakes)*1e-4}
		r.TD.Mean, r.Records = ms(td), 1000
		return qos.Point{Value: v, Result: r}
	}
	hole := mk(3, 170, 5)
	hole.Span = 0
	var curves []qos.Curve
	for _, f := range []string{"fixed", "chen", "2w-fd", "kappa"} {
		curves = append(curves, qos.Curve{Family: f, Param: "x", Points: []qos.Point{mk(1, 100, 100), mk(2, 150, 10), hole, mk(4, 200, 3), mk(5, 230, 2), mk(6, 250, 0)}})
	}
	curves = append(curves, qos.Curve{Family: "phi-cassandra", Param: "threshold", Points: []qos.Point{mk(1, 20, 1000)}})
	svg, ok := svgPlot(curves, figure.MR, "t")
	require.True(t, ok)
	assert.Equal(t, 8, strings.Count(svg, "<polyline"), "two runs per family: the hole splits them")
	assert.Equal(t, 5, strings.Count(svg, "<title>fixed"), "every point but the hole is drawn")
	assert.Contains(t, svg, "<title>off the scale: phi-cassandra")
	assert.Len(t, regexp.MustCompile(`<path d="M[0-9. ]+H[0-9.]+M[0-9. ]+V`).FindAllString(svg, -1), 4+1, "a bound per family, and its key")
	assert.Contains(t, svg, "no mistake: MR ≤ 3/T (95 %)")
	assert.Contains(t, svg, `10<tspan dy="-5" font-size="8">−2</tspan>`)
	m := regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9.]+)" class="legend">fixed</text>`).FindStringSubmatch(svg)
	require.NotNil(t, m)
	assert.Equal(t, "80.0", m[1], "legend below the data, from its left edge")
}

// Every table sits in a scrolling block, the out-of-sample table too: a
// table wider than the page scrolls inside it instead of running off its
// right edge.
func TestTablesScroll(t *testing.T) {
	v := &qos.Verdict{Stream: "p", Best: -1, Ops: []qos.OperatingPoint{{Family: "chen", Param: "alpha", Unit: "ms",
		Holdout: &qos.HoldoutFigures{Found: true, Value: 300, MeetsHeldOut: true}}}}
	var b bytes.Buffer
	require.NoError(t, Write(&b, Page{Title: "t", Streams: []Stream{{Name: "p", Title: "p", Verdict: v}}}))
	html := b.String()
	require.Contains(t, html, `<table class="holdout">`)
	tables := strings.Count(html, "<table")
	assert.Equal(t, tables, strings.Count(html, `<div class="scroll"><table`), "tables outside a scrolling block")
}

// The streams' views are built on every core, and the page is the same
// whatever their number: the views in stream order, one of them read
// from a spool.
func TestWriteSameOnEveryCoreCount(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	page := reportFixture(t)
	s := page.Streams[0]
	for i, name := range []string{"q", "r", "s"} {
		c := s
		c.Name, c.Title = name, "sender "+name
		if i == 1 {
			c.Source, c.Heartbeats = qostest.Spooled(t, s.Heartbeats), nil
		}
		page.Streams = append(page.Streams, c)
	}
	var want bytes.Buffer
	runtime.GOMAXPROCS(1)
	require.NoError(t, Write(&want, page))
	for _, procs := range []int{2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		var got bytes.Buffer
		require.NoError(t, Write(&got, page))
		require.Equal(t, want.String(), got.String(), "GOMAXPROCS %d", procs)
	}
	require.Less(t, strings.Index(want.String(), "sender q"), strings.Index(want.String(), "sender s"))
}

// A spooled stream longer than burstWindow, whose numbers leave the
// window while it is read, has the loss bursts of the same stream in
// memory: runs of 1 to 7 missing numbers (b mod 7 + 1 at the start of
// each block b of 50 from 1 to 245, so 35 of each length).
func TestReportLossBurstsPastTheWindow(t *testing.T) {
	var hbs []detector.Heartbeat
	for s := uint64(1); s <= 3*burstWindow; s++ {
		if s%50 < s/50%7+1 {
			continue
		}
		hbs = append(hbs, detector.Heartbeat{Seq: s, HasSeq: true, Arrival: time.Duration(s) * ms(100)})
	}
	want := lossBursts(hbs)
	assert.Equal(t, [][2]string{{"1", "35"}, {"2", "35"}, {"3–5", "105"}, {"6–10", "70"}, {"11–100", "0"}, {"> 100", "0"}}, want)
	_, bursts := histogramAndBursts(nil, qostest.Spooled(t, hbs), nil)
	assert.Equal(t, want, bursts)
}
