package qos

import (
	"sync"
	"testing"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A solver replays a value once: sweeping values it has replayed (its grid
// among them) returns the same points as a fresh solver's replay, in the
// order asked, and builds no detector for them.
func TestSolverSweepReplaysValueOnce(t *testing.T) {
	s := Stream{Name: "s", Heartbeats: simStream(3000, simInterval, simC0, simM, 7)}
	var mu sync.Mutex
	built := map[float64]int{}
	counted := func() Family {
		f := noisyFamily("a", simInterval, simSA, 1, 20, 200, 5)
		f.Linear = nil // one replay per point: New is called once per replay
		newDet := f.New
		f.New = func(v float64) (detector.Detector, error) {
			mu.Lock()
			built[v]++
			mu.Unlock()
			return newDet(v)
		}
		return f
	}
	f := counted()
	sv, err := newSolver(s, f, nil, SweepConfig{Workers: 1})
	require.NoError(t, err)
	grid := f.Values // 20, 65, 110, 155, 200
	vals := []float64{grid[3], 90, grid[1], 90}
	first, err := sv.sweep(vals)
	require.NoError(t, err)
	before := map[float64]int{}
	for k, n := range built {
		before[k] = n
	}
	again, err := sv.sweep([]float64{90, grid[3]})
	require.NoError(t, err)
	assert.Equal(t, before, built, "no value replayed twice")
	assert.Equal(t, []Point{first[1], first[0]}, again)

	fresh, err := newSolver(s, counted(), nil, SweepConfig{Workers: 1})
	require.NoError(t, err)
	fresh.memo = nil
	want, err := fresh.sweep(vals)
	require.NoError(t, err)
	require.Len(t, first, len(vals))
	for i := range vals {
		assert.Equal(t, vals[i], first[i].Value)
		assert.Equal(t, want[i].Result, first[i].Result, "value %g", vals[i])
	}
}
