package main

import (
	"fmt"
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

// writeSendersTrace writes n senders p0…p(n−1) of 20 s at Δ = 100 ms
// into one fdkit file, p7 losing heartbeats in an outage of 3 s (seeds
// 121500401 + i).
func writeSendersTrace(t *testing.T, n int) string {
	t.Helper()
	var streams [][]trace.Record
	for i := range n {
		c := trace.GenConfig{Sender: fmt.Sprintf("p%d", i), Interval: 100 * time.Millisecond, Duration: 20 * time.Second,
			Delay: trace.Delay{Dist: trace.DelayNormal, Mean: 10 * time.Millisecond, SD: 2 * time.Millisecond}}
		if i == 7 {
			c.Outages = []trace.Period{{At: 10 * time.Second, Length: 3 * time.Second}}
		}
		recs, err := trace.Generate(c, trace.NewRand(121500401+uint64(i)))
		require.NoError(t, err)
		streams = append(streams, recs)
	}
	return writeMergedTrace(t, "s12.fdkit", streams)
}

// writeMergedTrace writes the streams, merged in arrival order, to a
// fresh fdkit trace (Δ = 100 ms) named name and returns its path.
func writeMergedTrace(t *testing.T, name string, streams [][]trace.Record) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := trace.NewWriter(f, trace.Header{Interval: 100 * time.Millisecond}, trace.NoCompression)
	require.NoError(t, err)
	for _, r := range trace.Merge(streams...) {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	return path
}

// With many senders in one input the report lists them in natural order
// (p2 before p10) under their sender names alone, and begins with an
// overview, a row per sender, where the lossy one stands out (user48's
// F34).
func TestReportOverviewManySenders(t *testing.T) {
	path := writeSendersTrace(t, 12)
	rep := filepath.Join(t.TempDir(), "r.html")
	code, _, errOut := runCmd("--report", rep, "-d", "chen", "--points", "2", "--no-progress", path)
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(rep)
	require.NoError(t, err)
	page := string(b)

	nav := regexp.MustCompile(`(?s)<nav>(.*?)</nav>`).FindStringSubmatch(page)
	require.NotNil(t, nav)
	labels := regexp.MustCompile(`<a href="#(s\d+)">([^<]*)</a>`).FindAllStringSubmatch(nav[1], -1)
	var want, got []string
	for i := range 12 {
		want = append(want, fmt.Sprintf("s%d sender p%d", i, i))
	}
	for _, l := range labels {
		got = append(got, l[1]+" "+l[2])
	}
	assert.Equal(t, want, got, "natural order, no file name in the labels")
	// The sections follow the same order.
	var titles []string
	for _, m := range regexp.MustCompile(`<h2>s12\.fdkit, sender (p\d+)</h2>`).FindAllStringSubmatch(page, -1) {
		titles = append(titles, m[1])
	}
	assert.Equal(t, []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10", "p11"}, titles)

	ov := regexp.MustCompile(`(?s)<table class="sortable overview">(.*?)</table>`).FindStringSubmatch(page)
	require.NotNil(t, ov)
	assert.Contains(t, ov[1], "else the first detector of the table (chen) at its default setting")
	rows := regexp.MustCompile(`<tr><td data-v="\d+"><a href="#(s\d+)">([^<]*)</a></td>(.*?)</tr>`).FindAllStringSubmatch(ov[1], -1)
	require.Len(t, rows, 12)
	cellRe := regexp.MustCompile(`<td[^>]*>([^<]*)</td>`)
	overview := map[string][]string{}
	for _, r := range rows {
		var cells []string
		for _, c := range cellRe.FindAllStringSubmatch(r[3], -1) {
			cells = append(cells, c[1])
		}
		overview[r[2]] = cells
	}
	// p7 lost the 30 heartbeats of its 3 s outage (15 % of 200), the
	// others none. Its window shrinks to a quarter of its 170 heartbeats
	// (n = 42), so the evaluated time is about 19.9 − 4.2 = 15.7 s: one
	// mistake of about 2.9 s (the outage less the freshness point's lead
	// α + delay past the last heartbeat) gives MR ≈ 1/15.7 and QAP ≈
	// 1 − 2.9/15.7.
	assert.Equal(t, []string{"170", "15.00 %", "chen", "α=100ms n=42", "0.0637 &#43;0.29/−0.064", "0.815236 &#43;0.184764/−0.268357", "210.2 ±0.1"}, overview["sender p7"])
	assert.Equal(t, []string{"200", "0.00 %", "chen", "α=100ms n=50", "0 (≤0.2)", "1.000000", "209.9 ±0.1"}, overview["sender p0"])
	for i := range 12 {
		if i != 7 {
			row := overview[fmt.Sprintf("sender p%d", i)]
			require.Len(t, row, 7)
			assert.Equal(t, []string{"200", "0.00 %", "chen", "α=100ms n=50", "0 (≤0.2)", "1.000000"}, row[:6], i)
		}
	}
	// With targets, the verdict's best at its operating point.
	code, _, errOut = runCmd("--report", rep, "--force", "-d", "chen", "--points", "2", "--no-progress", "--qap-min", "0.5", path)
	require.Equal(t, 0, code, errOut)
	b, err = os.ReadFile(rep)
	require.NoError(t, err)
	ov = regexp.MustCompile(`(?s)<table class="sortable overview">(.*?)</table>`).FindStringSubmatch(string(b))
	require.NotNil(t, ov)
	assert.Equal(t, 12, strings.Count(ov[1], "<td>chen (verdict’s best)</td>"))
	// One stream: no navigation, no overview.
	code, _, errOut = runCmd("--report", rep, "--force", "-d", "chen", "--points", "2", "--no-progress", "--sender", "p7", path)
	require.Equal(t, 0, code, errOut)
	b, err = os.ReadFile(rep)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "<nav>")
	assert.NotContains(t, string(b), "<h2>Overview</h2>")
}

// The printed tables, table.csv, table.json, curves.csv and the report
// list the streams in one order, the natural one (trace.CompareSenders:
// p2 before p10); stdout, CSV and JSON had decimal ids as numbers up to
// 2^64 and the rest as text (p10 before p2; atk25's F7).
func TestStreamOrderEverywhere(t *testing.T) {
	path := writeSendersTrace(t, 12)
	out := filepath.Join(t.TempDir(), "res")
	code, stdout, errOut := runCmd("--out", out, "-d", "fixed", "--points", "2", "--no-progress", path)
	require.Equal(t, 0, code, errOut)
	var want []string
	for i := range 12 {
		want = append(want, fmt.Sprintf("p%d", i))
	}
	var printed []string
	for _, m := range regexp.MustCompile(`(?m)^sender (p\d+) \(`).FindAllStringSubmatch(stdout, -1) {
		printed = append(printed, m[1])
	}
	assert.Equal(t, want, printed, "stdout")
	for _, name := range []string{tableCSVName, curvesCSVName} {
		b, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			s, _, _ := strings.Cut(line, ",")
			if len(got) == 0 || got[len(got)-1] != s {
				got = append(got, s)
			}
		}
		assert.Equal(t, want, got, name)
	}
	b, err := os.ReadFile(filepath.Join(out, tableJSONName))
	require.NoError(t, err)
	var got []string
	for _, m := range regexp.MustCompile(`"stream": "(p\d+)"`).FindAllStringSubmatch(string(b), -1) {
		got = append(got, m[1])
	}
	assert.Equal(t, want, got, tableJSONName)
	b, err = os.ReadFile(filepath.Join(out, indexName))
	require.NoError(t, err)
	got = nil
	for _, m := range regexp.MustCompile(`<h2>s12\.fdkit, sender (p\d+)</h2>`).FindAllStringSubmatch(string(b), -1) {
		got = append(got, m[1])
	}
	assert.Equal(t, want, got, indexName)
}

