package monitor

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collidingNames returns n names (with the given prefix) that fall in shard 0
// of m and whose table start bits (h>>16) agree in their low 10 bits with
// all ones: in every table of up to 1024 slots they start at the last slot,
// so they form one probe chain that wraps around to slot 0.
func collidingNames(m *Monitor, prefix string, n int) []string {
	const bits = 1<<10 - 1
	var out []string
	for i := 0; len(out) < n; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		h := maphash.String(m.seed, name)
		if h&m.mask == 0 && (h>>16)&bits == bits {
			out = append(out, name)
		}
	}
	return out
}

// checkTables checks every shard's table with no writer running: live and
// used match the slots, the load bound holds, each peer sits in the shard
// its hash selects under that hash, is found by a lookup, and no name is in
// the monitor twice. It returns the number of peers.
func checkTables(t *testing.T, m *Monitor) int {
	t.Helper()
	names := map[string]bool{}
	total := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		tab := s.tab.Load()
		live, used := 0, 0
		if tab != nil {
			for j := range tab.slots {
				p := tab.slots[j].p.Load()
				if p == nil {
					continue
				}
				used++
				if p == tombstone {
					continue
				}
				live++
				h := tab.slots[j].hash.Load()
				assert.Equal(t, maphash.String(m.seed, p.name), h, "slot hash of %s", p.name)
				assert.Equal(t, uint64(i), h&m.mask, "%s in shard %d", p.name, i)
				assert.False(t, names[p.name], "%s twice", p.name)
				names[p.name] = true
				assert.Same(t, p, tab.find(h, p.name), "%s found", p.name)
			}
			assert.LessOrEqual(t, 4*used, 3*len(tab.slots), "shard %d load", i)
		}
		assert.Equal(t, s.live, live, "shard %d live", i)
		assert.Equal(t, s.used, used, "shard %d used", i)
		total += live
		s.mu.Unlock()
	}
	return total
}

