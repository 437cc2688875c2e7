package sfd

import (
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A margin plan holds one event per heartbeat that moves τ, so an event
// takes 16 bytes: k and its three flags in one word, then EA_{ℓ+1}.
func TestMarginEventIs16Bytes(t *testing.T) {
	assert.Equal(t, uintptr(16), unsafe.Sizeof(marginEvent{}))
}

// Every k from 0 to maxEventIndex and every set of flags read back as
// packed, each flag apart from k and from the other two.
func TestMarginEventRoundTrip(t *testing.T) {
	ks := []int{0, 1, 2, 1<<31 - 1}
	if math.MaxInt > math.MaxInt32 {
		big := uint64(maxEventIndex)
		for _, k := range []uint64{1 << 31, 1<<32 + 5, 1 << 60, big - 1, big} {
			ks = append(ks, int(k))
		}
	}
	for _, k := range ks {
		for flags := range 8 {
			restart, full, measured := flags&1 != 0, flags&2 != 0, flags&4 != 0
			next := time.Duration(-k) - 7
			ev, ok := newMarginEvent(k, next, restart, full, measured)
			require.True(t, ok, "k = %d", k)
			assert.Equal(t, k, ev.k(), "k = %d, flags %03b", k, flags)
			assert.Equal(t, next, ev.next, "k = %d, flags %03b", k, flags)
			assert.Equal(t, restart, ev.restart(), "k = %d, flags %03b", k, flags)
			assert.Equal(t, full, ev.full(), "k = %d, flags %03b", k, flags)
			assert.Equal(t, measured, ev.measured(), "k = %d, flags %03b", k, flags)
		}
	}
}

// A k that does not fit (negative, or past 2^61 − 1 where int is 64 bits)
// is refused, not wrapped into the flags.
func TestMarginEventRefusesIndexOutOfRange(t *testing.T) {
	bad := []int{-1, math.MinInt}
	if math.MaxInt > math.MaxInt32 {
		big := uint64(maxEventIndex)
		for _, k := range []uint64{big + 1, big + 1<<61, math.MaxInt} {
			bad = append(bad, int(k))
		}
	}
	for _, k := range bad {
		_, ok := newMarginEvent(k, 0, false, false, false)
		assert.False(t, ok, "k = %d", k)
	}
}
