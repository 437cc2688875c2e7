package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFormat1JoinAtOnce (usr28 F2): a member writing wire format 1 that
// joins, through a format-2 member or a format-1 one, completes its Join
// within half a protocol period, as a format-2 join does, and no member
// is suspected in the periods that follow; a format-2 member joining
// through a format-1 one completes its Join as soon. The joins are still
// resent after the answer, for at most three periods (swim's
// joinState.askUntil), and then stop. Format 1 carries no join token (and
// a format-2 seed echoes none to a join without one): the view answered
// only after three periods of views (swim.Member.Joining), so that
// fdswim's first attempts (0.5 s, 1 s and 2 s at a 1 s period) ended
// with "no member answered" warnings and the join took 6.5 s, and the
// joiner held the view's members unverified: its first probes of a
// member it had heard little from were silent (swim/receipt.go) and
// suspected it. (A format-2 member that joins through a format-1 one
// still holds that view's members unverified, as the view cannot echo
// its token: not checked here.)
func TestFormat1JoinAtOnce(t *testing.T) {
	proto := swim.Config{ProbeInterval: 400 * time.Millisecond, ProbeTimeout: 200 * time.Millisecond}
	var as []*Agent
	join := func(c Config, seed int) time.Duration {
		t.Helper()
		c.Plain, c.Protocol, c.Seed = true, proto, uint64(126000100+len(as))
		c.ID = swim.ID(fmt.Sprintf("m%02d", len(as)))
		a := start(t, c)
		as = append(as, a)
		if seed < 0 {
			return 0
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		t0 := time.Now()
		require.NoError(t, a.Join(ctx, as[seed].Self().Addr), "%s", c.ID)
		return time.Since(t0)
	}
	whole := func() {
		t.Helper()
		require.Eventually(t, func() bool {
			for _, a := range as {
				if alive(a) != len(as) {
					return false
				}
			}
			return true
		}, 10*time.Second, 20*time.Millisecond, "full view")
	}
	join(Config{}, -1)
	took := []time.Duration{
		join(Config{}, 0),               // m01: format 2 through format 2
		join(Config{WireVersion: 1}, 0), // m02: format 1 through format 2
		join(Config{WireVersion: 1}, 2), // m03: format 1 through format 1
	}
	for i, d := range took {
		assert.Less(t, d, proto.ProbeInterval/2, "m%02d's Join took %v (all: %v)", i+1, d, took)
	}
	whole()
	// Some periods of probing: nobody suspected, nobody refuted.
	time.Sleep(8 * proto.ProbeInterval)
	for _, a := range as {
		st := a.Stats().Protocol
		assert.Zero(t, st.Suspicions, "%s suspected a member", a.Self().ID)
		assert.Zero(t, st.Refutations, "%s had to refute", a.Self().ID)
	}
	// The format-1 joiners' joins were still resent after the answer, for
	// at most three periods (over streams: swim's joinFallbackPeriods),
	// and then stopped; the format-2 join's answer echoed its token and
	// ended them at once.
	for i, a := range as {
		n := a.Stats().StreamJoins
		assert.LessOrEqual(t, n, uint64(3), "m%02d's resends", i)
		if i < 2 {
			assert.Zero(t, n, "m%02d's resends", i)
		}
	}
	d := join(Config{}, 2) // m04: format 2 through format 1
	assert.Less(t, d, proto.ProbeInterval/2, "m04's Join through m02")
	whole()
}
