package agent

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// A Join whose context ends while the agent's goroutine is busy for longer
// than joinReportWait (here a callback that blocks, against the rule)
// still takes its addresses out of the resends: it hands its end over
// without waiting, and the agent forgets the call before its next tick.
// Before, the hand-over was a call on the agent's goroutine that gave up
// after joinReportWait, so the dead address kept getting a join every
// period (issue 27, rev31 F4).
func TestAbandonedJoinStopsKnocking(t *testing.T) {
	release := make(chan struct{})
	var armed, blocked atomic.Bool
	cfg := Config{Plain: true, Protocol: fast(), LeaveTimeout: new(time.Duration)}
	cfg.Protocol.AliveFilter = func(swim.Update) error {
		if armed.Load() && blocked.CompareAndSwap(false, true) {
			<-release
		}
		return nil
	}
	a := start(t, cfg)
	b := start(t, Config{Plain: true})
	dead, n := deadAddress(t)
	joinErr := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	go func() { joinErr <- a.Join(ctx, dead) }()
	require.Eventually(t, func() bool { return n.Load() > 0 }, 10*time.Second, 5*time.Millisecond, "the join reached the address")
	armed.Store(true)
	go func() {
		c, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		_ = b.Join(c, a.Self().Addr) // its Alive reaches a's AliveFilter, which blocks
	}()
	require.Eventually(t, blocked.Load, 10*time.Second, 5*time.Millisecond, "the callback blocked")
	var err error
	select {
	case err = <-joinErr:
	case <-time.After(30 * time.Second):
		t.Fatal("Join did not return")
	}
	var je *JoinError
	require.True(t, errors.As(err, &je), "a JoinError: %v", err)
	before := n.Load()
	close(release)
	// a now knows b, so it probes: 10 of its periods.
	periodsFrom(t, a)(10)
	assert.Equal(t, before, n.Load(), "joins sent to the dead address after the Join returned")
}
