package main

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/trace"
)

// writeSortTrace writes senders p2, p9, p10 and p100 of 20 s at Δ = 100 ms
// (seeds 123500261 + i), losing heartbeats in 1, 2, 3 and no outages of
// 2 s (at 8, 12 and 16 s, after the warm-up), and q, three heartbeats, on which one is evaluated and MR and QAP
// are undefined.
func writeSortTrace(t *testing.T) string {
	t.Helper()
	var streams [][]trace.Record
	for i, name := range []string{"p2", "p9", "p10", "p100"} {
		c := trace.GenConfig{Sender: name, Interval: 100 * time.Millisecond, Duration: 20 * time.Second,
			Delay: trace.Delay{Dist: trace.DelayNormal, Mean: 10 * time.Millisecond, SD: 2 * time.Millisecond}}
		for k := range []int{1, 2, 3, 0}[i] {
			c.Outages = append(c.Outages, trace.Period{At: time.Duration(8+4*k) * time.Second, Length: 2 * time.Second})
		}
		recs, err := trace.Generate(c, trace.NewRand(123500261+uint64(i)))
		require.NoError(t, err)
		streams = append(streams, recs)
	}
	var q []trace.Record
	for k := range 3 {
		at := time.Duration(k) * 100 * time.Millisecond
		q = append(q, trace.Record{Sender: "q", Seq: uint64(k), HasSeq: true, Sent: at, HasSent: true, Arrival: at + 30*time.Millisecond, HasArrival: true})
	}
	streams = append(streams, q)
	return writeMergedTrace(t, "sort.fdkit", streams)
}

// clickScript clicks the overview's headers in turn (by column), and
// after each click writes the rows' stream and the clicked column's text
// into the body's data-orders, one line per click.
const clickScript = `<script>
(function () {
  var ths = document.querySelectorAll("table.overview thead th");
  var out = [];
  [%s].forEach(function (col) {
    ths[col].click();
    out.push(Array.prototype.map.call(document.querySelectorAll("table.overview tbody tr"), function (r) {
      return r.cells[0].textContent.trim().replace("sender ", "") + "=" + r.cells[col].textContent.trim().split(" ")[0];
    }).join(" "));
  });
  document.body.setAttribute("data-orders", out.join("\n"));
})();
</script>
</body>`

// In Chromium, clicking the overview's stream header orders the streams
// naturally (p2, p9, p10, p100), a second click in reverse (it was
// localeCompare: p10 before p2, and no way back); the MR column puts the
// largest MR first on the first click, and the QAP column the smallest
// (the worst stream first), the next click reverses; q's undefined MR and
// QAP ("–") stay last either way (atk25's F4 and F7).
func TestReportOverviewSortsInBrowser(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		t.Skip("no chromium in PATH (apt-get install -y chromium): the report's browser test did not run")
	}
	dir := t.TempDir()
	rep := filepath.Join(dir, "r.html")
	code, _, errOut := runCmd("--report", rep, "-d", "fixed", "--points", "2", "--no-progress", writeSortTrace(t))
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(rep)
	require.NoError(t, err)
	page := string(b)
	require.Equal(t, 1, strings.Count(page, "</body>"))
	// Columns: 0 stream, 5 MR, 6 QAP.
	page = strings.Replace(page, "</body>", fmt.Sprintf(clickScript, "0, 0, 5, 5, 6, 6"), 1)
	clicked := filepath.Join(dir, "clicked.html")
	require.NoError(t, os.WriteFile(clicked, []byte(page), 0o644))

	dom, _ := headless(t, bin, dir)("--virtual-time-budget=5000", "--dump-dom", "file://"+clicked)
	body := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	require.Contains(t, body, `data-ready="1"`, "the page's script ran to its end")
	assert.NotContains(t, body, "data-errors", "no script error")
	m := regexp.MustCompile(`data-orders="([^"]*)"`).FindStringSubmatch(body)
	require.NotNil(t, m, "the clicks ran: %s", body)
	orders := strings.Split(html.UnescapeString(m[1]), "\n")
	require.Len(t, orders, 6)
	assert.Regexp(t, `^p2=\S+ p9=\S+ p10=\S+ p100=\S+ q=\S+$`, orders[0], "natural order")
	assert.Regexp(t, `^q=\S+ p100=\S+ p10=\S+ p9=\S+ p2=\S+$`, orders[1], "reversed")
	// MR: p10's 3 mistakes, p9's 2, p2's 1, p100's none, q undefined.
	assert.Regexp(t, `^p10=\S+ p9=\S+ p2=\S+ p100=0 q=–$`, orders[2], "MR: the largest first")
	assert.Regexp(t, `^p100=0 p2=\S+ p9=\S+ p10=\S+ q=–$`, orders[3], "MR reversed, q still last")
	assert.Regexp(t, `^p10=\S+ p9=\S+ p2=\S+ p100=1\.000000 q=–$`, orders[4], "QAP: the smallest first")
	assert.Regexp(t, `^p100=1\.000000 p2=\S+ p9=\S+ p10=\S+ q=–$`, orders[5], "QAP reversed, q still last")
}
