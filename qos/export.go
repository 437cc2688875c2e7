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
// mean_tm_ms, mean_tmr_ms, mean_tg_ms, td_mean_ms, td_p50_ms, td_p99_ms,
// td_max_ms, td_basis (send or arrival), delay_offset_ms (d̄ added to
// arrival-based TD), then the 95 % confidence intervals mr_ci_lo, mr_ci_hi,
// qap_ci_lo, qap_ci_hi, td_mean_ci_lo_ms, td_mean_ci_hi_ms (empty without
// Result.CI). A metric that is undefined for the point is an empty cell,
// never 0 (which would read as a measurement): E[TM], E[TMR] and E[TG]
// without a mistake, MR and QAP without observed time (Span 0), TD without
// an evaluated heartbeat.
func WriteCSV(w io.Writer, curves []Curve) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("qos: writing CSV: %w", err)
	}
	for _, c := range curves {
		for _, p := range c.Points {
			r := p.Result
			observed, mistaken, evaluated := r.defined()
			row := []string{
				c.Stream, c.Family, c.Param, c.Unit, ffloat(p.Value), string(c.Method),
				strconv.Itoa(r.Records), strconv.Itoa(r.Stale), strconv.Itoa(r.WarmUp), strconv.Itoa(r.Evaluated),
				strconv.FormatFloat(r.Span.Seconds(), 'f', 6, 64),
				strconv.Itoa(r.Mistakes), fms(r.Suspected), ifDef(observed, ffloat(r.MRPerSecond)), ifDef(observed, ffloat(r.QAP)),
				ifDef(mistaken, fms(r.MeanTM)), ifDef(mistaken, fms(r.MeanTMR)), ifDef(mistaken, fms(r.MeanTG)),
				ifDef(evaluated, fms(r.TD.Mean)), ifDef(evaluated, fms(r.TD.P50)), ifDef(evaluated, fms(r.TD.P99)), ifDef(evaluated, fms(r.TD.Max)),
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
// in nanoseconds, fields suffixed _ns; MR per second). Undefined metrics are
// null, as in WriteCSV (see Result.MarshalJSON).
func WriteJSON(w io.Writer, curves []Curve) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(curves); err != nil {
		return fmt.Errorf("qos: writing JSON: %w", err)
	}
	return nil
}

// ifDef returns s when the metric is defined and "" otherwise.
func ifDef(defined bool, s string) string {
	if !defined {
		return ""
	}
	return s
}

// defined tells which of r's metrics are defined: MR and QAP need observed
// time (Span > 0; with none, Result holds MR 0 and QAP 1 by convention),
// E[TM], E[TMR] and E[TG] need a mistake (they are means over mistakes), TD
// needs an evaluated heartbeat.
func (r Result) defined() (observed, mistaken, evaluated bool) {
	return r.Span > 0, r.Mistakes > 0, r.Evaluated > 0
}

// resultFields is Result without its JSON methods.
type resultFields Result

// resultJSON is the JSON form of Result: the metrics that can be undefined
// are pointers, nil (null) when undefined. Its fields shadow those of the
// embedded resultFields with the same JSON names.
type resultJSON struct {
	resultFields
	MRPerSecond *float64       `json:"mr_per_second"`
	QAP         *float64       `json:"qap"`
	MeanTM      *time.Duration `json:"mean_tm_ns"`
	MeanTMR     *time.Duration `json:"mean_tmr_ns"`
	MeanTG      *time.Duration `json:"mean_tg_ns"`
	TD          *TDStats       `json:"td"`
	LastTD      *time.Duration `json:"last_td_ns"`
}

// MarshalJSON writes r with null for its undefined metrics (see WriteCSV):
// mean_tm_ns, mean_tmr_ns and mean_tg_ns without a mistake, mr_per_second
// and qap without observed time, td and last_td_ns without an evaluated
// heartbeat. A 0 there would read as "no time in mistakes" or "constant
// mistakes".
func (r Result) MarshalJSON() ([]byte, error) {
	observed, mistaken, evaluated := r.defined()
	j := resultJSON{resultFields: resultFields(r)}
	if observed {
		j.MRPerSecond, j.QAP = &r.MRPerSecond, &r.QAP
	}
	if mistaken {
		j.MeanTM, j.MeanTMR, j.MeanTG = &r.MeanTM, &r.MeanTMR, &r.MeanTG
	}
	if evaluated {
		j.TD, j.LastTD = &r.TD, &r.LastTD
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes. A null metric takes the value
// Result holds when it is undefined: 0, except QAP, which is 1 after an
// evaluated heartbeat.
func (r *Result) UnmarshalJSON(b []byte) error {
	var j resultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Result(j.resultFields)
	undefQAP := 0.0 // the zero Result
	if r.Evaluated > 0 {
		undefQAP = 1 // qos's convention for a replay without observed time
	}
	r.MRPerSecond, r.QAP = deref(j.MRPerSecond, 0), deref(j.QAP, undefQAP)
	r.MeanTM, r.MeanTMR, r.MeanTG = deref(j.MeanTM, 0), deref(j.MeanTMR, 0), deref(j.MeanTG, 0)
	r.TD, r.LastTD = deref(j.TD, TDStats{}), deref(j.LastTD, 0)
	return nil
}

func deref[T any](p *T, undefined T) T {
	if p == nil {
		return undefined
	}
	return *p
}

// MarshalJSON writes the point as one object: "value" and then the fields of
// its Result (needed because Result's own MarshalJSON would otherwise be
// promoted and drop the value).
func (p Point) MarshalJSON() ([]byte, error) {
	v, err := json.Marshal(p.Value)
	if err != nil {
		return nil, err
	}
	r, err := p.Result.MarshalJSON()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(v)+len(r)+10)
	out = append(out, `{"value":`...)
	out = append(out, v...)
	if len(r) > 2 {
		out = append(out, ',')
	}
	return append(out, r[1:]...), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Point) UnmarshalJSON(b []byte) error {
	var v struct {
		Value float64 `json:"value"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p.Value = v.Value
	return p.Result.UnmarshalJSON(b)
}
