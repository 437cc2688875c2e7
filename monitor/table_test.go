package monitor

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Peers whose hashes collide share a probe chain; removing one in the middle
// leaves a tombstone, so the peers after it are still found, and a new peer
// reuses the tombstone's slot.
func TestTableCollisionsAndTombstones(t *testing.T) {
	var s shard
	a, b, c := &peer{name: "a"}, &peer{name: "b"}, &peer{name: "c"}
	s.insert(5<<16, a)
	s.insert(5<<16, b)
	s.insert(6<<16, c) // starts at b's slot: after b
	tab := s.tab.Load()
	require.Len(t, tab.slots, minSlots)
	assert.Same(t, a, tab.slots[5].p.Load())
	assert.Same(t, b, tab.slots[6].p.Load())
	assert.Same(t, c, tab.slots[7].p.Load())
	assert.Same(t, b, s.find(5<<16, "b"))
	assert.Nil(t, s.find(5<<16, "c"), "same hash, other name")
	assert.Nil(t, s.find(6<<16, "a"), "same name, other hash")

	require.True(t, s.remove(5<<16, "b"))
	assert.False(t, s.remove(5<<16, "b"))
	assert.Same(t, tombstone, tab.slots[6].p.Load())
	assert.Nil(t, s.find(5<<16, "b"))
	assert.Same(t, c, s.find(6<<16, "c"), "found past the tombstone")
	assert.Equal(t, 2, s.live)
	assert.Equal(t, 3, s.used)

	d := &peer{name: "d"}
	s.insert(5<<16, d)
	assert.Same(t, d, tab.slots[6].p.Load(), "the tombstone's slot is reused")
	assert.Equal(t, 3, s.used)
	assert.ElementsMatch(t, []*peer{a, c, d}, s.appendPeers(nil))
}

// One shard with many peers: the table grows (keeping at most three quarters
// of its slots in use), every peer stays reachable, and churn (remove, add others) does
// not grow it without bound because a rebuild drops the tombstones.
func TestTableGrowthAndChurn(t *testing.T) {
	m, err := New(Config{Shards: 1})
	require.NoError(t, err)
	s := &m.shards[0]
	const n = 1000
	name := func(i int) string { return fmt.Sprintf("peer-%d", i) }
	for i := range n {
		require.NoError(t, m.Heartbeat(name(i), Beat{}))
	}
	assert.Equal(t, n, m.Len())
	assert.Len(t, m.Snapshot(), n)
	// The 769th peer made the table grow to the power of two ≥ 2·769.
	assert.Equal(t, 2048, len(s.tab.Load().slots))
	for i := range n {
		p := m.lookup(name(i))
		require.NotNil(t, p, name(i))
		assert.Equal(t, name(i), p.name)
	}
	next := n
	for range 20 {
		for i := next - n; i < next-n/2; i++ {
			require.True(t, m.Remove(name(i)))
		}
		for range n / 2 {
			require.NoError(t, m.Heartbeat(name(next), Beat{}))
			next++
		}
		require.Equal(t, n, m.Len())
		require.Equal(t, n, s.live)
		require.LessOrEqual(t, 4*s.used, 3*len(s.tab.Load().slots))
	}
	assert.LessOrEqual(t, len(s.tab.Load().slots), 2048)
	seen := map[string]bool{}
	for _, st := range m.Snapshot() {
		assert.False(t, seen[st.Peer], "each peer once")
		seen[st.Peer] = true
	}
	assert.Len(t, seen, n)
	for i := range next {
		_, ok := m.Status(name(i))
		assert.Equal(t, i >= next-n, ok, name(i))
	}
}

// Lock-free lookups while another goroutine adds and removes peers in the
// same shard, replacing its table again and again (run with -race): a peer
// that exists throughout is never missed, and concurrent heartbeats for a
// new peer create it once.
func TestTableConcurrentLookups(t *testing.T) {
	m, err := New(Config{Shards: 1})
	require.NoError(t, err)
	const stable = 50
	for i := range stable {
		require.NoError(t, m.Heartbeat(fmt.Sprint("stable-", i), Beat{}))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				n := fmt.Sprint("stable-", (k+g)%stable)
				if m.lookup(n) == nil {
					t.Errorf("%s missed", n)
					return
				}
			}
		}()
	}
	var cw sync.WaitGroup
	for g := range 4 {
		cw.Add(1)
		go func() {
			defer cw.Done()
			for i := range 2000 {
				n := fmt.Sprint("new-", i)
				assert.NoError(t, m.Heartbeat(n, Beat{}))
				if g == 0 && i%3 == 0 {
					m.Remove(fmt.Sprint("new-", i/2))
				}
			}
		}()
	}
	cw.Wait()
	close(stop)
	wg.Wait()
	assert.Equal(t, m.Len(), len(m.Snapshot()))
	seen := map[string]bool{}
	for _, st := range m.Snapshot() {
		assert.False(t, seen[st.Peer], "%s twice", st.Peer)
		seen[st.Peer] = true
	}
}
