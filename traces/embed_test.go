package traces

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/trace"
)

func TestNames(t *testing.T) {
	assert.Equal(t, []string{"gc-pause.fdkit.gz", "jitter.fdkit.gz", "stable.fdkit.gz", "wan.fdkit.xz"}, Names())
	assert.Contains(t, Names(), Default)
}

// TestReproducible regenerates every trace from the preset and seed in its
// header (the commands in README.md) and compares record by record.
func TestReproducible(t *testing.T) {
	for _, name := range Names() {
		recs, h, err := ReadAll(name)
		require.NoError(t, err, name)
		p, err := trace.LookupPreset(h.Meta["preset"])
		require.NoError(t, err, name)
		seed, err := strconv.ParseUint(h.Meta["seed"], 10, 64)
		require.NoError(t, err, name)
		assert.Equal(t, []string{"fdgen --preset " + p.Name + " --seed 1 -o traces/" + name}, h.Comments, name)
		assert.Equal(t, p.Config.Interval, h.Interval, name)
		want, err := trace.Generate(p.Config, trace.NewRand(seed))
		require.NoError(t, err, name)
		require.Equal(t, want, recs, name)
	}
}

func TestShapes(t *testing.T) {
	stats := map[string]trace.Stats{}
	for _, name := range Names() {
		recs, _, err := ReadAll(name)
		require.NoError(t, err)
		stats[name] = trace.Summarize(recs)
	}
	assert.GreaterOrEqual(t, stats["wan.fdkit.xz"].LongestBurst, uint64(1000), "the wan trace holds a long burst")
	assert.InDelta(t, 0.15, stats["jitter.fdkit.gz"].LossRate, 0.03)
	assert.Zero(t, stats["stable.fdkit.gz"].Lost)
	assert.Zero(t, stats["gc-pause.fdkit.gz"].Lost)
	assert.Greater(t, stats["gc-pause.fdkit.gz"].InterArrival.Max, 600*time.Millisecond)
}

func TestOpenError(t *testing.T) {
	_, err := Open("nope.gz")
	assert.Error(t, err)
}
