package qos

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/assert"
)

// TestSynchronizedDelay checks the clock rule's bounds by hand: A − σ in
// [0, MaxPlausibleDelay] with a send time, nothing else.
func TestSynchronizedDelay(t *testing.T) {
	at := func(d time.Duration, sent bool) detector.Heartbeat {
		return detector.Heartbeat{Sent: time.Hour, HasSent: sent, Arrival: time.Hour + d}
	}
	for _, c := range []struct {
		d    time.Duration
		sent bool
		want bool
	}{
		{0, true, true},
		{time.Millisecond, true, true},
		{MaxPlausibleDelay, true, true},
		{MaxPlausibleDelay + 1, true, false},
		{-1, true, false},
		{time.Millisecond, false, false},
	} {
		assert.Equal(t, c.want, SynchronizedDelay(at(c.d, c.sent)), "A − σ = %v, send time %v", c.d, c.sent)
	}
}

// TestClocksLookSynchronized: every heartbeat must pass the rule, and an
// empty stream does not look synchronized.
func TestClocksLookSynchronized(t *testing.T) {
	ok := detector.Heartbeat{Seq: 1, HasSeq: true, Sent: time.Second, HasSent: true, Arrival: time.Second + 2*time.Millisecond}
	late := ok
	late.Seq, late.Arrival = 2, late.Sent+MaxPlausibleDelay+time.Millisecond
	unsent := ok
	unsent.Seq, unsent.HasSent = 3, false
	assert.False(t, ClocksLookSynchronized(nil))
	assert.True(t, ClocksLookSynchronized([]detector.Heartbeat{ok, ok}))
	assert.False(t, ClocksLookSynchronized([]detector.Heartbeat{ok, late}))
	assert.False(t, ClocksLookSynchronized([]detector.Heartbeat{ok, unsent}))
}
