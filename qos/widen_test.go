package qos

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/phi"
)

// The lower --range suggested for the normal φ is never below log10 2,
// which fdreplay refuses (user44's F7, session 22: "--range
// phi-normal=0.125:16" from a sweep starting at 0.5); it is rounded up, as
// printed, to a threshold the family accepts; from that bound on nothing
// is suggested.
func TestWidenHintStopsAtFamilyMin(t *testing.T) {
	f := PhiNormalFamily(phi.NormalConfig{}, nil)
	assert.Equal(t, math.Log10(2), f.Min)
	assert.Equal(t, "--range phi-normal=0.3011:16", widenHint(&f, LowerEdge, 0.5, 16))
	assert.Equal(t, "--range phi-normal=0.5:16", widenHint(&f, LowerEdge, 2, 16))
	assert.Equal(t, "", widenHint(&f, LowerEdge, 0.3011, 16))
	assert.Equal(t, "", widenHint(&f, LowerEdge, math.Log10(2), 16))
	_, err := f.New(0.3011)
	require.NoError(t, err)
	// Families without a floor keep the quarter.
	c := ChenFamily(chen.Config{}, nil)
	assert.Equal(t, "--range chen=0.25:200", widenHint(&c, LowerEdge, 1, 200))
}

// roundUp4 gives the 4-digit number at or above x that prints as itself.
func TestRoundUp4(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{math.Log10(2), 0.3011}, {0.125, 0.125}, {1234.5, 1235}, {9999.5, 10000}, {0.001, 0.001}, {12345678, 12350000},
	} {
		got := roundUp4(c.x)
		assert.Equal(t, c.want, got, "%v", c.x)
		assert.GreaterOrEqual(t, got, c.x)
		p, _ := strconv.ParseFloat(strconv.FormatFloat(got, 'g', 4, 64), 64)
		assert.Equal(t, got, p)
	}
}

// A family whose smallest swept value is its floor and already meets the
// accuracy targets: the verdict says no range makes it faster, and
// suggests none.
func TestDecideAtFamilyMin(t *testing.T) {
	raceFree(t)
	hbs := simStream(6000, simInterval, simC0, simM, 7)
	a := noisyFamily("a", simInterval, simSA, 1, 20, 200, 2)
	a.Values = mustRange(t, 100, 200, 11, false)
	a.Min = 100
	v, err := Decide(Stream{Name: "s", Heartbeats: hbs}, []Family{a}, nil, Targets{MaxMRPerSecond: simMR}, DecideConfig{Holdout: -1, Sweep: SweepConfig{Workers: 1}})
	require.NoError(t, err)
	op := v.Ops[0]
	assert.Equal(t, LowerEdge, op.Edge)
	assert.True(t, op.AtMin)
	assert.Empty(t, op.Widen)
	assert.Contains(t, v.String(), "a: the setting c=100ms is the smallest swept and the smallest a allows; no range makes it faster")
	assert.NotContains(t, v.String(), "widen")
}
