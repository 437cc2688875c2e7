package spec

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func lookup(t *testing.T, name string) *Algorithm {
	t.Helper()
	f, ok := Lookup(name)
	require.True(t, ok, name)
	return f
}

// A family for a stream of Δ = 100 ms and n = 500: Akka's and Cassandra's
// 1 s-heartbeat settings scaled by Δ/1s (3 s → 300 ms, 100 ms → 10 ms,
// 1 s → 100 ms; Cassandra's 2 s → 2Δ), the fixed timeout 10Δ, SFD at
// SM_1 = Δ and β = Δ/10 with the stream's targets.
func TestForStream(t *testing.T) {
	st := Stream{Interval: 100 * time.Millisecond, Window: 500,
		Targets: qos.Targets{MaxTD: time.Second, NoMistakes: true}, SendTime: true}
	for name, want := range map[string]string{
		"fixed":         "fixed(timeout=1s)",
		"jacobson":      "jacobson",
		"phi-normal":    "phi-normal(window=500)",
		"phi-akka":      "phi-akka(window=500, min-std=10ms, pause=300ms, bootstrap-interval=100ms)",
		"phi-cassandra": "phi-cassandra(window=500, bootstrap-interval=200ms, max-interval=200ms)",
		"chen":          "chen(interval=100ms, window=500)",
		"2w-fd":         "2w-fd(interval=100ms, window=500)",
		"satzger":       "satzger(window=500, bootstrap-interval=100ms)",
		"kappa":         "kappa(interval=100ms, window=500)",
		"sfd":           "sfd(interval=100ms, window=500, sm1=100ms, step=10ms, td-max=1s, mr-max=5e-324, send-time=true)",
	} {
		assert.Equal(t, want, lookup(t, name).ForStream(st).String(), name)
	}
	st.Timeout = 250 * time.Millisecond // --timeout
	assert.Equal(t, "fixed(timeout=250ms)", lookup(t, "fixed").ForStream(st).String())
}

// Table cells name each family's setting by symbol, at its effective
// value: the swept parameter's resolved default (α = Δ), other parameters
// as set, or their documented default text.
func TestBrief(t *testing.T) {
	st := Stream{Interval: 100 * time.Millisecond, Window: 1000}
	for name, want := range map[string]string{
		"fixed":         "T=1s",
		"jacobson":      "K=4",
		"phi-normal":    "Φ=8 n=1000 minσ=μ/100",
		"phi-akka":      "Φ=8 pause=300ms minσ=10ms",
		"phi-cassandra": "Φ=8 cap=200ms",
		"chen":          "α=100ms n=1000",
		"bertier":       "γ=0.1 β=1 φ=4",
		"sfd":           "SM1=100ms β=10ms",
		"2w-fd":         "α=100ms n1=1 n2=1000",
		"satzger":       "θ=0.99 c=0.9 n=1000",
		"kappa":         "K=2.5 n=1000",
	} {
		assert.Equal(t, want, lookup(t, name).ForStream(st).Brief(), name)
	}
}

// Every row is complete: its swept parameter has a default range inside
// its domain, its table cell names parameters it has, and a family with
// scaled parameters says how to scale them.
func TestRowsComplete(t *testing.T) {
	st := Stream{Interval: 20 * time.Millisecond, Window: 100}
	for _, f := range Algorithms() {
		for _, b := range f.brief {
			assert.NotNil(t, f.param(b), "%s: brief names %q", f.Name, b)
		}
		for _, p := range f.Params() {
			if p.Scaled {
				assert.NotNil(t, f.stream, "%s: %s is scaled but the family has no ForStream", f.Name, p.Name)
			}
		}
		if f.Swept == "" {
			continue
		}
		w, err := f.ForStream(st).DefaultSweep(st.Interval)
		require.NoError(t, err, f.Name)
		assert.Less(t, 0.0, w.Lo, f.Name)
		assert.Less(t, w.Lo, w.Hi, f.Name)
		assert.NoError(t, f.CheckRange(w.Lo, w.Hi), f.Name)
	}
}

