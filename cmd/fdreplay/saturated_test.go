package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A setting whose τ saturates at the largest time.Duration never suspects:
// it is left out with a message, never printed as a TD of 292 years
// (user44's F10: "TD mean 9223372024404.8 ±2999.0 ms").
func TestSaturatedSettingsLeftOut(t *testing.T) {
	var b strings.Builder
	for k := range 200 {
		sent := int64(k) * 100_000_000
		fmt.Fprintf(&b, "4 %d %d %d 3\n", k, sent, sent+5_000_000+int64(k%7)*1_000_000)
	}
	trace := writeFile(t, "t.txt", b.String())
	why := "never suspects: the freshness point reached the largest time.Duration (2^63−1 ns, 292 years), so TD is no measurement; give a smaller setting"

	code, out, errOut := runCmd("-d", "fixed(timeout=9223372036854775807ns),jacobson(k=1e300),kappa(threshold=1e300),chen", trace)
	require.Equal(t, 0, code, errOut)
	assert.NotRegexp(t, `922337\d{7}\.\d`, out, "no TD of 292 years in ms")
	for _, d := range []string{"fixed(timeout=9223372036854775807ns)", "jacobson(k=1e300)", "kappa(threshold=1e300)"} {
		assert.Contains(t, errOut, "fdreplay: warning: 4 "+d+": "+why+"\n")
		assert.Regexp(t, `\| `+regexp.QuoteMeta(d)+` +\|[^|]+\| +– \|`, out, "a row without a result")
	}
	assert.Regexp(t, `\| chen +\| α=100ms n=50 +\| +150 \|`, out, "the others are measured")

	// A sweep whose range reaches the longest duration loses the points
	// that saturate, with a warning; the others are kept.
	dir := filepath.Join(t.TempDir(), "o")
	code, _, errOut = runCmd("-d", "chen", "--range", "chen=0:9223372036854775807ns", "--points", "5", "--no-progress", "--out", dir, trace)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "fdreplay: warning: 4 chen: 1 setting(s) left out, the first alpha=9.22337e+12: they never suspect: the freshness point reached")
	curves, err := os.ReadFile(filepath.Join(dir, "curves.csv"))
	require.NoError(t, err)
	assert.Equal(t, 5, strings.Count(string(curves), "\n"), "the header and four settings:\n%s", curves)
	assert.NotContains(t, string(curves), ",922337")
}

// tdBases.saturated catches every saturated freshness point: TD_k =
// MaxInt64 − b_k reaches MaxInt64 − max b; below that TD is measured.
func TestTDBasesSaturated(t *testing.T) {
	const maxD = math.MaxInt64
	b := tdBases{sent: 20e9, arrival: 21e9, hasSent: true}
	res := func(basis qos.TDBasis, tdMax, off int64) qos.Result {
		r := qos.Result{Evaluated: 3, TDBasis: basis}
		r.TD.Max, r.DelayOffset = time.Duration(tdMax), time.Duration(off)
		return r
	}
	assert.True(t, b.saturated(res(qos.TDSend, maxD-20e9, 0)))
	assert.True(t, b.saturated(res(qos.TDSend, maxD-5e9, 0)), "an earlier σ_k")
	assert.False(t, b.saturated(res(qos.TDSend, maxD-20e9-1, 0)))
	assert.False(t, b.saturated(res(qos.TDSend, 3e9, 0)))
	assert.True(t, b.saturated(res(qos.TDArrival, maxD-21e9+2e6, 2e6)), "A_k − d̄")
	assert.False(t, b.saturated(res(qos.TDArrival, maxD-21e9-1, 0)))
	assert.False(t, b.saturated(qos.Result{TDBasis: qos.TDSend}), "nothing evaluated")
	neg := tdBases{sent: -5, arrival: -5, hasSent: true}
	assert.True(t, neg.saturated(res(qos.TDSend, maxD, 0)))
	assert.False(t, neg.saturated(res(qos.TDSend, maxD-1, 0)))
	assert.False(t, tdBases{arrival: 1e9}.saturated(res(qos.TDSend, maxD, 0)), "send-based without send times: cannot be")
}

// The bases come from the stream's trace.Stats, read when it was loaded,
// not from another pass over its heartbeats (rvM's item 1): an input
// whose heartbeats are gone has its saturated table row and sweep point
// caught all the same.
func TestSaturationFromStats(t *testing.T) {
	const maxD = math.MaxInt64
	in := &input{name: "p"}
	in.stats.HasSent, in.stats.LastSent, in.stats.HasArrival, in.stats.LastArrival = true, 20e9, true, 21e9
	assert.Equal(t, tdBases{sent: 20e9, arrival: 21e9, hasSent: true}, basesOf(in))
	point := func(v float64, tdMax time.Duration) qos.Point {
		r := qos.Result{Evaluated: 3, TDBasis: qos.TDSend}
		r.TD.Max = tdMax
		return qos.Point{Value: v, Result: r}
	}
	table := []qos.Curve{{Stream: "p", Family: "fixed", Points: []qos.Point{point(0, maxD-20e9)}}}
	curves := []qos.Curve{{Stream: "p", Family: "chen", Param: "alpha", Points: []qos.Point{point(1, 3e9), point(2, maxD-20e9)}}}
	notes := saturation([]streamRun{{in: in}}, table, curves)
	assert.Len(t, notes, 2)
	assert.Nil(t, table[0].Points)
	assert.ErrorContains(t, table[0].Err, "never suspects")
	assert.Equal(t, []qos.Point{point(1, 3e9)}, curves[0].Points)
}
