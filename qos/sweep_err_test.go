package qos

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Curve.Err is the failure of the first value in Values order, whichever
// per-point replay finishes first, so that a sweep on several workers gives
// the same error for one input on every run, not the failure that came
// first in time.
func TestSweepErrIsFirstValue(t *testing.T) {
	f := Family{Name: "f", Param: "x", Values: []float64{1, 2, 3},
		New: func(v float64) (detector.Detector, error) {
			if v == 1 {
				time.Sleep(20 * time.Millisecond) // finishes last
			}
			return nil, fmt.Errorf("no detector for %g", v)
		}}
	hbs := []detector.Heartbeat{{Arrival: 0}, {Arrival: time.Second}}
	for _, w := range []int{1, 3} {
		c, err := Sweep([]Stream{{Name: "s", Heartbeats: hbs}}, []Family{f}, SweepConfig{Workers: w})
		require.NoError(t, err)
		assert.EqualError(t, c[0].Err, "qos: f x=1: no detector for 1", "workers %d", w)
		assert.Empty(t, c[0].Points)
	}
}

// Curve.Err is typed: errors.As gives the family, parameter and value,
// errors.Is reaches the cause (a constructor's error, ErrNoEvaluation), and
// JSON carries the message.
func TestCurveErrorTyped(t *testing.T) {
	bad := errors.New("no detector")
	f := Family{Name: "f", Param: "x", Values: []float64{2, 3},
		New: func(v float64) (detector.Detector, error) { return nil, bad }}
	hbs := []detector.Heartbeat{{Arrival: 0}, {Arrival: time.Second}}
	short := FixedFamily([]time.Duration{time.Second})
	c, err := Sweep([]Stream{{Name: "s", Heartbeats: hbs}}, []Family{f, short}, SweepConfig{Config: Config{WarmUp: 5}})
	require.NoError(t, err)
	var ce *CurveError
	require.ErrorAs(t, c[0].Err, &ce)
	assert.Equal(t, "f", ce.Family)
	assert.Equal(t, "x", ce.Param)
	assert.Equal(t, 2.0, ce.Value)
	assert.ErrorIs(t, c[0].Err, bad)
	assert.ErrorIs(t, c[1].Err, ErrNoEvaluation)
	assert.NotErrorIs(t, c[0].Err, ErrNoEvaluation)
	b, err := json.Marshal(c[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"error":"qos: f x=2: no detector"`)
	var back Curve
	require.NoError(t, json.Unmarshal(b, &back))
	assert.EqualError(t, back.Err, "qos: f x=2: no detector")
	b, err = json.Marshal(c[1:])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &[]Curve{}))
	ok, err := json.Marshal(Curve{Family: "g"})
	require.NoError(t, err)
	assert.NotContains(t, string(ok), "error")
}

// A sweep whose Cancel is closed runs no task it has not started: with
// Cancel closed from the start, no detector is built and no spooled stream
// is read, whether a stream is in memory, read into memory (Spill.InMemory)
// or read by all its families at once, and every curve fails with
// ErrCanceled.
func TestSweepCanceled(t *testing.T) {
	hbs := generate(genOpts{n: 300, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, seed: 3})
	var built atomic.Int64
	counted := func(f Family) Family {
		newDet := f.New
		f.New = func(v float64) (detector.Detector, error) {
			built.Add(1)
			return newDet(v)
		}
		return f
	}
	fams := []Family{counted(FixedFamily(durs([]float64{150, 300}))), counted(PhiNormalFamily(phi.NormalConfig{WindowSize: 50}, []float64{1, 4}))}
	stop := make(chan struct{})
	close(stop)
	for _, inMemory := range []int{len(hbs), len(hbs) - 1} {
		src := &countingSource{Source: spooled(t, hbs)}
		streams := []Stream{{Name: "mem", Heartbeats: hbs}, {Name: "spool", Source: src}}
		curves, err := Sweep(streams, fams, SweepConfig{Config: Config{Spill: Spill{InMemory: inMemory}}, Cancel: stop})
		require.NoError(t, err)
		require.Len(t, curves, 4)
		for _, c := range curves {
			require.ErrorIs(t, c.Err, ErrCanceled, "%s %s", c.Stream, c.Family)
			require.Empty(t, c.Points)
		}
		require.Zero(t, built.Load(), "detectors built")
		require.Zero(t, src.passes.Load(), "passes over the spool (InMemory %d)", inMemory)
	}
	// Not closed: the sweep runs as without Cancel.
	curves, err := Sweep([]Stream{{Name: "mem", Heartbeats: hbs}}, fams, SweepConfig{Cancel: make(chan struct{})})
	require.NoError(t, err)
	for _, c := range curves {
		require.Nil(t, c.Err)
		require.Len(t, c.Points, 2)
	}
}
