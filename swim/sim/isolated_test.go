package sim

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// isolatedResult is one run of isolatedRun.
type isolatedResult struct {
	healthyDead  int // declarations of a healthy member by a healthy observer
	flaps        int // declarations of the isolated member seen by member 1
	viewRequests int // the isolated member's (swim.Stats.ViewRequests)
}

// isolatedRun loses every packet but joins and syncs (MsgJoin, MsgSync) to
// and from member 0 of n from 10 s to 130 s, with no stream probe: a member
// whose datagrams are dropped while streams pass.
func isolatedRun(t *testing.T, n int, seed uint64, mode swim.Mode) isolatedResult {
	const victim = 0
	blocked := false
	s, err := New(Config{N: n, Seed: seed, StartSpread: time.Second, Member: swim.Config{Mode: mode},
		Drop: func(_ time.Duration, from, to int, p *swim.Packet) bool {
			return blocked && (from == victim || to == victim) && p.Kind != swim.MsgJoin && p.Kind != swim.MsgSync
		}})
	require.NoError(t, err)
	var r isolatedResult
	s.SetEventHook(func(_ time.Duration, obs int, ev swim.Event) {
		if ev.Kind != swim.EventDead || obs == victim {
			return
		}
		if ev.Node.ID != s.Node(victim).ID {
			r.healthyDead++
		} else if obs == 1 {
			r.flaps++
		}
	})
	s.At(10*time.Second, func() { blocked = true })
	s.RunUntil(130 * time.Second)
	r.viewRequests = s.Member(victim).Stats().ViewRequests
	return r
}

// A member whose datagrams are lost while its joins and view transfers
// pass declares every other member dead and is declared dead in turn.
// Over 30 seeds in each mode: no healthy member is declared dead by a
// healthy one (the isolated member's blind verdicts stay out of the views
// it sends), and the isolated member's view requests back off, so that it
// rejoins and is declared dead again a few times in 120 s, not every few
// periods.
func TestSimIsolatedMemberBounded(t *testing.T) {
	for _, mode := range []swim.Mode{swim.ModeSWIM, swim.ModeLifeguard, swim.ModeDetector} {
		var worst isolatedResult
		for seed := uint64(1); seed <= 30; seed++ {
			r := isolatedRun(t, 8, seed, mode)
			assert.Zero(t, r.healthyDead, "%v seed %d: healthy members declared dead by healthy ones", mode, seed)
			// Back-off from 1 s doubling to ReconnectInterval (30 s):
			// requests 1, 2, 4, 8, 16 s apart, then 30 s: at most 9 in
			// the 120 s (the first ones once all are dead, after 10 s).
			assert.LessOrEqual(t, r.viewRequests, 9, "%v seed %d: view requests", mode, seed)
			assert.LessOrEqual(t, r.flaps, 6, "%v seed %d: the isolated member declared dead", mode, seed)
			worst.healthyDead = max(worst.healthyDead, r.healthyDead)
			worst.flaps = max(worst.flaps, r.flaps)
			worst.viewRequests = max(worst.viewRequests, r.viewRequests)
		}
		t.Logf("%v, worst of 30 seeds: %d healthy declared dead, isolated member declared dead %d times, %d view requests",
			mode, worst.healthyDead, worst.flaps, worst.viewRequests)
	}
}
