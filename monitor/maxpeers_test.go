package monitor

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A heartbeat rejected with ErrTooManyPeers must not make Len exceed
// MaxPeers, even for an instant.
func TestMaxPeersLenNeverExceeded(t *testing.T) {
	const maxPeers = 4
	m, err := New(Config{MaxPeers: maxPeers, Clock: &ManualClock{}})
	require.NoError(t, err)
	for i := range maxPeers {
		require.NoError(t, m.Heartbeat(fmt.Sprint("p", i), Beat{}))
	}
	var over atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200000 && over.Load() == 0; i++ {
			if err := m.Heartbeat(fmt.Sprint("forged", i%64), Beat{}); err != ErrTooManyPeers {
				t.Errorf("heartbeat %d: %v, want ErrTooManyPeers", i, err)
				return
			}
		}
	}()
	for polling := true; polling; {
		select {
		case <-done:
			polling = false
		default:
		}
		if l := m.Len(); l > maxPeers {
			over.Store(int64(l))
		}
	}
	assert.Zero(t, over.Load(), "Len exceeded MaxPeers")
	assert.Equal(t, maxPeers, m.Len())
}
