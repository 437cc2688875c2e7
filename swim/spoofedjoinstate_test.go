package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atk29b: the application state that comes with the seed's answer to a
// join is delivered with RemoteState.Join true (memberlist's
// MergeRemoteState(buf, join): an application tells a join's state from
// an anti-entropy exchange's, as Serf ignores replayed events on join).
// A view spoofed from the seed's address, without a token and without a
// version range (format1View), answers a format-2 member's join at once
// since e795385, so the seed's genuine answer, echoing the token and
// carrying the seed's state, arrives after Joining turned false and its
// state is delivered with Join false: to the application, not the answer
// to its join. At 2451311 the spoofed view answered nothing before
// joinFallbackPeriods, and the seed's state came with Join true.
func TestSpoofedRangelessViewHidesJoinState(t *testing.T) {
	cfg := func(c *Config) { c.ProbeInterval = time.Second }
	a := newTest(t, "a", ModeLifeguard, cfg)
	s := newTest(t, "s", ModeLifeguard, func(c *Config) {
		cfg(c)
		c.LocalState = func(join bool) []byte {
			if join {
				return []byte("join")
			}
			return []byte("sync")
		}
	}, "r00")
	ms := []*Member{a, s}
	for _, m := range ms {
		m.Tick(0)
	}
	drain(s)
	require.NoError(t, a.Join(0, []string{s.Self().Addr}))
	spoofed := &Packet{Kind: MsgSync, From: s.Self(), To: a.Self(), Updates: []Update{
		{Kind: UpdateAlive, Node: s.Self(), From: s.Self().ID},
	}}
	require.NoError(t, a.Step(time.Millisecond, spoofed))
	var states []RemoteState
	for {
		var out []Packet
		for _, m := range ms {
			r := m.Ready()
			out = append(out, r.Packets...)
			if m == a {
				states = append(states, r.RemoteStates...)
			}
		}
		if len(out) == 0 {
			break
		}
		for _, p := range out {
			for _, to := range ms {
				if p.To.Addr == to.Self().Addr {
					_ = to.Step(2*time.Millisecond, &p)
				}
			}
		}
	}
	require.NotEmpty(t, states, "the seed's answer carried its state")
	for _, st := range states {
		if st.From.ID == s.Self().ID {
			assert.Equal(t, "join", string(st.State), "the seed answered a join")
			assert.True(t, st.Join, "the seed's state answers this member's join")
		}
	}
}
