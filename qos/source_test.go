package qos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/trace/tracetest"
	"github.com/fdkit/fdkit/twowfd"
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

// streamingFamilies are the families of every sweep method, each of
// fdreplay's: linear one pass, Akka's groups, SFD's shared estimator, the
// shared-state passes (Satzger, κ) and the normal φ with its default rule
// (grouped, or replay per point once its thresholds part).
func streamingFamilies(t *testing.T) []Family {
	est := chen.EstimatorConfig{Interval: ms(100), WindowSize: 100}
	fams := append(linearBenchFamilies(), otherBenchFamilies()...)
	for i := range fams {
		fams[i].Values = fams[i].Values[:min(len(fams[i].Values), 6)]
	}
	return append(fams,
		SatzgerFamily(satzger.Config{WindowSize: 100, BootstrapInterval: new(ms(100))}, []float64{0.5, 0.9, 0.99}),
		KappaFamily(kappa.Config{Estimator: est}, []float64{0.5, 2.5, 8}),
		PhiNormalFamily(phi.NormalConfig{WindowSize: 100}, []float64{1, 4, 8}),
		TwoWFDFamily(twowfd.Config{Interval: ms(100), LongWindowSize: 100}, []time.Duration{ms(1), ms(30), ms(300)}),
	)
}

// requireSameCurves requires two sweeps of the same families to give the
// same points, field by field (TD percentiles and the per-cell breakdown of
// the confidence intervals included).
func requireSameCurves(t *testing.T, want, got []Curve) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Err.Error(), got[i].Err.Error(), want[i].Family)
		w, g := want[i].Points, got[i].Points
		if want[i].Method == OnePass {
			// A linear family keeps its one-pass method past Spill.InMemory
			// (its per-heartbeat data spilled). Akka's and SFD's
			// families may replay per point there, equal in every field.
			require.Equal(t, Method(OnePass), got[i].Method, want[i].Family)
		}
		require.Equal(t, w, g, want[i].Family)
	}
}

// TestSweepSourceEqualsSlice: a sweep reading a spooled stream equals the
// sweep of the same heartbeats in memory, in every field of every point,
// with the per-heartbeat one-pass methods in use, past Spill.InMemory (the
// linear families' per-heartbeat data spilled to a file and read back by
// linearCurve.fromSpill; the grouped φ passes read the spool as they go,
// their forms in files past Spill.GroupBytes; SFD's family replays per point), and
// with the replays' per-heartbeat data spilled to a file (Spill.After below
// the stream's length: TD percentiles by selectStream).
func TestSweepSourceEqualsSlice(t *testing.T) {
	traces := agreementTraces()
	n := 20000
	if testing.Short() {
		n = 6000 // past every limit the test lowers, in a fraction of the time
	}
	traces["long"] = generate(genOpts{n: n, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, dup: 0.002, pause: 0.002, seed: 7})
	// A sender stopped for 20 s (its sequence numbers go on where they
	// stopped): Chen's EA lags its arrivals for a window, so TD is floored
	// at the delay (linearCurve.floor) by seconds at the small margins.
	stopped := generate(genOpts{n: 3000, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, seed: 8})
	for k := range stopped {
		if stopped[k].Seq >= 1500 {
			stopped[k].Sent += 20 * time.Second
			stopped[k].Arrival += 20 * time.Second
		}
	}
	traces["stopped"] = stopped
	fams := streamingFamilies(t)
	checkSourceEqualsSlice(t, traces, fams)
}

// TestSweepSourceEqualsSliceLIP6 is TestSweepSourceEqualsSlice on every
// sender of the LIP6 excerpt (two of them with -short).
func TestSweepSourceEqualsSliceLIP6(t *testing.T) {
	path := tracetest.Shared(t, tracetest.LIP6Excerpt)
	recs, err := trace.ReadFile(path, trace.ReaderConfig{})
	require.NoError(t, err)
	traces := map[string][]detector.Heartbeat{}
	for _, st := range trace.Split(recs) {
		if testing.Short() && st.Sender != "4" && st.Sender != "7" {
			continue // -short: the messiest sender and the cleanest
		}
		traces["lip6-"+st.Sender] = heartbeats(st.Records)
	}
	checkSourceEqualsSlice(t, traces, streamingFamilies(t))
}

