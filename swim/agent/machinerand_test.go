package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// firstProbeAt returns when a member with ID id and the state machine's
// random source machineRand(seed, id), started at 0, sends its first
// ping.
func firstProbeAt(t *testing.T, seed uint64, id swim.ID) time.Duration {
	t.Helper()
	m, err := swim.New(swim.Config{Self: swim.Node{ID: id, Addr: "127.0.0.1:7946"}}, machineRand(seed, id))
	require.NoError(t, err)
	m.Bootstrap([]swim.Node{{ID: "peer-1", Addr: "127.0.0.1:7947"}, {ID: "peer-2", Addr: "127.0.0.1:7948"}})
	now := time.Duration(0)
	m.Tick(now)
	for now <= 2*m.Config().ProbeInterval {
		for _, p := range m.Ready().Packets {
			if p.Kind == swim.MsgPing {
				return now
			}
		}
		at, ok := m.NextDeadline()
		require.True(t, ok)
		now = max(at, now+time.Millisecond)
		m.Tick(now)
	}
	t.Fatal("no ping within two periods")
	return 0
}

// Twenty agents given one Config.Seed (and the zero seed) send their
// first probes at twenty different points of their first period: the
// phase comes from the seed mixed with the ID, not the seed alone. The
// empty ID (refused by swim.New, but hashed all the same) gets a source
// of its own, reproducible and different from every other ID's.
func TestSameSeedFirstProbePhases(t *testing.T) {
	for _, seed := range []uint64{0, 7} {
		phases := map[time.Duration]swim.ID{}
		for i := range 20 {
			id := swim.ID(fmt.Sprintf("node-%d", i))
			at := firstProbeAt(t, seed, id)
			assert.Less(t, at, swim.DefaultProbeInterval, "%s: within its first period", id)
			if prev, dup := phases[at]; dup {
				t.Errorf("seed %d: %s and %s probe first at %v", seed, prev, id, at)
			}
			phases[at] = id
		}
		assert.Equal(t, firstProbeAt(t, seed, "node-3"), firstProbeAt(t, seed, "node-3"), "reproducible")
	}
	empty := machineRand(7, "").Uint64()
	assert.Equal(t, empty, machineRand(7, "").Uint64())
	assert.NotEqual(t, empty, machineRand(7, "node-0").Uint64())
	assert.NotEqual(t, empty, machineRand(8, "").Uint64())
}

// Without a Seed, the state machine's random source at Start, whose
// numbers are the nonces of the pings that verify members (swim's proof
// of receipt: an ack echoing one shows the member receives at its
// address), cannot be rebuilt from the member's ID and the time it
// started: the default Seed was the start time in nanoseconds, so that
// whoever knew roughly when a member started could predict its nonces
// and verify ghosts at a victim's address without receiving there. Two
// agents without a Seed draw different numbers; one with a Seed draws
// machineRand's.
func TestDefaultStateRandNotFromClock(t *testing.T) {
	const id = "m"
	t0 := time.Now().UnixNano()
	cfg, err := withDefaults(Config{})
	require.NoError(t, err)
	r := stateRand(cfg.Seed, id)
	t1 := time.Now().UnixNano()
	first := r.Uint64()
	for s := t0; s <= t1; s++ {
		if machineRand(uint64(s), id).Uint64() == first {
			t.Fatalf("the default source is machineRand of the start time %d ns", s)
		}
	}
	cfg2, err := withDefaults(Config{})
	require.NoError(t, err)
	assert.NotEqual(t, first, stateRand(cfg2.Seed, id).Uint64(), "two agents without a Seed")
	assert.Equal(t, machineRand(7, id).Uint64(), stateRand(7, id).Uint64(), "with a Seed")
}
