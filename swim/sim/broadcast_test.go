package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// TestBroadcastReachesEveryone: one application broadcast, queued by
// member 0 at 5 s, is delivered exactly once to every other member of
// groups of 32 and 128, without loss and with 5 % loss, riding only on the
// protocol's own packets (docs/algorithms.md, “SWIM: application
// messages”). The time of the last delivery is logged.
func TestBroadcastReachesEveryone(t *testing.T) {
	for _, c := range []struct {
		n    int
		loss float64
	}{{32, 0}, {32, 0.05}, {128, 0}, {128, 0.05}} {
		t.Run(fmt.Sprintf("n=%d loss=%g", c.n, c.loss), func(t *testing.T) {
			if testing.Short() && c.n > 32 && raceOn {
				t.Skip("128 members under -race -short: the 32-member cases run")
			}
			s, err := New(Config{N: c.n, Seed: 11, Loss: c.loss, StartSpread: time.Second})
			require.NoError(t, err)
			got := make([]int, c.n)
			var last time.Duration
			s.SetMessageHook(func(now time.Duration, i int, m swim.Message) {
				assert.Equal(t, swim.Message{From: s.Node(0).ID, Data: []byte("deploy v2"), Broadcast: true, Key: "deploy"}, m)
				got[i]++
				last = now
			})
			s.At(5*time.Second, func() { require.NoError(t, s.Member(0).Broadcast("deploy", []byte("deploy v2"))) })
			s.RunUntil(60 * time.Second)
			assert.Zero(t, got[0], "not delivered to its origin")
			for i := 1; i < c.n; i++ {
				assert.Equal(t, 1, got[i], "member %d", i)
			}
			t.Logf("n=%d loss=%g: all %d delivered, the last %v after queueing", c.n, c.loss, c.n-1, last-5*time.Second)
		})
	}
}

// TestBroadcastSeeds (not under -short): 40 seeds × {no loss, 5 % loss} in
// a group of 128: every broadcast reaches every member exactly once.
func TestBroadcastSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("40 × 2 runs of 128 members; run without -short")
	}
	miss := 0
	var worst time.Duration
	for seed := uint64(1); seed <= 40; seed++ {
		for _, loss := range []float64{0, 0.05} {
			s, err := New(Config{N: 128, Seed: seed, Loss: loss, StartSpread: time.Second})
			require.NoError(t, err)
			got := make([]int, 128)
			var last time.Duration
			s.SetMessageHook(func(now time.Duration, i int, _ swim.Message) { got[i]++; last = now })
			s.At(5*time.Second, func() { require.NoError(t, s.Member(0).Broadcast("", []byte("x"))) })
			s.RunUntil(40 * time.Second)
			for i := 1; i < 128; i++ {
				if got[i] != 1 {
					miss++
				}
			}
			worst = max(worst, last-5*time.Second)
		}
	}
	assert.Zero(t, miss, "members that missed the broadcast or got it twice")
	t.Logf("80 runs of 128 members: %d missed or duplicated of %d; the last delivery at most %v after queueing", miss, 80*127, worst)
}
