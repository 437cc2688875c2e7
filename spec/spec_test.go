package spec

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leaves lists the paths of the settable leaf fields of a config type
// (nested structs are walked; func fields are not settings).
func leaves(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Type.Kind() == reflect.Func {
			continue
		}
		if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() != "time" {
			out = append(out, leaves(f.Type, prefix+f.Name+".")...)
			continue
		}
		out = append(out, prefix+f.Name)
	}
	return out
}

// Every parameter of every family round-trips through the textual form:
// set alone to its sample value, the config prints as family(param=value),
// and parsing that text gives the same config back; every settable field of
// every family's config is reached by a parameter.
func TestEveryParameterRoundTrips(t *testing.T) {
	require.NotEmpty(t, Algorithms())
	for _, f := range Algorithms() {
		t.Run(f.Name, func(t *testing.T) {
			covered := map[string]bool{}
			all := f.Spec()
			for i := range f.params {
				p := &f.params[i]
				require.NotEmpty(t, p.Sample, "%s has no sample value", p.Name)
				s, err := f.Spec().With(p.Name, p.Sample)
				require.NoError(t, err, p.Name)
				v, _ := s.Value(p.Name)
				text := s.String()
				assert.Equal(t, f.Name+"("+p.Name+"="+v+")", text)
				back, err := Parse(text)
				require.NoError(t, err, text)
				assert.Equal(t, s.Config(), back.Config(), text)
				assert.Equal(t, text, back.String())
				printed, err := Format(s.Config())
				require.NoError(t, err)
				assert.Equal(t, text, printed, "printing the config gives its spec")
				// Which field did it set?
				zero := reflect.ValueOf(f.Spec().Config())
				got := reflect.ValueOf(s.Config())
				for _, path := range leaves(f.typ, "") {
					if !reflect.DeepEqual(field(zero, path), field(got, path)) {
						covered[path] = true
						assert.Equal(t, p.Field, path, "%s sets %s", p.Name, path)
					}
				}
				all, err = all.With(p.Name, p.Sample)
				require.NoError(t, err)
			}
			for _, path := range leaves(f.typ, "") {
				assert.True(t, covered[path], "field %s of %v has no parameter", path, f.typ)
			}
			// All parameters at once, too.
			back, err := Parse(all.String())
			require.NoError(t, err)
			assert.Equal(t, all.Config(), back.Config())
			assert.Equal(t, all.String(), back.String())
		})
	}
}

func field(v reflect.Value, path string) any {
	for _, name := range strings.Split(path, ".") {
		v = v.FieldByName(name)
	}
	return v.Interface()
}

// Zero means zero: phi-akka(pause=0) is an Akka detector with no pause, not
// the 3 s default.
func TestZeroIsZero(t *testing.T) {
	s, err := Parse("phi-akka(pause=0, min-std=0)")
	require.NoError(t, err)
	c := s.Config().(phi.AkkaConfig)
	require.NotNil(t, c.AcceptablePause)
	assert.Equal(t, time.Duration(0), *c.AcceptablePause)
	assert.Equal(t, time.Duration(0), *c.MinStdDev)
	assert.Equal(t, "phi-akka(min-std=0s, pause=0s)", s.String())
	d, err := s.New()
	require.NoError(t, err)
	d.Observe(detector.Heartbeat{Arrival: time.Second})
	assert.Equal(t, time.Second, d.(*phi.Akka).Mean(), "m' = μ of the seeds 750 ms and 1250 ms, no pause")
	n, err := Parse("phi-normal(threshold=8, min-std=0)")
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), *n.Config().(phi.NormalConfig).MinStdDev)
}

