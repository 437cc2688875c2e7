package main

import (
	"testing"

	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recv's --detector takes the textual form: each spec is one more detector,
// named by its text; bad specs and oversized windows are refused.
func TestSpecDetectors(t *testing.T) {
	ds, err := specDetectors([]string{"phi-akka(threshold=10, pause=0)", "cassandra"})
	require.NoError(t, err)
	require.Len(t, ds, 2)
	assert.Equal(t, "phi-akka(threshold=10, pause=0)", ds[0].Name)
	d, err := ds[0].Factory()
	require.NoError(t, err)
	assert.Equal(t, 10.0, d.(*phi.Akka).Threshold())
	for text, want := range map[string]string{
		"phi-akka(pause=3)":           `pause: "3" is not a duration`,
		"phi-normal(window=10000000)": "window: 10000000 is out of range",
		"phi-normal(window=1000000)":  "window 1000000 is above",
	} {
		_, err := specDetectors([]string{text})
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want)
	}
}
