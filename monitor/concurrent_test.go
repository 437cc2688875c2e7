package monitor_test

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fdkit/fdkit/monitor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Many goroutines heartbeat, query, sweep and snapshot at once (run with
// -race). Every heartbeat is counted, and each peer's transitions, put in
// order by Number, alternate trusted → suspected → trusted.
func TestConcurrentHeartbeatsAndQueries(t *testing.T) {
	const (
		peers   = 200
		writers = 8
		readers = 8
		rounds  = 300
	)
	clk := &monitor.ManualClock{}
	rec := &recorder{}
	m, err := monitor.New(monitor.Config{Factory: fixedFactory(3 * time.Millisecond), Clock: clk,
		OnTransition: rec.add, Shards: 16})
	require.NoError(t, err)
	names := make([]string, peers)
	for i := range names {
		names[i] = fmt.Sprintf("peer-%d", i)
	}
	var sent atomic.Uint64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for i := w; i < peers; i += writers {
					if (r+i)%5 == 0 {
						continue // some peers skip rounds and get suspected
					}
					require.NoError(t, m.Heartbeat(names[i], monitor.Beat{Seq: uint64(r), HasSeq: true}))
					sent.Add(1)
				}
				clk.Advance(time.Millisecond / 4)
			}
		}()
	}
	var rg sync.WaitGroup
	for r := range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				switch {
				case r == 0:
					m.Sweep()
				case r == 1 && k%10 == 0:
					_ = m.Snapshot()
				default:
					n := names[(k*7+r)%peers]
					if st, ok := m.State(n); ok {
						assert.GreaterOrEqual(t, st.Level, 0.0)
					}
					m.Status(n)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()

	var total uint64
	for _, st := range m.Snapshot() {
		total += st.Heartbeats
	}
	assert.Equal(t, sent.Load(), total, "no heartbeat lost")
	byPeer := map[string][]monitor.Transition{}
	for _, tr := range rec.all() {
		byPeer[tr.Peer] = append(byPeer[tr.Peer], tr)
	}
	require.NotEmpty(t, byPeer, "the skipped rounds must cause suspicions")
	for p, ts := range byPeer {
		sort.Slice(ts, func(i, j int) bool { return ts[i].Number < ts[j].Number })
		for i, tr := range ts {
			require.Equal(t, uint64(i+1), tr.Number, p)
			want := monitor.Suspected
			if i%2 == 1 {
				want = monitor.Trusted
			}
			require.Equal(t, want, tr.New, "%s transition %d", p, i)
			require.LessOrEqual(t, tr.At, tr.Found)
		}
	}
}

// Remove, Handle, restarts and MaxPeers under concurrent use (run with
// -race): the peer count stays exact and within the bound.
func TestConcurrentRemoveHandleRestart(t *testing.T) {
	clk := &monitor.ManualClock{}
	m, err := monitor.New(monitor.Config{Factory: fixedFactory(time.Millisecond), Clock: clk, Shards: 4, MaxPeers: 50})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				n := fmt.Sprint("p", (i*7+g)%80)
				switch (i + g) % 6 {
				case 0:
					m.Remove(n)
				case 1:
					m.Sweep()
					clk.Advance(time.Millisecond / 2)
				case 2:
					m.Status(n)
				case 3:
					if h, err := m.Handle(n, uint64(i%3)); err == nil {
						_ = h.Heartbeat(monitor.Beat{Incarnation: uint64(i % 4)})
						assert.GreaterOrEqual(t, h.State().Level, 0.0)
					} else {
						assert.ErrorIs(t, err, monitor.ErrTooManyPeers)
					}
				default:
					err := m.Heartbeat(n, monitor.Beat{Incarnation: uint64(i % 5)})
					if err != nil && !errors.Is(err, monitor.ErrStaleIncarnation) {
						assert.ErrorIs(t, err, monitor.ErrTooManyPeers)
					}
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, m.Len(), len(m.Snapshot()))
	assert.LessOrEqual(t, m.Len(), 50)
}