func TestParseErrors(t *testing.T) {
	for text, want := range map[string]string{
		"":                                   "no detector name",
		"phi-akka(":                          "missing the closing parenthesis",
		"phi-akka)":                          "')' without '('",
		"phi-akka((pause=1s))":               "unbalanced",
		"zeta":                               `unknown detector "zeta"`,
		"phi-akka(pause)":                    `"pause" is not key=value`,
		"phi-akka(paws=3s)":                  `no parameter "paws" (its parameters: threshold, window, min-std, pause`,
		"phi-akka(pause=3)":                  `pause: "3" is not a duration`,
		"phi-akka(pause=-1s)":                "pause: -1s is out of range (expected ≥ 0s)",
		"phi-akka(window=0)":                 "window: 0 is out of range (expected ≥ 1 and ≤ 1048576)",
		"phi-akka(threshold=0)":              "threshold: 0 is out of range (expected > 0)",
		"phi-akka(threshold=NaN)":            `threshold: "NaN" is not a finite number`,
		"phi-akka(pause=1s, pause=2s)":       "pause is given twice",
		"jacobson(init=one)":                 `init: "one" is not one of first-sample, zero`,
		"phi-normal(skip-suspected=perhaps)": `skip-suspected: "perhaps" is not true or false`,
		"fixed(restart-jump=-1)":             `restart-jump: "-1" is not a non-negative integer`,
		"satzger(threshold=1.5)":             "threshold: 1.5 is out of range (expected > 0 and ≤ 1)",
		// A fixed timeout of 0 passed here and failed in qos after the
		// trace was read (user48's F9).
		"fixed(timeout=0)": "timeout: 0 is out of range (expected > 0s)",
		// A sweep where one setting is wanted (fdbeat --detector, fdswim
		// --suspicion) is named as such, not as an unknown detector.
		"chen alpha=1ms..2ms":                `spec "chen alpha=1ms..2ms" is a sweep (a parameter's range); one setting is wanted here, e.g. chen(alpha=1ms)`,
		"chen(window=10) alpha=1ms..2ms:log": `is a sweep (a parameter's range); one setting is wanted here, e.g. chen(alpha=1ms)`,
	} {
		_, err := Parse(text)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want, text)
	}
	_, err := Parse(strings.Repeat("x", maxSpecLen+1))
	assert.ErrorContains(t, err, "too long")
}

// Two Akka configurations side by side are two distinct specs.
func TestSideBySide(t *testing.T) {
	a, err := Parse(" phi-akka ( threshold = 10 , pause = 3s ) ")
	require.NoError(t, err)
	b, err := Parse("phi-akka(threshold=10, pause=0)")
	require.NoError(t, err)
	assert.Equal(t, "phi-akka(threshold=10, pause=3s)", a.String())
	assert.NotEqual(t, a.String(), b.String())
	fa, err := a.Point()
	require.NoError(t, err)
	assert.Equal(t, []float64{10}, fa.Values)
	assert.Equal(t, a.String(), fa.Name)
}

func TestPresets(t *testing.T) {
	for _, p := range Presets() {
		s, err := Parse(p.Name)
		require.NoError(t, err, p.Name)
		assert.Equal(t, p.Text, s.String())
		_, err = s.New()
		require.NoError(t, err, p.Name)
		assert.NotEmpty(t, p.Source)
	}
	s, err := Parse("akka(threshold=12)")
	require.NoError(t, err)
	assert.Equal(t, "phi-akka(threshold=12, window=1000, min-std=100ms, pause=3s, bootstrap-interval=1s)", s.String())
	c, err := Parse("cassandra")
	require.NoError(t, err)
	assert.Equal(t, "phi-cassandra(threshold=8, window=1000, bootstrap-interval=2s, max-interval=2s)", c.String())
	h, err := Parse("hazelcast")
	require.NoError(t, err)
	assert.Equal(t, "phi-akka(threshold=10, window=200, min-std=100ms, pause=1m0s, bootstrap-interval=5s)", h.String())
	require.Len(t, SWIMPresets(), 2)
	assert.Equal(t, time.Second, SWIMPresets()[0].Config.ProbeInterval)
}

