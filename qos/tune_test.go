package qos

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tunePoint is a swept point with the fields the tuner reads, over a minute
// of observed time (with none, every MR or QAP target is missed by +Inf
// whatever the QAP, and the tests below would not test the QAP = 1 rule).
func tunePoint(v float64, td time.Duration, mr, qap float64) Point {
	p := Point{Value: v}
	p.Records, p.TD.Mean, p.MRPerSecond, p.QAP = 1, td, mr, qap
	p.Span = time.Minute
	return p
}

// With MinQAP = 1 every point with a mistake misses by an infinite factor;
// the nearest of them is the most accurate one, not the fastest (the
// fastest is the one that suspects most).
func TestTuneNearestWithQAPOne(t *testing.T) {
	c := Curve{Stream: "s", Family: "f", Param: "K", Points: []Point{
		tunePoint(0.5, 100*time.Millisecond, 2, 0.80),
		tunePoint(1, 200*time.Millisecond, 0.5, 0.95),
		tunePoint(2, 300*time.Millisecond, 0.1, 0.99),
	}}
	ch, err := Tune([]Curve{c}, Targets{MinQAP: 1})
	require.NoError(t, err)
	require.Len(t, ch, 1)
	assert.False(t, ch[0].Found)
	assert.Equal(t, 2.0, ch[0].Point.Value, "nearest to QAP ≥ 1 is the point with the largest QAP")
	assert.True(t, math.IsInf(ch[0].Shortfall, 1))

	// With a TD target too, the infinite QAP shortfall still ranks by QAP.
	ch, err = Tune([]Curve{c}, Targets{MinQAP: 1, MaxTD: 150 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, 2.0, ch[0].Point.Value)

	// Equal QAP: the smaller mean TD.
	c.Points = append(c.Points, tunePoint(3, 250*time.Millisecond, 0.1, 0.99))
	ch, err = Tune([]Curve{c}, Targets{MinQAP: 1})
	require.NoError(t, err)
	assert.Equal(t, 3.0, ch[0].Point.Value)
}

// An infinite MR bound is rejected like a negative or NaN one: SFD, which
// takes the tuner's targets as its own, rejects it, so every SFD point of a
// sweep failed.
func TestTargetsRejectInfiniteMR(t *testing.T) {
	err := Targets{MaxMRPerSecond: math.Inf(1)}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "finite")
	assert.NoError(t, Targets{MaxMRPerSecond: 1e300}.Validate())
}

// NoMistakes (MR = 0, fdreplay's --mr-max 0) is met only by points without a
// mistake: the fastest of those is chosen, and a point with even one
// mistake misses by an infinite factor. A point with no observed time
// meets it no more than any other MR target.
func TestTuneNoMistakes(t *testing.T) {
	withMistakes := func(p Point, n int) Point { p.Mistakes = n; return p }
	c := Curve{Stream: "s", Family: "f", Param: "T", Points: []Point{
		withMistakes(tunePoint(1, 100*time.Millisecond, 1.0/60, 0.999), 1),
		tunePoint(2, 300*time.Millisecond, 0, 1),
		tunePoint(3, 400*time.Millisecond, 0, 1),
	}}
	tg := Targets{NoMistakes: true}
	require.NoError(t, tg.Validate())
	ch, err := Tune([]Curve{c}, tg)
	require.NoError(t, err)
	require.True(t, ch[0].Found)
	assert.Equal(t, 2.0, ch[0].Point.Value)
	assert.Equal(t, 0.0, ch[0].Shortfall)
	assert.True(t, math.IsInf(tg.Shortfall(c.Points[0].Result), 1))
	assert.False(t, tg.Meets(c.Points[0].Result))

	noTime := tunePoint(4, 0, 0, 1)
	noTime.Span = 0
	assert.False(t, tg.Meets(noTime.Result))

	err = Targets{NoMistakes: true, MaxMRPerSecond: 0.1}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NoMistakes")
}
