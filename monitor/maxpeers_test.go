package monitor

import (
	"fmt"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/fdkit/fdkit/detector"
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

// A factory that panics while a new peer is created gives its MaxPeers
// reservation back: the panic reaches the caller, and the monitor still
// admits MaxPeers peers afterwards.
func TestFactoryPanicKeepsCount(t *testing.T) {
	panicking := false // New calls the factory once to check it
	m, err := New(Config{MaxPeers: 2, Clock: &ManualClock{}, Factory: func() (detector.Detector, error) {
		if panicking {
			panic("factory failed")
		}
		return detector.NewFixed(detector.FixedConfig{})
	}})
	require.NoError(t, err)
	panicking = true
	for range 3 {
		assert.Panics(t, func() { _ = m.Heartbeat("a", Beat{}) })
	}
	assert.Equal(t, 0, m.Len())
	panicking = false
	require.NoError(t, m.Heartbeat("a", Beat{}))
	require.NoError(t, m.Heartbeat("b", Beat{}))
	assert.Equal(t, 2, m.Len())
}

// The monitor keeps its own copy of a new peer's name, so a name that
// aliases a buffer the caller reuses (as a receive loop might) stays right.
func TestPeerNameCopied(t *testing.T) {
	m, err := New(Config{Clock: &ManualClock{}})
	require.NoError(t, err)
	buf := []byte("peer-one")
	require.NoError(t, m.Heartbeat(unsafe.String(&buf[0], len(buf)), Beat{}))
	copy(buf, "XXXXXXXX")
	_, ok := m.Status("peer-one")
	assert.True(t, ok, "the peer is still found under the name it was created with")
	_, ok = m.Status("XXXXXXXX")
	assert.False(t, ok)
}
