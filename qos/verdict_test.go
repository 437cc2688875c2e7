package qos

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerdicts: on one stream, a fixed timeout of 150 ms beats one of
// 400 ms beyond chance (TD is 250 ms shorter after every heartbeat), a copy
// of the 150 ms family is indistinguishable from it (difference exactly 0),
// and a family that misses the targets takes no part.
func TestVerdicts(t *testing.T) {
	hbs := agreementTraces()["jitter-loss"]
	named := func(name string, ts ...time.Duration) Family {
		f := FixedFamily(ts)
		f.Name = name
		return f
	}
	fams := []Family{named("slow", ms(400)), named("fast", ms(150)), named("copy", ms(150)), named("tight", ms(101))}
	for _, intervals := range []bool{true, false} {
		curves, err := Sweep([]Stream{{Name: "s", Heartbeats: hbs}}, fams, SweepOptions{Config: Config{Intervals: intervals}})
		require.NoError(t, err)
		choices, err := Tune(curves, Targets{MaxTD: time.Second, MinQAP: 0.95})
		require.NoError(t, err)
		require.False(t, choices[3].Found, "101 ms misses QAP ≥ 0.95: %v", choices[3].Point.QAP)
		vs := Verdicts(choices)
		require.Len(t, vs, 1)
		v := vs[0]
		assert.Equal(t, "s", v.Stream)
		assert.Equal(t, 1, v.Best)
		assert.Equal(t, 2, v.RunnerUp)
		require.Len(t, v.Rivals, 2)
		assert.Equal(t, 2, v.Rivals[0].Choice)
		assert.Equal(t, 0, v.Rivals[1].Choice)
		assert.True(t, v.Rivals[0].Indistinguishable)
		assert.False(t, v.Significant)
		if !intervals {
			assert.NotEmpty(t, v.Rivals[1].Err)
			assert.True(t, v.Rivals[1].Indistinguishable)
			continue
		}
		assert.Empty(t, v.Rivals[0].Err)
		assert.Equal(t, [2]time.Duration{}, v.Rivals[0].Diff.TDMeanCI)
		assert.False(t, v.Rivals[1].Indistinguishable, "%v", v.Rivals[1].Diff.TDMeanCI)
		assert.Less(t, v.Rivals[1].Diff.TDMeanCI[1], -ms(200))
	}
	assert.Equal(t, []Verdict{}, Verdicts(nil))
}
