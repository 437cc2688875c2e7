package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// Start refuses an identity whose Alive cannot go in a view transfer to a
// member like itself, or whose acks cannot carry an AckPayload: before,
// Start accepted them, and a Join through such a seed returned nil with a
// view of one, the seed's entry left out (issue 27, user31 F6).
func TestStartRefusesPeerPacketsTooLarge(t *testing.T) {
	long := swim.ID(strings.Repeat("i", 255))
	cfg := Config{Plain: true, ID: long, Protocol: swim.Config{Meta: make([]byte, swim.MaxMetaLen)}}
	_, err := Start(context.Background(), cfg)
	assert.ErrorIs(t, err, ErrSelfTooLarge)
	assert.ErrorContains(t, err, "ID of 255 bytes")
	assert.ErrorContains(t, err, "Meta of 512 bytes: this member's Alive in a view transfer")

	cfg = Config{Plain: true, ID: swim.ID(strings.Repeat("i", 150)), MaxPacketSize: 800,
		Protocol: swim.Config{AckPayload: func() []byte { return nil }}}
	_, err = Start(context.Background(), cfg)
	assert.ErrorIs(t, err, ErrSelfTooLarge)
	assert.ErrorContains(t, err, "an ack to a member with an ID as long, with a Protocol.AckPayload of up to 512 bytes")
	cfg.Protocol.AckPayload = nil
	a, err := Start(context.Background(), cfg)
	require.NoError(t, err, "without AckPayload")
	_ = a.Shutdown()

	// The largest metadata Start accepts with a 255-byte ID: a member with
	// it still reaches a joiner with a 255-byte ID, whose Join then holds
	// it (the check is not looser than the packets).
	lo, hi := 0, swim.MaxMetaLen // Start accepts lo, refuses hi
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		a, err := Start(context.Background(), Config{Plain: true, ID: long, DisableStream: true, Protocol: swim.Config{Meta: make([]byte, mid)}})
		if err == nil {
			_ = a.Shutdown()
			lo = mid
		} else {
			require.ErrorIs(t, err, ErrSelfTooLarge)
			hi = mid
		}
	}
	t.Logf("largest metadata accepted with a 255-byte ID at MaxPacketSize 1400: %d bytes", lo)
	p := fast()
	p.Meta = make([]byte, lo)
	seed := start(t, Config{Plain: true, ID: long, Protocol: p})
	joiner := start(t, Config{Plain: true, ID: swim.ID(strings.Repeat("j", 255))})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, joiner.Join(ctx, seed.Self().Addr))
	assert.Equal(t, swim.StateAlive, stateOf(joiner, long), "the joiner holds the seed")
	assert.Zero(t, seed.Stats().Protocol.ViewEntriesSkipped)
}
