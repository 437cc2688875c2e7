package qos

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// In verdict.json an unbounded end of an interval is null, and so is the
// TD interval of a family whose no setting meets the targets (user48 F32:
// they read ±2^63 and [0, 0]); what is written reads back the same.
func TestDurationCIJSON(t *testing.T) {
	v := Verdict{Best: 1, Ops: []OperatingPoint{
		{Family: "bertier", Found: false},
		{Family: "sfd", Found: true, TDCI: DurationCI{421055861, math.MaxInt64}},
		{Family: "chen", Found: true, TDCI: DurationCI{5 * time.Millisecond, 7 * time.Millisecond}},
	}, Rivals: []Rival{{Op: 2, TDDiffCI: DurationCI{math.MinInt64, -27867719}}}}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	s := string(b)
	assert.Contains(t, s, `"family":"bertier","param":"","unit":"","found":false`)
	assert.Contains(t, s, `"td_ci_ns":null`)
	assert.Contains(t, s, `"td_ci_ns":[421055861,null]`)
	assert.Contains(t, s, `"td_ci_ns":[5000000,7000000]`)
	assert.Contains(t, s, `"td_diff_ci_ns":[null,-27867719]`)
	assert.NotContains(t, s, "9223372036854775807")
	var back Verdict
	require.NoError(t, json.Unmarshal(b, &back))
	for i, op := range v.Ops {
		assert.Equal(t, op.TDCI, back.Ops[i].TDCI, op.Family)
		assert.Equal(t, op.Found, back.Ops[i].Found, op.Family)
	}
	assert.Equal(t, v.Rivals[0].TDDiffCI, back.Rivals[0].TDDiffCI)
}

// atk27r's F7: the verdict named chen(restart-jump=100), which a late
// heartbeat made start afresh and warm up again, best at 122 ms against
// chen's 132, the one judged on 1001 heartbeats and the other on 1999,
// without saying so. A rival judged on other heartbeats than the best
// says how many; one judged on as many says nothing of it.
func TestVerdictRivalNamesEvaluated(t *testing.T) {
	op := func(fam string, n int) OperatingPoint {
		return OperatingPoint{Family: fam, Found: true, Point: Point{Result: Result{Evaluated: n}}}
	}
	v := Verdict{Stream: "p", Best: 0, Confirmable: true, Ops: []OperatingPoint{op("chen(restart-jump=100)", 1001), op("chen", 1999), op("jacobson", 1001)},
		Rivals: []Rival{{Op: 1}, {Op: 2}}}
	out := v.String()
	assert.Contains(t, out, "vs chen ")
	assert.Contains(t, out, "; judged on 1999 heartbeats against the best's 1001 (a longer warm-up, or one again after a sender restart, left some out of one of them: the two were not measured on the same heartbeats)")
	assert.Equal(t, 1, strings.Count(out, "judged on"), "jacobson, judged on as many as the best, says nothing of it")
}
