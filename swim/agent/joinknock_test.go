package agent

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadAddress is a UDP port where no member runs (nothing listens on its
// TCP port either), counting the datagrams sent there.
func deadAddress(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = pc.Close() })
	var n atomic.Int64
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			n.Add(1)
		}
	}()
	return pc.LocalAddr().String(), &n
}

// F6: a Join that no seed answered stops knocking once it has returned
// its error (memberlist's Join tries each address once): over 30 probe
// periods after it, at most one join reaches the dead address (one in
// flight as it returned). Before, one was sent every period, forever.
// A Join called again knocks again: the caller asked for it. The agent is
// in a group of two, so that it probes and its periods can be counted
// (periodsFrom): a sleep may pass on a loaded machine before it ran them.
func TestFailedJoinStopsKnocking(t *testing.T) {
	a := start(t, Config{})
	join(t, a, start(t, Config{}))
	dead, n := deadAddress(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	err := a.Join(ctx, dead)
	cancel()
	var je *JoinError
	require.True(t, errors.As(err, &je), "a JoinError: %v", err)
	require.Eventually(t, func() bool { return n.Load() > 0 }, 5*time.Second, 10*time.Millisecond, "the join reached the address")
	before := n.Load()
	periodsFrom(t, a)(30)
	after := n.Load()
	t.Logf("%d joins while Join waited 500 ms, %d in the 30 periods after it returned", before, after-before)
	assert.LessOrEqual(t, after-before, int64(1), "joins sent after the failed Join returned")

	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	assert.Error(t, a.Join(ctx, dead))
	cancel()
	assert.Greater(t, n.Load(), after, "a new Join sends again")
}