func checkSourceEqualsSlice(t *testing.T, traces map[string][]detector.Heartbeat, fams []Family) {
	for name, hbs := range traces {
		for _, cfg := range []Config{{}, {WarmUp: 37, RecordMistakes: true, Intervals: true}} {
			mem, err := Sweep([]Stream{{Name: name, Heartbeats: hbs}}, fams, SweepConfig{Config: cfg})
			require.NoError(t, err)
			src := spooled(t, hbs)
			for _, sp := range []Spill{{}, {InMemory: 100, After: 1 << 30, GroupBytes: 1 << 30}, {InMemory: 100, After: 64, GroupBytes: 1000, Dir: t.TempDir()}} {
				t.Run(name, func(t *testing.T) {
					scfg := cfg
					scfg.Spill = sp
					got, err := Sweep([]Stream{{Name: name, Source: src}}, fams, SweepConfig{Config: scfg})
					require.NoError(t, err)
					requireSameCurves(t, mem, got)
					for i := range mem {
						if mem[i].Method == OnePassGroups {
							require.Equal(t, Method(OnePassGroups), got[i].Method, "%s reads the spool as it goes, its forms in files past Spill.GroupBytes", mem[i].Family)
						}
					}
				})
			}
		}
	}
}

// selectKeys returns exactly the keys of both ranks and the greatest key of
// each set, over several sets at once, with floats as keys (floatKey) and
// windows narrowed by histogram passes (more than selectCollect values).
func TestSelectKeysFloats(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 2*selectCollect + 11
	base := make([]float64, n)
	for k := range base {
		base[k] = 100e6 + rng.NormFloat64()*3e6
		if k%97 == 0 {
			base[k] = -base[k] // negative values, far from the others
		}
	}
	ps := []float64{-2, 0, 0.5, 3e9}
	val := func(i, k int) float64 { return base[k] + float64(k%7)*ps[i] }
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	keys := make([]uint64, 1000)
	got, mx, err := selectKeys(n, len(ps), ranks, func(want func(int) bool, fn func(int, []uint64)) error {
		for a := 0; a < n; a += len(keys) {
			m := min(len(keys), n-a)
			for i := range ps {
				if !want(i) {
					continue
				}
				for k := range m {
					keys[k] = floatKey(val(i, a+k))
				}
				fn(i, keys[:m])
			}
		}
		return nil
	})
	require.NoError(t, err)
	for i := range ps {
		sorted := make([]float64, n)
		for k := range sorted {
			sorted[k] = val(i, k)
		}
		slices.Sort(sorted)
		require.Equal(t, sorted[ranks[0]], keyFloat(got[i][0]), "p=%g", ps[i])
		require.Equal(t, sorted[ranks[1]], keyFloat(got[i][1]), "p=%g", ps[i])
		require.Equal(t, sorted[n-1], keyFloat(mx[i]), "p=%g", ps[i])
	}
	for _, v := range []float64{math.Inf(-1), -1e300, -1, math.Copysign(0, -1), 0, 1e-300, 2, math.Inf(1)} {
		require.Equal(t, v, keyFloat(floatKey(v)))
	}
	require.Less(t, floatKey(-1), floatKey(-0.5))
	require.Less(t, floatKey(-0.5), floatKey(0))
	require.Less(t, floatKey(0), floatKey(1e-300))
}

// selectStream returns exactly the values of both ranks, whatever the
// distribution: ties, extremes of the int64 range, far clusters, and
// windows small enough to be kept at once or not. Knowing the range, it
// reads TD-like values twice at most.
func TestSelectStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gens := map[string]func(i int) int64{
		"equal":    func(int) int64 { return 42 },
		"extremes": func(i int) int64 { return []int64{math.MinInt64, math.MaxInt64, 0, -1}[i%4] },
		"uniform":  func(int) int64 { return rng.Int64() - math.MaxInt64/2 },
		"clusters": func(i int) int64 {
			if i%3 == 0 {
				return 1e15 + rng.Int64N(100)
			}
			return 5e7 + rng.Int64N(1e6)
		},
		"td": func(int) int64 { return int64(100e6 + rng.NormFloat64()*3e6) },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 99, 1000, 3*selectCollect + 7} {
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = gen(i)
			}
			ranks := [2]int{rank(0.50, n), rank(0.99, n)}
			passes := 0
			got, err := selectStream(n, ranks, slices.Min(vals), slices.Max(vals), func(fn func(int64)) error {
				passes++
				for _, v := range vals {
					fn(v)
				}
				return nil
			})
			require.NoError(t, err)
			sorted := slices.Clone(vals)
			slices.Sort(sorted)
			require.Equal(t, [2]int64{sorted[ranks[0]], sorted[ranks[1]]}, got, "%s n=%d", name, n)
			require.LessOrEqual(t, passes, 7, "%s n=%d", name, n)
			if name == "td" || name == "equal" {
				require.LessOrEqual(t, passes, 2, "%s n=%d", name, n)
			}
		}
	}
}