// The default ranges, worked out for Δ = 50 ms.
func TestDefaultSweep(t *testing.T) {
	for name, want := range map[string]Sweep{
		"fixed":         {Param: "timeout", Lo: 50, Hi: 1500, Log: true},
		"chen":          {Param: "alpha", Lo: 0.5, Hi: 1000, Log: true},
		"phi-akka":      {Param: "threshold", Lo: 0.5, Hi: 16},
		"phi-cassandra": {Param: "threshold", Lo: 0.25, Hi: 16, Log: true},
		"satzger":       {Param: "threshold", Lo: 0.5, Hi: 1},
	} {
		w, err := lookup(t, name).Spec().DefaultSweep(50 * time.Millisecond)
		require.NoError(t, err)
		w.Spec = Spec{}
		assert.Equal(t, want, w, name)
	}
	assert.Equal(t, "Δ/100..20Δ log", lookup(t, "chen").DefaultRange())
	_, err := lookup(t, "bertier").Spec().DefaultSweep(time.Second)
	assert.EqualError(t, err, "bertier has no parameter to sweep")
}

// A sweep range must stay in the swept parameter's domain: the registry's
// range, and what the qos family accepts at each bound.
func TestCheckRange(t *testing.T) {
	for _, c := range []struct {
		family string
		lo, hi float64
		err    string
	}{
		{"chen", 0, 100, ""},
		{"chen", -5, 10, "lower bound -5 out of range: chen's alpha must be ≥ 0"},
		{"jacobson", 0, 4, ""},
		{"phi-akka", 0, 4, "lower bound 0 out of range: phi-akka's threshold must be > 0"},
		{"satzger", 0.5, 2, "upper bound 2 out of range: satzger's threshold must be > 0 and ≤ 1"},
		{"fixed", 0, 1000, "lower bound 0 out of range: fixed's timeout must be > 0"},
		{"phi-normal", 0.2, 3, "lower bound 0.2 out of range: threshold 0.2 is below log10 2 (the crossing would precede the mean)"},
		{"sfd", 0, 1e300, "upper bound 1e+300 ms is beyond the longest duration (2562047h47m16.854775807s)"},
		{"bertier", 1, 2, "bertier has no parameter to sweep"},
	} {
		err := lookup(t, c.family).CheckRange(c.lo, c.hi)
		if c.err == "" {
			assert.NoError(t, err, c.family)
		} else {
			assert.EqualError(t, err, c.err, c.family)
		}
	}
}

// Window sizes are marked as such (commands bound them per sender).
func TestWindowParams(t *testing.T) {
	var got []string
	for _, f := range Algorithms() {
		for _, p := range f.Params() {
			if p.Window {
				got = append(got, f.Name+" "+p.Name)
				assert.Equal(t, float64(detector.MaxWindowSize), p.Max, "%s %s", f.Name, p.Name)
			}
		}
	}
	assert.Equal(t, []string{"phi-normal window", "phi-akka window", "phi-cassandra window", "chen window", "bertier window", "sfd window", "2w-fd short-window", "2w-fd window", "satzger window", "kappa window"}, got)
}

// A parameter's documented default (Param.Default, up to a parenthesis:
// "0.125", "0 (none)"), where it is a value rather than a rule ("Δ", "the
// window size"), is what the family uses when the parameter is not set:
// setting it builds the same detector. fdreplay relies on this to find two
// entries that are one detector (jacobson and jacobson(gain=0.125)). A
// parameter's Sample, set alone, builds another detector, so the
// comparison can fail.
func TestLiteralDefaultsAreTheDefaults(t *testing.T) {
	literal := 0
	for _, f := range Algorithms() {
		base := f.ForStream(Stream{Interval: 100 * time.Millisecond, Window: 100})
		want, err := base.New()
		require.NoError(t, err, f.Name)
		for _, p := range f.Params() {
			if base.IsSet(p.Name) {
				continue
			}
			def, _, _ := strings.Cut(p.Default, " (")
			set, err := base.With(p.Name, def)
			if err != nil {
				continue // a rule, not a value
			}
			literal++
			got, err := set.New()
			require.NoError(t, err, "%s %s=%s", f.Name, p.Name, def)
			assert.True(t, reflect.DeepEqual(want, got), "%s %s=%s differs from leaving it unset", f.Name, p.Name, def)
			if p.Sample != "" && p.Sample != def {
				other, err := base.With(p.Name, p.Sample)
				require.NoError(t, err)
				d, err := other.New()
				require.NoError(t, err, "%s %s=%s", f.Name, p.Name, p.Sample)
				assert.False(t, reflect.DeepEqual(want, d), "%s %s=%s builds the default detector", f.Name, p.Name, p.Sample)
			}
		}
	}
	assert.Greater(t, literal, 30, "most defaults are values")
}
