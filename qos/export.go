package qos

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// csvHeader lists the CSV columns. Durations are in milliseconds, the span
// in seconds, MR per second.
var csvHeader = []string{
	"stream", "family", "param", "unit", "value", "method",
	"records", "stale", "warm_up", "evaluated", "span_s",
	"mistakes", "suspected_ms", "mr_per_s", "qap",
	"mean_tm_ms", "mean_tmr_ms", "mean_tg_ms",
	"td_mean_ms", "td_p50_ms", "td_p99_ms", "td_max_ms",
	"td_basis", "delay_offset_ms",
	"mr_ci_lo", "mr_ci_hi", "qap_ci_lo", "qap_ci_hi", "td_mean_ci_lo_ms", "td_mean_ci_hi_ms",
}

func fms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 6, 64)
}

func ffloat(x float64) string { return strconv.FormatFloat(x, 'g', 10, 64) }

// WriteCSV writes one row per point of every curve, with a header row.
// Columns: stream, family, param, unit, value, method, records, stale,
// warm_up, evaluated, span_s, mistakes, suspected_ms, mr_per_s, qap,
// mean_tm_ms, mean_tmr_ms, mean_tg_ms (0 when there are no mistakes),
// td_mean_ms, td_p50_ms, td_p99_ms, td_max_ms, td_basis (send or arrival),
// delay_offset_ms (d̄ added to arrival-based TD), then the 95 % confidence
// intervals mr_ci_lo, mr_ci_hi, qap_ci_lo, qap_ci_hi, td_mean_ci_lo_ms,
// td_mean_ci_hi_ms (empty without Result.CI).
func WriteCSV(w io.Writer, curves []Curve) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("qos: writing CSV: %w", err)
	}
	for _, c := range curves {
		for _, p := range c.Points {
			r := p.Result
			row := []string{
				c.Stream, c.Family, c.Param, c.Unit, ffloat(p.Value), string(c.Method),
				strconv.Itoa(r.Records), strconv.Itoa(r.Stale), strconv.Itoa(r.WarmUp), strconv.Itoa(r.Evaluated),
				strconv.FormatFloat(r.Span.Seconds(), 'f', 6, 64),
				strconv.Itoa(r.Mistakes), fms(r.Suspected), ffloat(r.MRPerSecond), ffloat(r.QAP),
				fms(r.MeanTM), fms(r.MeanTMR), fms(r.MeanTG),
				fms(r.TD.Mean), fms(r.TD.P50), fms(r.TD.P99), fms(r.TD.Max),
				string(r.TDBasis), fms(r.DelayOffset),
			}
			if ci := r.CI; ci != nil {
				row = append(row, ffloat(ci.MRPerSecond[0]), ffloat(ci.MRPerSecond[1]), ffloat(ci.QAP[0]), ffloat(ci.QAP[1]),
					fms(ci.TDMean[0]), fms(ci.TDMean[1]))
			} else {
				row = append(row, "", "", "", "", "", "")
			}
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("qos: writing CSV: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("qos: writing CSV: %w", err)
	}
	return nil
}

// WriteJSON writes the curves as an indented JSON array of Curve (durations
// in nanoseconds, fields suffixed _ns; MR per second).
func WriteJSON(w io.Writer, curves []Curve) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(curves); err != nil {
		return fmt.Errorf("qos: writing JSON: %w", err)
	}
	return nil
}