func TestSweep(t *testing.T) {
	w, err := ParseSweep("chen(window=1000) alpha=10ms..1s")
	require.NoError(t, err)
	assert.Equal(t, "alpha", w.Param)
	assert.Equal(t, 10.0, w.Lo)
	assert.Equal(t, 1000.0, w.Hi)
	assert.Equal(t, "chen(window=1000) alpha=10ms..1s", w.String())
	f, err := w.Family(5)
	require.NoError(t, err)
	assert.Equal(t, "chen(window=1000)", f.Name)
	assert.Equal(t, "alpha", f.Param)
	assert.Len(t, f.Values, 5)
	assert.NotNil(t, f.Linear, "the main parameter uses the one-pass family")

	// Any other parameter: one replay per point.
	w, err = ParseSweep("phi-akka(threshold=10) pause=0..3s")
	require.NoError(t, err)
	f, err = w.Family(4)
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 1000, 2000, 3000}, f.Values)
	d, err := f.New(1000)
	require.NoError(t, err)
	assert.Equal(t, 8.0+2, d.(*phi.Akka).Threshold())

	for text, want := range map[string]string{
		"chen":                         "missing the swept parameter",
		"chen alpha":                   "not key=lo..hi",
		"chen beta=1..2":               `no parameter "beta"`,
		"chen alpha=1s":                "not a range lo..hi",
		"chen alpha=2s..1s":            "below lower bound",
		"chen alpha=1ns..1ns":          "alpha: both bounds are 1ns: a sweep needs lo < hi; for that one setting give chen(alpha=1ns) without a range",
		"chen window=50..50":           "both bounds are 50",
		"chen alpha=0..1s:log":         "log range needs a lower bound > 0",
		"chen alpha=1ms..1s:cubic":     "spacing",
		"phi-normal skip-suspected=..": "cannot be swept",
	} {
		_, err := ParseSweep(text)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want, text)
	}
}

func TestDecodeFile(t *testing.T) {
	f, err := Decode("s.yaml", []byte(`
detectors:
  - phi-akka(threshold=10, pause=3s)
  - detector: akka
    threshold: 12
    pause: 0s
sweeps:
  - chen(window=1000) alpha=10ms..1s
`))
	require.NoError(t, err)
	require.Len(t, f.Detectors, 2)
	assert.Equal(t, "phi-akka(threshold=10, pause=3s)", f.Detectors[0].String())
	assert.Equal(t, "phi-akka(threshold=12, window=1000, min-std=100ms, pause=0s, bootstrap-interval=1s)", f.Detectors[1].String())
	require.Len(t, f.Sweeps, 1)
	for text, want := range map[string]string{
		"detectors:\n  - detector: akka\n    pause: soon\n": `s.yaml:3: akka: phi-akka: pause: "soon" is not a duration`,
		"detektors: []\n":                  `s.yaml:1: unknown section "detektors"`,
		"detectors:\n  - {threshold: 3}\n": "s.yaml:2: missing detector:",
		"sweeps:\n  - chen\n":              "s.yaml:2: sweep",
		"":                                 "empty settings file",
		"- a\n":                            "expected a mapping",
	} {
		_, err := Decode("s.yaml", []byte(text))
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want, text)
	}
	// The family is named once where the file names it (atk27r's F10:
	// "chen: chen: restart-jump: ..."), and after an alias or preset.
	for text, want := range map[string]string{
		"detectors:\n  - detector: chen\n    restart-jump: \"1e2\"\n": `s.yaml:3: chen: restart-jump: "1e2" is not a non-negative integer`,
		"detectors:\n  - detector: Chen\n    nope: 1\n":               `s.yaml:3: chen has no parameter "nope" (its parameters: `,
		"detectors:\n  - detector: nfd-e\n    window: x\n":            `s.yaml:3: nfd-e: chen: window: "x" is not `,
	} {
		_, err := Decode("s.yaml", []byte(text))
		require.Error(t, err, text)
		assert.True(t, strings.HasPrefix(err.Error(), want), "%q: %v", text, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"phi-akka(threshold=10, pause=3s)", "chen(window=1000)", "akka", "x(", "fixed(timeout=1h)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(text)
		if err != nil {
			return
		}
		back, err := Parse(s.String())
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", text, s.String(), err)
		}
		if back.String() != s.String() {
			t.Fatalf("%q: %q then %q", text, s.String(), back.String())
		}
	})
}

// The swept parameter has one name everywhere: the qos family a sweep
// builds names it as the registry does, in the registry's unit, and the
// registry gives it the symbol plots show.
func TestSweptParamOneName(t *testing.T) {
	for _, f := range Algorithms() {
		if f.Swept == "" {
			require.Nil(t, f.sweep, "%s has a sweep but no swept parameter", f.Name)
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			p := f.param(f.Swept)
			require.NotNil(t, p, "the swept parameter %q is not a parameter", f.Swept)
			assert.NotEmpty(t, p.Symbol, "the swept parameter has no symbol")
			s := f.Spec()
			q := f.sweep(s.cfg, []float64{f.point(s.cfg)})
			assert.Equal(t, f.Swept, q.Param)
			if p.Kind == Duration {
				assert.Equal(t, "ms", q.Unit)
			} else {
				assert.Empty(t, q.Unit)
			}
			w := Sweep{Spec: s, Param: f.Swept, Lo: 1, Hi: 2}
			q, err := w.Family(3)
			require.NoError(t, err)
			assert.Equal(t, f.Swept, q.Param)
		})
	}
}

