package qos

import (
	"testing"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/trace/tracetest"
	"github.com/stretchr/testify/require"
)

// spooled returns hbs in a trace.Spool (a Source that is not a slice),
// closed at the end of the test.
func spooled(t *testing.T, hbs []detector.Heartbeat) Source {
	t.Helper()
	sp, err := trace.NewSpool(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { sp.Close() })
	for _, hb := range hbs {
		require.NoError(t, sp.Add(hb))
	}
	require.NoError(t, sp.Finish())
	return sp
}

// streamingFamilies are the families of every sweep method: linear one
// pass, Akka's groups, SFD's shared estimator, the shared-state passes
// (Satzger, κ) and replay per point (φ normal with its default rule).
func streamingFamilies(t *testing.T) []Family {
	est := chen.EstimatorConfig{Interval: ms(100), WindowSize: 100}
	fams := append(linearBenchFamilies(), otherBenchFamilies()...)
	for i := range fams {
		fams[i].Values = fams[i].Values[:min(len(fams[i].Values), 6)]
	}
	return append(fams,
		SatzgerFamily(satzger.Config{WindowSize: 100, BootstrapInterval: ms(100)}, []float64{0.5, 0.9, 0.99}),
		KappaFamily(kappa.Config{Estimator: est}, []float64{0.5, 2.5, 8}),
		PhiNormalFamily(phi.NormalConfig{WindowSize: 100}, []float64{1, 4, 8}),
	)
}

// requireSameCurves requires two sweeps of the same families to give the
// same points, field by field (TD percentiles and the per-cell breakdown of
// the confidence intervals included).
func requireSameCurves(t *testing.T, want, got []Curve) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Err, got[i].Err, want[i].Family)
		require.Equal(t, want[i].Points, got[i].Points, want[i].Family)
	}
}

// TestSweepSourceEqualsSlice: a sweep reading a spooled stream equals the
// sweep of the same heartbeats in memory, in every field of every point,
// with the per-heartbeat one-pass methods in use and with them refused
// (bigStream below the stream's length: those families replay per point).
func TestSweepSourceEqualsSlice(t *testing.T) {
	traces := agreementTraces()
	traces["long"] = generate(genOpts{n: 20000, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, dup: 0.002, pause: 0.002, seed: 7})
	fams := streamingFamilies(t)
	checkSourceEqualsSlice(t, traces, fams)
}

// TestSweepSourceEqualsSliceLIP6 is TestSweepSourceEqualsSlice on every
// sender of the LIP6 excerpt.
func TestSweepSourceEqualsSliceLIP6(t *testing.T) {
	path := tracetest.Shared(t, tracetest.LIP6Excerpt)
	recs, err := trace.ReadFile(path, trace.Options{})
	require.NoError(t, err)
	traces := map[string][]detector.Heartbeat{}
	for _, st := range trace.Split(recs) {
		traces["lip6-"+st.Sender] = heartbeats(st.Records)
	}
	checkSourceEqualsSlice(t, traces, streamingFamilies(t))
}

func checkSourceEqualsSlice(t *testing.T, traces map[string][]detector.Heartbeat, fams []Family) {
	for name, hbs := range traces {
		for _, cfg := range []Config{{}, {WarmUp: 37, RecordMistakes: true, Intervals: true}} {
			mem, err := Sweep([]Stream{{Name: name, Heartbeats: hbs}}, fams, SweepOptions{Config: cfg})
			require.NoError(t, err)
			src := spooled(t, hbs)
			for _, big := range []int{bigStream, 100} {
				t.Run(name, func(t *testing.T) {
					defer func(b int) { bigStream = b }(bigStream)
					bigStream = big
					got, err := Sweep([]Stream{{Name: name, Source: src}}, fams, SweepOptions{Config: cfg})
					require.NoError(t, err)
					requireSameCurves(t, mem, got)
				})
			}
		}
	}
}
