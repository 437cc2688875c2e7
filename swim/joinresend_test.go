package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// joinTimes returns when m sent joins, in whole seconds, ticking it up
// to until.
func joinTimes(m *Member, until time.Duration) []time.Duration {
	var at []time.Duration
	tickUntil(m, until, func(now time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			if p.Kind == MsgJoin {
				at = append(at, now/time.Second)
			}
		}
	})
	return at
}

// A join that nothing answers is resent every ProbeInterval until
// StopJoin; a new Join starts the resends again, and a view that answers
// after StopJoin still completes the join.
func TestStopJoin(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.ProbeInterval = time.Second })
	assert.NoError(t, a.Join(0, []string{"b:7946"}))
	assert.Len(t, only(t, a.Ready().Packets, MsgJoin), 1)
	assert.Equal(t, []time.Duration{1, 2, 3}, joinTimes(a, 3500*time.Millisecond))

	a.StopJoin()
	assert.Empty(t, joinTimes(a, 600*time.Second), "no join after StopJoin")
	assert.True(t, a.Joining(), "still unanswered")

	assert.NoError(t, a.Join(600*time.Second, []string{"b:7946"}))
	pk := only(t, a.Ready().Packets, MsgJoin)
	assert.Len(t, pk, 1)
	assert.Equal(t, []time.Duration{601, 602}, joinTimes(a, 602*time.Second))

	a.StopJoin()
	b := newTest(t, "b", ModeLifeguard, nil)
	assert.NoError(t, b.Step(602*time.Second, &pk[0]))
	out, _ := drain(b)
	for _, s := range only(t, out, MsgSync) {
		assert.NoError(t, a.Step(603*time.Second, &s))
	}
	assert.False(t, a.Joining(), "a late view completes the join")
	assert.Equal(t, 2, a.NumAlive())
}

// SetJoinSeeds sends nothing itself: the resends go to the new addresses
// from the next one on, and with none they stop, as after StopJoin.
func TestSetJoinSeeds(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.ProbeInterval = time.Second })
	assert.NoError(t, a.Join(0, []string{"b:7946", "c:7946"}))
	assert.Len(t, only(t, a.Ready().Packets, MsgJoin), 2)

	a.SetJoinSeeds([]string{"c:7946", "d:7946"})
	assert.Empty(t, only(t, a.Ready().Packets, MsgJoin), "nothing sent at once")
	var to []string
	tickUntil(a, 2500*time.Millisecond, func(_ time.Duration, pk []Packet, _ []Event) {
		for _, p := range only(t, pk, MsgJoin) {
			to = append(to, p.To.Addr)
		}
	})
	assert.Equal(t, []string{"c:7946", "d:7946", "c:7946", "d:7946"}, to)

	a.SetJoinSeeds(nil)
	assert.Empty(t, joinTimes(a, 600*time.Second), "no join after the last address went")
	assert.True(t, a.Joining(), "still unanswered")
}

// SetJoinSeeds changes only where the resends go: a late view from an
// address it dropped still completes the join, as after StopJoin (a Join
// call through b gave up while one through c waits). It used to replace
// the addresses whose views answer the join too (rev31, F3).
func TestSetJoinSeedsKeepsAnswers(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.ProbeInterval = time.Second })
	assert.NoError(t, a.Join(0, []string{"b:7946", "c:7946"}))
	pk := only(t, a.Ready().Packets, MsgJoin)
	a.SetJoinSeeds([]string{"c:7946"})
	b := newTest(t, "b", ModeLifeguard, nil)
	for _, p := range pk {
		if p.To.Addr == "b:7946" {
			assert.NoError(t, b.Step(100*time.Millisecond, &p))
		}
	}
	out, _ := drain(b)
	require.NotEmpty(t, only(t, out, MsgSync))
	for _, s := range only(t, out, MsgSync) {
		assert.NoError(t, a.Step(200*time.Millisecond, &s))
	}
	assert.Equal(t, 2, a.NumAlive(), "b's view merged")
	assert.False(t, a.Joining(), "b's late view completes the join")
}

// SetJoinSeeds with addresses after StopJoin resumes the resends there,
// from the next resend on.
func TestSetJoinSeedsAfterStopJoin(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.ProbeInterval = time.Second })
	assert.NoError(t, a.Join(0, []string{"b:7946"}))
	a.Ready()
	a.StopJoin()
	assert.Empty(t, joinTimes(a, 3500*time.Millisecond), "stopped")
	a.SetJoinSeeds([]string{"c:7946"})
	assert.Empty(t, only(t, a.Ready().Packets, MsgJoin), "nothing sent at once")
	a.Tick(3600 * time.Millisecond)
	var to []string
	for _, p := range only(t, a.Ready().Packets, MsgJoin) {
		to = append(to, p.To.Addr)
	}
	tickUntil(a, 5500*time.Millisecond, func(_ time.Duration, pk []Packet, _ []Event) {
		for _, p := range only(t, pk, MsgJoin) {
			to = append(to, p.To.Addr)
		}
	})
	assert.Equal(t, []string{"c:7946", "c:7946"}, to)
}
