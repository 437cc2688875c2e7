package qos

import (
	"testing"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/satzger"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A replay that evaluates nothing says which warm-up held the heartbeats:
// the one asked for, the detector's own, or the first then the other
// (with WarmUp 0 and a detector still warming up, "all 9 fresh heartbeats
// were in warm-up" was untrue). example95 has 9 heartbeats; a window of
// 20 keeps Chen (and Satzger's shared pass) warming up through all of them.
func TestNoEvaluationSaysWhichWarmUp(t *testing.T) {
	hbs := example95()
	require.Len(t, hbs, 9)
	want := map[int]string{
		0:  "qos: no heartbeat evaluated: the detector was still warming up after all 9 fresh heartbeat(s) (it needs more to have a freshness point)",
		4:  "qos: no heartbeat evaluated: of 9 fresh heartbeats, 4 were in the warm-up of 4 and the detector was still warming up after the other 5 (it needs more to have a freshness point)",
		9:  "qos: no heartbeat evaluated: all 9 fresh heartbeat(s) were in the warm-up of 9",
		12: "qos: no heartbeat evaluated: all 9 fresh heartbeat(s) were in the warm-up of 12",
	}
	for warmUp, w := range want {
		d, err := chen.New(chen.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 20}})
		require.NoError(t, err)
		_, err = ReplaySlice(d, hbs, Config{WarmUp: warmUp})
		assert.EqualError(t, err, w, "ReplaySlice, warm-up %d", warmUp)
		assert.ErrorIs(t, err, ErrNoEvaluation)

		// The shared threshold pass of a sweep says the same.
		c, err := Sweep([]Stream{{Heartbeats: hbs}}, []Family{SatzgerFamily(satzger.Config{WindowSize: 20, BootstrapInterval: new(ms(100))}, []float64{0.9, 0.99})},
			SweepConfig{Config: Config{WarmUp: warmUp}})
		require.NoError(t, err)
		assert.EqualError(t, c[0].Err, "qos: satzger threshold=0.9: "+w[len("qos: "):], "Sweep, warm-up %d", warmUp)
	}
	// An empty stream has nothing to be warm about.
	assert.EqualError(t, noEvaluation(0, 3), "qos: no heartbeat evaluated: the stream has no fresh heartbeat")
}
