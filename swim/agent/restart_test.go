package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// TestRestartRejoins: a member killed (its socket closed, no leave) is
// declared dead; restarted with the same ID on the same address it refutes
// the old death with a higher incarnation and every member sees it alive.
func TestRestartRejoins(t *testing.T) {
	as := group(t, 5, Config{Plain: true})
	victim := as[4]
	id, addr := victim.Self().ID, victim.Self().Addr
	require.NoError(t, victim.tr.Close())
	require.Eventually(t, func() bool {
		for _, a := range as[:4] {
			if state(a, id) != swim.StateDead {
				return false
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "declared dead")
	<-victim.Done()
	assert.ErrorContains(t, victim.Err(), "transport closed")

	back := start(t, Config{Plain: true, ID: id, Bind: addr, Seed: 99})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, back.Join(ctx, as[0].Self().Addr, as[1].Self().Addr, as[2].Self().Addr, as[3].Self().Addr))
	require.Eventually(t, func() bool {
		for _, a := range as[:4] {
			if state(a, id) != swim.StateAlive {
				return false
			}
		}
		return alive(back) == 5
	}, 10*time.Second, 20*time.Millisecond, "rejoined everywhere")
}

func state(a *Agent, id swim.ID) swim.State {
	for _, m := range a.Members() {
		if m.Node.ID == id {
			return m.State
		}
	}
	return 0
}
