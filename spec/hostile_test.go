package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Format and FromConfig of a nil configuration are errors, not panics.
func TestFormatNil(t *testing.T) {
	_, err := Format(nil)
	assert.ErrorContains(t, err, "no configuration")
	_, err = FromConfig(nil)
	assert.ErrorContains(t, err, "no configuration")
}

// A settings file never silently drops what it says: a repeated section, a
// repeated detector: key and a second YAML document are errors naming the
// line.
func TestDecodeFileRefusesSilentLoss(t *testing.T) {
	for text, want := range map[string]string{
		"detectors:\n  - detector: phi-akka\n    detector: chen\n": "s.yaml:3: detector: given twice",
		"detectors:\n  - akka\ndetectors:\n  - chen\n":             "s.yaml:3: detectors: given twice",
		"sweeps: []\nsweeps: []\n":                                 "s.yaml:2: sweeps: given twice",
		"detectors: [akka]\n---\ndetectors: [chen]\n":              "s.yaml:2: a second YAML document",
	} {
		_, err := Decode("s.yaml", []byte(text))
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want, text)
	}
	// One document with an explicit start and end marker is fine.
	f, err := Decode("s.yaml", []byte("---\ndetectors: [akka]\n...\n"))
	require.NoError(t, err)
	assert.Len(t, f.Detectors, 1)
}

// Anchors and aliases cannot blow up: an alias bomb is refused at once (its
// sections are unknown, and an alias is never expanded into a list).
func TestDecodeFileAliasBomb(t *testing.T) {
	bomb := "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
		"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n" +
		"g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
	_, err := Decode("s.yaml", []byte(bomb+"detectors: *i\n"))
	assert.ErrorContains(t, err, "s.yaml:1: unknown section")
	_, err = Decode("s.yaml", []byte("detectors: &l [akka]\nsweeps: *l\n"))
	assert.ErrorContains(t, err, "s.yaml:2: sweeps: expected a list")
}

// A window size the detectors cannot hold is refused when the spec is
// parsed, naming the bound, for every family with a window.
func TestWindowBounded(t *testing.T) {
	for _, text := range []string{"phi-akka(window=10000000000)", "phi-normal(window=2000000)", "phi-cassandra(window=2000000)",
		"chen(window=2000000)", "2w-fd(window=2000000)", "2w-fd(short-window=2000000)", "satzger(window=2000000)"} {
		_, err := Parse(text)
		assert.ErrorContains(t, err, "out of range (expected ≥ 1 and ≤ 1048576)", text)
	}
	s, err := Parse("phi-akka(window=1048576)")
	require.NoError(t, err)
	_, err = s.New()
	require.NoError(t, err)
	_, err = ParseSweep("chen window=1..100000000000")
	assert.ErrorContains(t, err, "1048576")
}

// Parameter names, like family and preset names, ignore case; the same
// parameter spelt in two cases is given twice.
func TestParameterNamesIgnoreCase(t *testing.T) {
	s, err := Parse("PHI-AKKA(Threshold=3, MIN-STD=0s)")
	require.NoError(t, err)
	assert.Equal(t, "phi-akka(threshold=3, min-std=0s)", s.String())
	_, err = Parse("phi-akka(threshold=3, Threshold=4)")
	assert.ErrorContains(t, err, "Threshold is given twice")
	_, err = Decode("s.yaml", []byte("detectors:\n  - detector: phi-akka\n    threshold: 3\n    THRESHOLD: 4\n"))
	assert.ErrorContains(t, err, "s.yaml:4: THRESHOLD is given twice")
	f, err := Decode("s.yaml", []byte("detectors:\n  - Detector: Akka\n    Pause: 0s\n"))
	require.NoError(t, err)
	assert.Equal(t, "phi-akka(threshold=8, window=1000, min-std=100ms, pause=0s, bootstrap-interval=1s)", f.Detectors[0].String())
}

// An integer parameter swept over more points than it has integers in the
// range replays each integer once, never the same integer several times.
func TestSweepIntegerPointsDistinct(t *testing.T) {
	w, err := ParseSweep("phi-akka window=1..3")
	require.NoError(t, err)
	f, err := w.Family(10)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3}, f.Values)
	w, err = ParseSweep("phi-akka window=10..1000:log")
	require.NoError(t, err)
	f, err = w.Family(3)
	require.NoError(t, err)
	assert.Equal(t, []float64{10, 100, 1000}, f.Values)
}

// A sweep's parameter is named in the family's own spelling whatever case
// the user typed, so that `chen ALPHA=…` is the one-pass sweep of α and its
// curve is labelled alpha, not a replay of every point labelled ALPHA.
func TestSweepParamCaseInsensitive(t *testing.T) {
	lower, err := ParseSweep("chen alpha=10ms..1s")
	require.NoError(t, err)
	upper, err := ParseSweep("chen ALPHA=10ms..1s")
	require.NoError(t, err)
	assert.Equal(t, "alpha", upper.Param)
	fl, err := lower.Family(4)
	require.NoError(t, err)
	fu, err := upper.Family(4)
	require.NoError(t, err)
	assert.Equal(t, fl.Param, fu.Param)
	assert.Equal(t, fl.Values, fu.Values)
	assert.Equal(t, fl.Linear != nil, fu.Linear != nil, "same sweep method")
	assert.NotNil(t, fu.Linear, "α is chen's one-pass parameter")
}
