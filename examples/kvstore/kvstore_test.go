package kvstore

import (
	"context"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

var key = []byte("kvstore-test-key-0123456789abcdef"[:32])

// stage1 is the configuration of a member while encryption is being
// turned on: it holds the key, sends plain and accepts both.
func stage1(id string) agent.Config {
	return agent.Config{
		ID: swim.ID(id), Label: "kv-test", Keys: [][]byte{key}, AcceptPlain: true, SendPlain: true,
		Protocol:     swim.Config{ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond},
		LeaveTimeout: new(200 * time.Millisecond),
	}
}

func newStore(t *testing.T, cfg agent.Config) *Store {
	t.Helper()
	s, err := New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// viaLocalhost is s's address with the host name "localhost".
func viaLocalhost(s *Store) string {
	return "localhost:" + strconv.Itoa(int(netip.MustParseAddrPort(s.Agent().Self().Addr).Port()))
}

func everywhere(t *testing.T, stores []*Store, key, want string, set bool, what string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, s := range stores {
			if v, ok := s.Get(key); ok != set || v != want {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, what)
}

// The store as a service runs it: members join through "localhost",
// share a cluster label, and encryption is turned on in three stages
// while writes keep flowing; a member joining at the end gets the whole
// store over a stream; members without the key or with another label
// never join.
func TestStoreEncryptionTurnedOnWhileRunning(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stores []*Store
	for i := range 3 {
		s := newStore(t, stage1("kv"+strconv.Itoa(i)))
		if i > 0 {
			require.NoError(t, s.Join(ctx, viaLocalhost(stores[0])))
		}
		stores = append(stores, s)
	}
	require.NoError(t, stores[0].Set(ctx, "a", "1"))
	everywhere(t, stores, "a", "1", true, "stage 1 (plain on the wire): a set")

	for _, s := range stores {
		require.NoError(t, s.Agent().SetSendPlain(false))
	}
	require.NoError(t, stores[1].Set(ctx, "b", "2"))
	everywhere(t, stores, "b", "2", true, "stage 2 (sealed, plain accepted): b set")
	// The plain packets sent before the switch are read within
	// milliseconds, or a loaded machine's stall later: wait until none has
	// come for a second (a member still sending plain sends some every
	// 100 ms period).
	last, since := stores[0].Agent().Stats().PlainAccepted, time.Now()
	require.Eventually(t, func() bool {
		if p := stores[0].Agent().Stats().PlainAccepted; p != last {
			last, since = p, time.Now()
		}
		return time.Since(since) >= time.Second
	}, 30*time.Second, 50*time.Millisecond, "plain packets still arrive in stage 2")
	plain := last
	require.NoError(t, stores[2].Set(ctx, "c", "3"))
	everywhere(t, stores, "c", "3", true, "stage 2: c set")
	assert.Equal(t, plain, stores[0].Agent().Stats().PlainAccepted, "plain packets still arrive in stage 2")

	for _, s := range stores {
		require.NoError(t, s.Agent().SetAcceptPlain(false))
	}
	require.NoError(t, stores[2].Delete(ctx, "a"))
	everywhere(t, stores, "a", "", false, "stage 3 (sealed only): a deleted")
	for _, s := range stores {
		assert.Zero(t, s.Agent().Stats().AuthFailures, "%s", s.Agent().Self().ID)
		assert.Zero(t, s.Rejected())
	}

	// A late member, sealed only from the start, receives the store.
	late := stage1("kv-late")
	late.AcceptPlain, late.SendPlain = false, false
	l := newStore(t, late)
	require.NoError(t, l.Join(ctx, viaLocalhost(stores[1])))
	everywhere(t, []*Store{l}, "b", "2", true, "the late member got the store")
	everywhere(t, []*Store{l}, "c", "3", true, "the late member got the store")
	everywhere(t, []*Store{l}, "a", "", false, "the late member got the tombstone")

	// Members without the key, or with another label, are refused.
	for _, c := range []agent.Config{
		{ID: "plain", Label: "kv-test", Plain: true},
		{ID: "other-label", Label: "kv-prod", Keys: [][]byte{key}},
	} {
		c.LeaveTimeout = new(time.Duration(0))
		o := newStore(t, c)
		short, stop := context.WithTimeout(ctx, 500*time.Millisecond)
		assert.Error(t, o.Join(short, viaLocalhost(stores[0])), "%s joined", c.ID)
		stop()
		assert.Zero(t, o.Len())
	}
	assert.Len(t, stores[0].Agent().Members(), 4)
}

// pair starts two stores, kv-a and kv-b, b joined to a.
func pair(t *testing.T) (context.Context, *Store, *Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	a := newStore(t, stage1("kv-a"))
	b := newStore(t, stage1("kv-b"))
	require.NoError(t, b.Join(ctx, a.Agent().Self().Addr))
	return ctx, a, b
}

// Concurrent writes of one key settle on one value everywhere (last
// writer wins on the Lamport clock, ties by member ID).
func TestConcurrentWritesConverge(t *testing.T) {
	ctx, a, b := pair(t)
	require.NoError(t, a.Set(ctx, "k", "from a"))
	// b's write has a's Lamport time (a's write has not reached b yet:
	// the tie goes to the larger ID, kv-b) or a later one: b's wins.
	require.NoError(t, b.Set(ctx, "k", "from b"))
	everywhere(t, []*Store{a, b}, "k", "from b", true, "concurrent writes")
	assert.ErrorIs(t, a.Set(ctx, "big", string(make([]byte, swim.MaxBroadcastLen))), ErrTooLarge)
}

// Messages that do not decode are counted and change nothing.
func TestGarbageMessagesRejected(t *testing.T) {
	ctx, a, b := pair(t)
	for _, m := range [][]byte{[]byte("x"), []byte("u{"), []byte("s[1]")} {
		require.NoError(t, b.Agent().SendTo(ctx, a.Agent().Self().ID, m))
	}
	require.Eventually(t, func() bool { return a.Rejected() == 3 }, 5*time.Second, 10*time.Millisecond)
	assert.Zero(t, a.Len())
}

// A write that a member missed (here applied at a alone, never
// broadcast: a lost datagram's effect) reaches it when it pulls a's store
// (Repair, which every store runs every RepairInterval): broadcasts are
// best effort, and before Repair a missed write stayed missing for good
// (usr30 M1).
func TestRepairBringsMissedWrite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := func(id string) agent.Config {
		return agent.Config{ID: swim.ID(id), Plain: true,
			Protocol:     swim.Config{ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond},
			LeaveTimeout: new(200 * time.Millisecond)}
	}
	a, b := newStore(t, cfg("a")), newStore(t, cfg("b"))
	require.ErrorIs(t, b.Repair(ctx), errNoMember, "alone")
	require.NoError(t, b.Join(ctx, a.Agent().Self().Addr))
	a.mu.Lock()
	require.True(t, a.apply(entry{Key: "missed", Value: "v", Time: a.clock + 1, Writer: "a"}, a.clock))
	a.mu.Unlock()
	_, ok := b.Get("missed")
	require.False(t, ok)
	require.Eventually(t, func() bool {
		rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
		defer rcancel()
		_ = b.Repair(rctx) // a sends its store to b at most once per five seconds
		v, ok := b.Get("missed")
		return ok && v == "v"
	}, 20*time.Second, 100*time.Millisecond, "the missed write reached b")
}
