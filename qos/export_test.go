package qos

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// undefinedCurves holds three points: one with mistakes (everything
// defined), one without a mistake (E[TM], E[TMR], E[TG] undefined) and one
// without observed time (MR and QAP undefined too).
func undefinedCurves() []Curve {
	td := TDStats{Mean: 120 * time.Millisecond, P50: 110 * time.Millisecond, P99: 200 * time.Millisecond, Max: 250 * time.Millisecond}
	withMistakes := Result{Records: 100, Evaluated: 90, Span: 9 * time.Second, Mistakes: 3, Suspected: 300 * time.Millisecond,
		MRPerSecond: 3.0 / 9, QAP: 1 - 0.3/9, MeanTM: 100 * time.Millisecond, MeanTMR: 3 * time.Second, MeanTG: 2900 * time.Millisecond,
		TD: td, LastTD: 130 * time.Millisecond, TDBasis: TDSend}
	noMistake := withMistakes
	noMistake.Mistakes, noMistake.Suspected, noMistake.MRPerSecond, noMistake.QAP = 0, 0, 0, 1
	noMistake.MeanTM, noMistake.MeanTMR, noMistake.MeanTG = 0, 0, 0
	noTime := noMistake
	noTime.Evaluated, noTime.Span = 1, 0
	return []Curve{{Stream: "s", Family: "fixed", Param: "T", Unit: "ms", Method: OnePass, Points: []Point{
		{Value: 1, Result: withMistakes}, {Value: 2, Result: noMistake}, {Value: 3, Result: noTime}}}}
}

// Undefined metrics are empty CSV cells, never 0: a 0 for E[TMR] reads as
// "mistakes all the time".
func TestCSVLeavesUndefinedEmpty(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, undefinedCurves()))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 4)
	col := func(row int, name string) string { return rows[row][slices.Index(csvHeader, name)] }
	assert.Equal(t, "100.000000", col(1, "mean_tm_ms"))
	assert.Equal(t, "3000.000000", col(1, "mean_tmr_ms"))
	assert.Equal(t, "2900.000000", col(1, "mean_tg_ms"))
	for _, name := range []string{"mean_tm_ms", "mean_tmr_ms", "mean_tg_ms"} {
		assert.Equal(t, "", col(2, name), name)
		assert.Equal(t, "", col(3, name), name)
	}
	assert.Equal(t, "0", col(2, "mr_per_s"), "no mistake in observed time: MR is a measured 0")
	assert.Equal(t, "1", col(2, "qap"))
	assert.Equal(t, "", col(3, "mr_per_s"), "no observed time")
	assert.Equal(t, "", col(3, "qap"))
	assert.Equal(t, "120.000000", col(3, "td_mean_ms"), "one evaluated heartbeat has a TD")
	assert.Equal(t, "0", col(3, "mistakes"))
}

// Undefined metrics are null in JSON, and read back as the values Result
// holds for them.
func TestJSONUndefinedIsNull(t *testing.T) {
	curves := undefinedCurves()
	var buf bytes.Buffer
	require.NoError(t, WriteJSON(&buf, curves))
	var raw []struct {
		Points []map[string]any `json:"points"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &raw))
	pts := raw[0].Points
	require.Len(t, pts, 3)
	assert.Equal(t, 1.0, pts[0]["value"])
	assert.Equal(t, 3e9, pts[0]["mean_tmr_ns"])
	assert.Equal(t, 90.0, pts[0]["evaluated"])
	for _, k := range []string{"mean_tm_ns", "mean_tmr_ns", "mean_tg_ns"} {
		for i := 1; i < 3; i++ {
			v, ok := pts[i][k]
			assert.True(t, ok, "%s present", k)
			assert.Nil(t, v, "point %d %s", i, k)
		}
	}
	assert.Equal(t, 0.0, pts[1]["mr_per_second"])
	assert.Nil(t, pts[2]["mr_per_second"])
	assert.Nil(t, pts[2]["qap"])
	assert.NotNil(t, pts[2]["td"])

	var back []Curve
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	assert.Equal(t, curves, back)
}