// With several inputs the report keeps each input's streams together, in
// the natural order of the inputs and then of their senders, even when
// two inputs' names are equal as numbers: it compared the whole titles
// ("in010.fdkit, sender p9" against "in10.fdkit, sender p0") and so
// interleaved in010's and in10's senders (atk26's N9).
func TestReportInputsTogether(t *testing.T) {
	src := writeSendersTrace(t, 12)
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	dir := t.TempDir()
	for _, name := range []string{"in10.fdkit", "in010.fdkit"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	out := filepath.Join(dir, "res")
	code, _, errOut := runCmd("--out", out, "-d", "fixed", "--points", "2", "--no-progress",
		filepath.Join(dir, "in10.fdkit"), filepath.Join(dir, "in010.fdkit"))
	require.Equal(t, 0, code, errOut)
	page, err := os.ReadFile(filepath.Join(out, indexName))
	require.NoError(t, err)
	var files []string
	for _, m := range regexp.MustCompile(`<h2>(in0?10)\.fdkit, sender p\d+</h2>`).FindAllStringSubmatch(string(page), -1) {
		if len(files) == 0 || files[len(files)-1] != m[1] {
			files = append(files, m[1])
		}
	}
	want := []string{"in010", "in10"}
	if trace.CompareSenders(filepath.Join(dir, "in10.fdkit"), filepath.Join(dir, "in010.fdkit")) < 0 {
		want = []string{"in10", "in010"}
	}
	assert.Equal(t, want, files, "each input's 12 sections together, in the inputs' order")
}
