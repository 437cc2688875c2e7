package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mergePushes returns the view transfers in pk that a sends (its merging
// push), by their receiver's ID.
func mergePushes(a *Member, pk []Packet) []ID {
	var to []ID
	for _, p := range pk {
		if p.Kind == MsgSync && p.From.ID == a.Self().ID {
			to = append(to, p.To.ID)
		}
	}
	return to
}

// A merging format-2 joiner answered at once by a genuine format-1 seed,
// which never echoes the token, holds its push until the asking ends
// (joinFallbackPeriods after the answer, a deadline of its own), then
// sends it once, to the seed that answered; a JoinTokenless joiner, which
// has no token whose echo it could wait for, pushes at once.
func TestMergePushHeldForFormat1Seed(t *testing.T) {
	cfg := func(c *Config) { c.ProbeInterval = time.Second }
	a := newTest(t, "a", ModeLifeguard, cfg, "b")
	a.Tick(0)
	drain(a)
	require.NoError(t, a.Join(0, []string{node("s").Addr}))
	drain(a)
	require.NoError(t, a.Step(500*time.Millisecond, rangeless(a.Self(), "c")))
	assert.False(t, a.Joining(), "the format-1 seed's view answers at once")
	pk, _ := drain(a)
	assert.Empty(t, mergePushes(a, pk), "no push before the seed's own answer or the end of the asking")
	var pushed []time.Duration
	var to []ID
	tickUntil(a, 10*time.Second, func(now time.Duration, pk []Packet, _ []Event) {
		for _, id := range mergePushes(a, pk) {
			pushed, to = append(pushed, now), append(to, id)
		}
	})
	assert.Equal(t, []time.Duration{3500 * time.Millisecond}, pushed, "one push, when the asking ends")
	assert.Equal(t, []ID{"s"}, to, "to the seed that answered")

	tl := newTest(t, "a", ModeLifeguard, func(c *Config) { cfg(c); c.JoinTokenless = true }, "b")
	tl.Tick(0)
	drain(tl)
	require.NoError(t, tl.Join(0, []string{node("s").Addr}))
	drain(tl)
	require.NoError(t, tl.Step(500*time.Millisecond, rangeless(tl.Self(), "c")))
	pk, _ = drain(tl)
	assert.Equal(t, []ID{"s"}, mergePushes(tl, pk), "a JoinTokenless joiner pushes at once")
}
