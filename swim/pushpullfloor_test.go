package swim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An anti-entropy interval shorter than the protocol period is refused:
// with PushPullInterval 1 ns every Tick was due an exchange and announced
// the next one 1 ns later, so a member spun, one exchange per Tick
// (fdswim agent --push-pull 1ns: 157,592 exchanges in 5 s by one of two
// agents, a full core each). 0 (off) and one period are accepted, and so
// is the default under a period longer than it.
func TestPushPullIntervalFloor(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, pp := range []time.Duration{time.Nanosecond, time.Millisecond, 999 * time.Millisecond} {
		_, err := New(Config{Self: node("a"), ProbeInterval: time.Second, PushPullInterval: new(pp)}, r)
		assert.ErrorIs(t, err, ErrConfig, "PushPullInterval %v", pp)
		assert.ErrorContains(t, err, "PushPullInterval", "PushPullInterval %v", pp)
	}
	for _, pp := range []time.Duration{0, time.Second, time.Hour} {
		_, err := New(Config{Self: node("a"), ProbeInterval: time.Second, PushPullInterval: new(pp)}, r)
		require.NoError(t, err, "PushPullInterval %v", pp)
	}
	_, err := New(Config{Self: node("a"), ProbeInterval: time.Hour, ProbeTimeout: time.Second}, r)
	require.NoError(t, err, "the default interval under a 1 h period")
	_, err = New(Config{Self: node("a"), ProbeInterval: time.Hour, ProbeTimeout: time.Second, PushPullInterval: new(time.Second)}, r)
	assert.ErrorIs(t, err, ErrConfig, "below the default under a 1 h period")
}
