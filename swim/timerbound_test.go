package swim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A long ProbeInterval (13 days) in a group of 1000 members gives a
// suspicion timeout of 6·4·3·ProbeInterval (β·α·log10 n), which fits a
// time.Duration; it must not overflow on the way. Before,
// suspicionMin multiplied α, log10 n (in thousandths) and the interval
// before dividing, which overflowed for intervals above about 9 days at
// n = 1000 (27 days at n ≤ 10): the deadline came out in the past, and a
// suspicion was an instant declaration.
func TestLongProbeIntervalSuspicionDoesNotOverflow(t *testing.T) {
	const pi = time.Duration(1 << 50)
	peers := make([]string, 999)
	for i := range peers {
		peers[i] = fmt.Sprintf("m%04d", i)
	}
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.ProbeInterval = pi }, peers...)
	a.Tick(0)
	drain(a)
	require.NoError(t, a.Step(time.Second, gossipFrom(peers[0], Update{Kind: UpdateSuspect, Node: node(peers[1]), From: ID(peers[0])})))
	st, _ := a.Member(ID(peers[1]), time.Second)
	require.Equal(t, StateSuspect, st.State)
	// Min = 4·3·pi, Max = 6·Min; no confirmation yet: Max, whole ms.
	assert.Equal(t, time.Second+(72*pi).Truncate(time.Millisecond), st.SuspicionDeadline)
	a.Tick(2 * time.Second)
	assert.Equal(t, StateSuspect, a.State(ID(peers[1])), "not declared a second after")

	assert.Equal(t, 4*3*pi, suspicionMin(4, 1000, pi))
	assert.Equal(t, time.Duration(4*1505*1000/1000)*time.Millisecond, suspicionMin(4, 32, time.Second), "log10 32 in thousandths, as before")
}

// A configuration whose longest timer does not fit a time.Duration with
// room to spare (maxTimer) is refused by New, with an error naming the
// fields, instead of timers that wrap around into the past.
func TestConfigRefusesOverflowingTimers(t *testing.T) {
	ok := []func(*Config){
		nil,
		func(c *Config) { c.ProbeInterval = time.Hour },
		func(c *Config) { c.ProbeInterval, c.ProbeTimeout = 1, 1 },
		func(c *Config) { c.ProbeInterval = 1 << 50 },
	}
	for i, mut := range ok {
		cfg := Config{Self: node("a")}
		if mut != nil {
			mut(&cfg)
		}
		_, err := New(cfg, rand.New(rand.NewPCG(1, 1)))
		assert.NoError(t, err, "config %d", i)
	}
	bad := map[string]func(*Config){
		"ProbeInterval":           func(c *Config) { c.ProbeInterval = 1 << 56 },
		"SuspicionMult":           func(c *Config) { c.SuspicionMult = 1 << 40 },
		"SuspicionMaxTimeoutMult": func(c *Config) { c.SuspicionMaxTimeoutMult = 1 << 40 },
		"AwarenessMaxMultiplier":  func(c *Config) { c.AwarenessMaxMultiplier = 1 << 40 },
		"RetransmitMult":          func(c *Config) { c.RetransmitMult = 1 << 40 },
		"PushPullInterval":        func(c *Config) { c.MaxMembers = 1 << 40 },
		"DeadRetention":           func(c *Config) { c.DeadRetention = new(time.Duration(1 << 62)) },
		"ReconnectInterval":       func(c *Config) { c.ReconnectInterval = new(time.Duration(1 << 62)) },
	}
	for name, mut := range bad {
		cfg := Config{Self: node("a")}
		mut(&cfg)
		_, err := New(cfg, rand.New(rand.NewPCG(1, 1)))
		require.Error(t, err, name)
		assert.ErrorIs(t, err, ErrConfig, name)
		assert.Contains(t, err.Error(), name, name)
	}
}
