package report

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/fdkit/fdkit/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// undefinedPage is a page of two streams whose table has one detector:
// "sender p10" with a mistake, "sender p9" with one evaluated heartbeat
// and no observed time (Span 0), where MR, QAP and E[TM] are undefined
// (qos holds MR 0 and QAP 1 there by convention).
func undefinedPage() Page {
	row := func(stream string, r qos.Result) []qos.Curve {
		return []qos.Curve{{Stream: stream, Family: "fixed", Param: "timeout", Unit: "ms", Points: []qos.Point{{Value: 1000, Result: r}}}}
	}
	full := qos.Result{Records: 300, Evaluated: 225, Span: 22400 * time.Millisecond, Mistakes: 1, Suspected: 400 * time.Millisecond,
		MRPerSecond: 1 / 22.4, QAP: 1 - 0.4/22.4, MeanTM: 400 * time.Millisecond, TD: qos.TDStats{Mean: 1020 * time.Millisecond, P99: 1020 * time.Millisecond}}
	one := qos.Result{Records: 3, Evaluated: 1, Span: 0, MRPerSecond: 0, QAP: 1,
		TD: qos.TDStats{Mean: 1030 * time.Millisecond, P99: 1030 * time.Millisecond}}
	return Page{Title: "t", Streams: []Stream{
		{Name: "p10", Title: "sender p10", Table: row("p10", full), Settings: []string{"T=1s"}},
		{Name: "p9", Title: "sender p9", Table: row("p9", one), Settings: []string{"T=1s"}},
	}}
}

// Where stdout says "–" (MR and QAP without observed time, E[TM] without a
// mistake), the report says "–" too, in the overview and in the stream's
// table, with no sort key (atk25's F4: it showed MR 0 and QAP 1.000000);
// the TD, defined, keeps its figure and key. A stream's name cell is keyed
// by its rank in the page's natural order (p9 before p10).
func TestReportUndefinedMetrics(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Write(&b, undefinedPage()))
	page := b.String()
	ov := regexp.MustCompile(`(?s)<table class="sortable overview">(.*?)</table>`).FindStringSubmatch(page)
	require.NotNil(t, ov)
	assert.Contains(t, ov[1], `<tr><td data-v="0"><a href="#s0">sender p9</a></td><td data-v="0">0</td><td>–</td><td>fixed</td><td>T=1s</td><td>–</td><td>–</td><td data-v="1030000000">1030.0</td></tr>`)
	assert.Contains(t, ov[1], `<tr><td data-v="1"><a href="#s1">sender p10</a></td><td data-v="0">0</td><td>–</td><td>fixed</td><td>T=1s</td><td data-v="0.04464285714">0.0446</td><td data-v="0.9821428571">0.982143</td><td data-v="1020000000">1020.0</td></tr>`)
	assert.Contains(t, ov[1], `<th data-first="desc">MR (1/s)</th><th>QAP</th>`, "MR sorts the worst (largest) first")

	sec := regexp.MustCompile(`(?s)<section id="s0">(.*?)</section>`).FindStringSubmatch(page)
	require.NotNil(t, sec)
	assert.Contains(t, sec[1], `fixed</td><td>T=1s</td><td data-v="1">1</td><td data-v="0">0</td><td>–</td><td>–</td><td data-v="1030000000">1030.0</td><td data-v="1030000000">1030.0</td><td>–</td></tr>`)
	assert.NotContains(t, sec[1], "1.000000")
	sec = regexp.MustCompile(`(?s)<section id="s1">(.*?)</section>`).FindStringSubmatch(page)
	require.NotNil(t, sec)
	assert.Contains(t, sec[1], `<td data-v="0.04464285714">0.0446</td><td data-v="0.9821428571">0.982143</td><td data-v="1020000000">1020.0</td><td data-v="1020000000">1020.0</td><td data-v="400000000">400.0</td></tr>`)
}
