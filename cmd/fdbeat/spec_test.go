package main

import (
	"testing"

	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/spec"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recv's --detector takes the textual form: each spec is one more detector,
// named by its text; bad specs and oversized windows are refused.
func TestSpecDetectors(t *testing.T) {
	d0, err := specDetector("phi-akka(threshold=10, pause=0)")
	require.NoError(t, err)
	d1, err := specDetector(" cassandra ")
	require.NoError(t, err)
	assert.Equal(t, "phi-akka(threshold=10, pause=0)", d0.Name)
	assert.Equal(t, "cassandra", d1.Name)
	d, err := d0.Factory()
	require.NoError(t, err)
	assert.Equal(t, 10.0, d.(*phi.Akka).Threshold())
	for text, want := range map[string]string{
		"phi-akka(pause=3)":           `pause: "3" is not a duration`,
		"phi-normal(window=10000000)": "window: 10000000 is out of range",
		"phi-normal(window=1000000)":  "window 1000000 is above",
		"2w-fd(short-window=200000)":  "short-window 200000 is above",
	} {
		_, err := specDetector(text)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want)
	}
}

// The flag itself refuses what specDetector refuses, naming the flag, and
// a bad --max-senders or --sweep names its flag and the accepted range.
func TestRecvDetectorFlagErrors(t *testing.T) {
	for args, want := range map[string]string{
		"--detector=phi-normal(window=1000000)": "window 1000000 is above",
		"--max-senders=0":                       "--max-senders",
		"--max-senders=2000000":                 "from 1 to 1000000",
		"--sweep=5s":                            "local-pause limit",
		"--sweep=0":                             "--sweep",
	} {
		var o, e syncBuffer
		assert.Equal(t, 1, run(t.Context(), []string{"recv", args}, &o, &e), args)
		assert.Contains(t, e.String(), want, args)
	}
}

// --detector's help names every preset of the registry, each of which
// specDetector accepts.
func TestDetectorHelpNamesEveryPreset(t *testing.T) {
	var f recvFlags
	fs := pflag.NewFlagSet("recv", pflag.ContinueOnError)
	f.register(fs)
	usage := fs.Lookup("detector").Usage
	for _, p := range spec.Presets() {
		assert.Contains(t, usage, p.Name)
		_, err := specDetector(p.Name)
		assert.NoError(t, err, p.Name)
	}
}