// Many goroutines heartbeat, query, take handles, sweep, snapshot, remove and
// re-add an overlapping set of names, half of them crafted to share one probe
// chain that wraps around the table (run with -race). Invariants: lookups of
// a name nobody removes never miss; a name is never held by two peers (in a
// snapshot or in the tables); every creation and removal is accounted for
// (creations − removals = Len = peers in the tables); the transitions of the
// peers nobody removes alternate suspected → trusted in Number order.
func TestStressChurnCollisions(t *testing.T) {
	rounds := 4000
	if testing.Short() {
		rounds = 1500
	}
	var creates atomic.Int64
	clk := &ManualClock{}
	var recMu sync.Mutex
	trans := map[string][]Transition{}
	m, err := New(Config{
		Shards: 1,
		Clock:  clk,
		Factory: func() (detector.Detector, error) {
			creates.Add(1)
			return detector.NewFixed(detector.FixedConfig{Timeout: new(time.Millisecond)})
		},
		OnTransition: func(tr Transition) {
			recMu.Lock()
			trans[tr.Peer] = append(trans[tr.Peer], tr)
			recMu.Unlock()
		},
		PauseLimit: new(time.Duration(0)),
	})
	require.NoError(t, err)
	creates.Store(0) // New's probe call

	churn := collidingNames(m, "c", 40)
	for i := range 40 {
		churn = append(churn, fmt.Sprint("r", i))
	}
	// Owned names: each heartbeated by one goroutine only, never removed;
	// half of them collide with the churned ones.
	const workers = 6
	owned := collidingNames(m, "own", 3*workers)
	for i := range 3 * workers {
		owned = append(owned, fmt.Sprint("own-r", i))
	}

	var removed atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			mine := []string{}
			for i := w; i < len(owned); i += workers {
				mine = append(mine, owned[i])
			}
			started := map[string]bool{}
			for r := range rounds {
				n := churn[rng.IntN(len(churn))]
				switch rng.IntN(8) {
				case 0, 1:
					if m.Remove(n) {
						removed.Add(1)
					}
				case 2:
					h, err := m.Handle(n, 0)
					if assert.NoError(t, err) {
						assert.Equal(t, n, h.Peer())
						assert.NoError(t, h.Heartbeat(Beat{}))
					}
				case 3:
					if st, ok := m.State(n); ok {
						assert.Equal(t, n, st.Peer)
						assert.GreaterOrEqual(t, st.Level, 0.0)
					}
				default:
					assert.NoError(t, m.Heartbeat(n, Beat{}))
				}
				o := mine[r%len(mine)]
				if r%7 != 0 { // skipped rounds: suspicions
					assert.NoError(t, m.Heartbeat(o, Beat{}))
					started[o] = true
				}
				for _, o := range mine {
					if !started[o] {
						continue
					}
					if _, ok := m.Status(o); !ok {
						t.Errorf("lookup of %s missed", o)
						return
					}
				}
				if r%16 == 0 {
					clk.Advance(time.Millisecond / 2)
				}
			}
		}()
	}
	var sw sync.WaitGroup
	sw.Add(1)
	go func() {
		defer sw.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			m.Sweep()
			seen := map[string]bool{}
			for _, st := range m.Snapshot() {
				assert.False(t, seen[st.Peer], "%s twice in a snapshot", st.Peer)
				seen[st.Peer] = true
			}
		}
	}()
	wg.Wait()
	close(stop)
	sw.Wait()

	n := checkTables(t, m)
	assert.Equal(t, n, m.Len())
	assert.Equal(t, n, len(m.Snapshot()))
	assert.Equal(t, creates.Load()-removed.Load(), int64(n), "creations − removals")
	recMu.Lock()
	defer recMu.Unlock()
	suspected := 0
	for _, o := range owned {
		ts := trans[o]
		sort.Slice(ts, func(i, j int) bool { return ts[i].Number < ts[j].Number })
		for i, tr := range ts {
			require.Equal(t, uint64(i+1), tr.Number, o)
			want := Suspected
			if i%2 == 1 {
				want = Trusted
			}
			require.Equal(t, want, tr.New, "%s transition %d", o, i)
		}
		suspected += len(ts)
	}
	assert.NotZero(t, suspected, "the skipped rounds must cause suspicions")
}

// Concurrent first heartbeats for the same new names create each once, and
// with MaxPeers the monitor never holds, or reports, more peers than that.
func TestStressCreateRaceMaxPeers(t *testing.T) {
	const maxPeers = 64
	iters := 300
	if testing.Short() {
		iters = 100
	}
	var creates atomic.Int64
	m, err := New(Config{
		Shards:   8,
		MaxPeers: maxPeers,
		Clock:    &ManualClock{},
		Factory: func() (detector.Detector, error) {
			creates.Add(1)
			return detector.NewFixed(detector.FixedConfig{})
		},
	})
	require.NoError(t, err)
	creates.Store(0)
	var over atomic.Int64
	stop := make(chan struct{})
	var ow sync.WaitGroup
	ow.Add(1)
	go func() {
		defer ow.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if l := m.Len(); l > maxPeers {
				over.Store(int64(l))
			}
		}
	}()
	var removed atomic.Int64
	for it := range iters {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 40 {
					n := fmt.Sprintf("i%d-%d", it, (k+g*3)%40)
					err := m.Heartbeat(n, Beat{})
					if err != nil {
						assert.ErrorIs(t, err, ErrTooManyPeers)
					}
				}
			}()
		}
		wg.Wait()
		// Remove every other round's peers, so the bound is hit and freed.
		if it%2 == 1 {
			for _, st := range m.Snapshot() {
				if m.Remove(st.Peer) {
					removed.Add(1)
				}
			}
		}
	}
	close(stop)
	ow.Wait()
	n := checkTables(t, m)
	assert.Equal(t, n, m.Len())
	assert.LessOrEqual(t, n, maxPeers)
	assert.Equal(t, creates.Load()-removed.Load(), int64(n), "each name created once")
	assert.Zero(t, over.Load(), "Len exceeded MaxPeers")
}
