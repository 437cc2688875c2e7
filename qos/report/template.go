package report

import "html/template"

// reportTemplate is the page of Write: everything inline, nothing
// fetched (html/template escapes every value; the SVG plots are built from
// escaped text).
var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; margin: 0 auto; max-width: 1100px; padding: 0 18px 40px; color: #1d1d1f; }
h1 { font-size: 1.5em; margin: 18px 0 4px; }
h2 { font-size: 1.25em; border-bottom: 2px solid #4e79a7; padding-bottom: 2px; margin-top: 34px; }
h3 { font-size: 1.02em; margin: 18px 0 6px; }
code, .cmd { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
.cmd { background: #f4f4f6; padding: 4px 8px; border-radius: 4px; display: inline-block; }
nav a { margin-right: 12px; }
.verdict { white-space: pre-line; background: #eef4fb; border-left: 4px solid #4e79a7; padding: 8px 12px; margin: 10px 0; }
.verdict.none { background: #fdf1f1; border-color: #e15759; }
.warn { background: #fff7e6; border-left: 4px solid #f28e2b; padding: 4px 10px; margin: 4px 0; }
.note { color: #555; margin: 2px 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 6px 0; }
dl.facts dt { color: #555; }
dl.facts dd { margin: 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0; font-variant-numeric: tabular-nums; font-size: 0.93em; }
th, td { padding: 3px 7px; border-bottom: 1px solid #e2e2e6; text-align: right; white-space: nowrap; }
th { background: #f4f4f6; cursor: pointer; user-select: none; }
th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
th.asc::after { content: " ▲"; font-size: 0.75em; }
th.desc::after { content: " ▼"; font-size: 0.75em; }
table.overview td:nth-child(2) { text-align: right; }
table.overview caption { text-align: left; caption-side: top; }
tr.best td { font-weight: 600; background: #eef4fb; }
.sw { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; vertical-align: baseline; }
svg.plot, svg.hist { width: 100%; height: auto; max-width: 980px; display: block; }
svg .area { fill: #fff; stroke: #888; }
svg .grid { stroke: #d6d6da; stroke-width: 0.8; }
svg .grid.minor { stroke: #eeeef0; }
svg .tick { font-size: 10px; fill: #333; }
svg .axis { font-size: 12px; fill: #222; }
svg .legend { font-size: 11px; fill: #222; }
svg .curve { fill: none; stroke-width: 1.5; }
svg .bar { stroke-width: 0.8; opacity: 0.45; }
svg .ring { fill: none; stroke: #000; stroke-width: 1.2; }
svg .bin { fill: #4e79a7; }
svg .axisTick { stroke: #888; }
svg g.pt:hover > *:first-child { stroke: #000; stroke-width: 2; }
.small { font-size: 0.9em; color: #555; }
@media print {
  body { max-width: none; padding: 0; font-size: 10px; }
  .scroll { overflow: visible; }
  table { font-size: 8px; width: 100%; table-layout: auto; }
  th, td { padding: 1px 3px; white-space: normal; }
  svg.plot, svg.hist { max-width: 100%; page-break-inside: avoid; }
}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Command}}<p>Produced by <span class="cmd">{{.Command}}</span></p>{{end}}
<p class="small">TD: time from a crash right after a heartbeat to permanent suspicion (mean over heartbeats). MR: false suspicions per second. QAP: the fraction of time the monitor is right; 1 − QAP is the fraction it wrongly suspects. Smaller TD and MR and larger QAP are better. ± is half the width of a 95 % confidence interval from a block bootstrap over time (+up/−down when the interval is lopsided) (the ends are in curves.csv and curves.json); a detector without mistakes shows a one-sided bound (≤). Click a table header to sort; hover a point for its setting and values. How each figure is measured: fdkit's docs/fdreplay.md (“Reading TD, MR and QAP”) and docs/algorithms.md (“Confidence intervals for TD, MR and QAP”, “Comparing detectors at an operating point”).</p>
{{if gt (len .Streams) 1}}<nav>{{range .Streams}}<a href="#{{.ID}}">{{.Label}}</a>{{end}}</nav>
<h2>Overview</h2>
<div class="scroll"><table class="sortable overview"><caption class="small">{{.OverviewCaption}}</caption><thead><tr><th>stream</th><th>heartbeats</th><th data-first="desc">loss</th><th>detector</th><th>setting</th><th data-first="desc">MR (1/s)</th><th>QAP</th><th data-first="desc">TD mean (ms)</th></tr></thead>
<tbody>{{range $i, $s := .Streams}}<tr><td data-v="{{$i}}"><a href="#{{.ID}}">{{.Label}}</a></td>{{range .Overview}}<td{{if .Key}} data-v="{{.Key}}"{{end}}>{{.Text}}</td>{{end}}</tr>{{end}}</tbody></table></div>{{end}}
{{range .Streams}}
<section id="{{.ID}}">
<h2>{{.Title}}</h2>
<div class="verdict{{if not .VerdictFound}} none{{end}}">{{.Verdict}} <span class="small">{{.TargetsLabel}}: {{.Targets}}.</span></div>
{{if .Holdout}}<div class="scroll"><table class="holdout"><thead><tr>{{range .HoldoutHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>{{range .Holdout}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody></table></div>{{end}}
{{range .Warnings}}<div class="warn">{{.}}</div>{{end}}
<h3>Trace</h3>
<dl class="facts">{{range .Facts}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>{{end}}</dl>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{if .Hist}}<h3>Inter-arrival times</h3>{{.Hist}}{{end}}
{{if .Bursts}}<h3>Loss bursts (runs of consecutive lost heartbeats, by length)</h3>
<table class="sortable"><thead><tr><th>length</th>{{range .Bursts}}<th>{{index . 0}}</th>{{end}}</tr></thead>
<tbody><tr><td>bursts</td>{{range .Bursts}}<td>{{index . 1}}</td>{{end}}</tr></tbody></table>{{end}}
<h3>Every detector at its default setting</h3>
<div class="scroll"><table class="sortable"><thead><tr><th>detector</th><th>setting</th><th>evaluated</th><th>mistakes</th><th>MR (1/s)</th><th>QAP</th><th>TD mean (ms)</th><th>TD p99 (ms)</th><th>E[TM] (ms)</th></tr></thead>
<tbody>{{range .Table}}{{$row := .}}<tr>{{range $i, $c := .Cells}}<td{{if $c.Key}} data-v="{{$c.Key}}"{{end}}>{{if eq $i 0}}<span class="sw" style="background: {{$row.Colour}}"></span>{{end}}{{$c.Text}}</td>{{end}}</tr>{{end}}</tbody></table></div>
{{if .CurveCount}}
<h3>Mistake rate against detection time</h3>
{{if .NoMR}}<p class="note">No swept setting made a mistake: nothing to draw on a log scale.</p>{{else}}{{.MR}}{{end}}
<h3>Unavailability (1 − QAP) against detection time</h3>
{{if .QAP}}{{.QAP}}{{else}}<p class="note">No swept setting ever suspected: nothing to draw on a log scale.</p>{{end}}
<p class="small">{{.CurveCount}} curves, {{.Points}} settings. Lower and further left is better. Bars: 95 % confidence intervals. A ringed marker is a detector with one drawable setting; “(points)” marks a curve whose TD is not monotone in its parameter (drawn unjoined).</p>
{{end}}
{{if .Choices}}
<h3>Tuner: smallest mean TD meeting {{.Targets}}</h3>
<div class="scroll"><table class="sortable"><thead><tr><th>detector</th><th>setting</th><th>targets</th><th>TD mean (ms)</th><th>MR (1/s)</th><th>QAP</th></tr></thead>
<tbody>{{range .Choices}}{{$row := .}}<tr{{if .Best}} class="best"{{end}}>{{range $i, $c := .Cells}}<td{{if $c.Key}} data-v="{{$c.Key}}"{{end}}>{{if eq $i 0}}<span class="sw" style="background: {{$row.Colour}}"></span>{{end}}{{$c.Text}}</td>{{end}}</tr>{{end}}</tbody></table></div>
{{end}}
</section>
{{end}}
<script>
window.addEventListener("error", function (e) {
  document.body.setAttribute("data-errors", (document.body.getAttribute("data-errors") || "") + e.message + "\n");
});
(function () {
  "use strict";
  // A cell's sort key: its data-v as a number (a stream's data-v is its
  // rank in the page's natural order), else its text; null for "–", a
  // value that is undefined (or missing), which sorts last either way.
  function key(td) {
    var v = td.getAttribute("data-v");
    if (v !== null) {
      return parseFloat(v);
    }
    var t = td.textContent.trim();
    return t === "–" ? null : t;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var ths = table.querySelectorAll("thead th");
    ths.forEach(function (th, col) {
      th.addEventListener("click", function () {
        // The first click sorts the way data-first says ("desc": the
        // overview's loss, MR and TD, where more is worse, so that the
        // worst stream comes first), else ascending; each click after
        // reverses.
        var asc = th.classList.contains("asc") ? false : th.classList.contains("desc") ? true : th.getAttribute("data-first") !== "desc";
        ths.forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          if (x === null || y === null) {
            return (x === null) - (y === null);
          }
          var c = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.body.setAttribute("data-ready", "1");
})();
</script>
</body>
</html>
`))