// TestSFDBetaAlias: SFD's adjustment rate is β in the paper and in
// fdreplay's setting column ("SM1=100ms β=10ms"); its parameter is step,
// and beta, the symbol spelled out, reads as step (user44's D4: sfd(beta=0)
// was "no parameter beta").
func TestSFDBetaAlias(t *testing.T) {
	s, err := Parse("sfd(beta=5ms)")
	require.NoError(t, err)
	assert.Equal(t, "sfd(step=5ms)", s.String())
	_, err = Parse("sfd(beta=0)")
	assert.ErrorContains(t, err, "step")
	_, err = Parse("sfd(beta=5ms, step=5ms)")
	assert.ErrorContains(t, err, "step is given twice")
	w, err := ParseSweep("sfd beta=1ms..10ms")
	require.NoError(t, err)
	assert.Equal(t, "step", w.Param)
}

// TestBootstrapIntervalAliases: the interval assumed before two are known
// is bootstrap-interval in every family; the names it had, first-estimate
// and initial-interval, still read, in specs and in files, and printing
// uses the one name. An alias beside the name is the same key twice.
func TestBootstrapIntervalAliases(t *testing.T) {
	for text, want := range map[string]string{
		"phi-akka(first-estimate=5s)":         "phi-akka(bootstrap-interval=5s)",
		"phi-cassandra(initial-interval=3s)":  "phi-cassandra(bootstrap-interval=3s)",
		"satzger(First-Estimate=2s)":          "satzger(bootstrap-interval=2s)",
		"phi-normal(bootstrap-interval=50ms)": "phi-normal(bootstrap-interval=50ms)",
	} {
		s, err := Parse(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, s.String(), text)
	}
	_, err := Parse("phi-akka(first-estimate=5s, bootstrap-interval=1s)")
	assert.ErrorContains(t, err, "bootstrap-interval is given twice")
	_, err = Decode("s.yaml", []byte("detectors:\n  - detector: phi-cassandra\n    initial-interval: 3s\n    bootstrap-interval: 1s\n"))
	assert.ErrorContains(t, err, "s.yaml:4: bootstrap-interval is given twice")
	f, err := Decode("s.yaml", []byte("detectors:\n  - detector: phi-cassandra\n    initial-interval: 3s\n"))
	require.NoError(t, err)
	assert.Equal(t, "phi-cassandra(bootstrap-interval=3s)", f.Detectors[0].String())
}

// The registry says which families keep outages out of their history and
// which tune themselves to QoS targets; fdreplay's notes read it.
func TestOutageRulesAndTargets(t *testing.T) {
	want := map[string]OutageRule{"phi-normal": SkipSuspected, "phi-akka": SkipSuspected, "phi-cassandra": SkipAboveMax}
	for _, f := range Algorithms() {
		if f.Outages != want[f.Name] {
			t.Errorf("%s: outage rule %d, want %d", f.Name, f.Outages, want[f.Name])
		}
		if f.UsesTargets != (f.Name == "sfd") {
			t.Errorf("%s: UsesTargets %v", f.Name, f.UsesTargets)
		}
	}
}

// Param finds every parameter of every family by its name, and by its
// aliases in any case; a name the family does not have is not found.
func TestAlgorithmParam(t *testing.T) {
	for _, f := range Algorithms() {
		for _, p := range f.Params() {
			for _, name := range append([]string{p.Name, strings.ToUpper(p.Name)}, p.Aliases...) {
				got, ok := f.Param(name)
				require.True(t, ok, "%s: %s", f.Name, name)
				assert.Equal(t, p.Name, got.Name)
			}
		}
		_, ok := f.Param("no-such-parameter")
		assert.False(t, ok, f.Name)
	}
	chen, ok := Lookup("chen")
	require.True(t, ok)
	p, ok := chen.Param("window")
	require.True(t, ok)
	assert.True(t, p.Window)
}
