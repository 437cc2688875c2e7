package agent

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// Start refuses an identity whose Alive cannot go in a view transfer to a
// member like itself: before,
// Start accepted them, and a Join through such a seed returned nil with a
// view of one, the seed's entry left out (issue 27, user31 F6).
func TestStartRefusesPeerPacketsTooLarge(t *testing.T) {
	long := swim.ID(strings.Repeat("i", 255))
	cfg := Config{Plain: true, ID: long, Protocol: swim.Config{Meta: make([]byte, swim.MaxMetaLen)}}
	_, err := Start(context.Background(), cfg)
	assert.ErrorIs(t, err, ErrSelfTooLarge)
	assert.ErrorContains(t, err, "ID of 255 bytes")
	assert.ErrorContains(t, err, "Meta of 512 bytes: this member's Alive in a view transfer")

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

// Start does not refuse an AckPayload for the size it might have: with
// MaxPacketSize 576 (memberlist's UDPBufferSize in some setups) and an
// 8-byte payload, plain and sealed, the default ID (the address) is
// accepted and the payloads arrive; a member whose 512-byte payloads do
// not fit its acks sends them without, counts them, and still answers
// probes (user33 F6: Start refused every such setup, assuming 512 bytes).
func TestStartSmallPacketsWithAckPayload(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		got := make(chan string, 64)
		cfg := func(n int) Config {
			c := Config{MaxPacketSize: 576, Protocol: fast()}
			if keyed {
				c.Keys = [][]byte{testKey}
			} else {
				c.Plain = true
			}
			c.Protocol.AckPayload = func() []byte { return bytes.Repeat([]byte("c"), n) }
			c.Protocol.PingComplete = func(_ swim.Node, _ time.Duration, payload []byte) {
				select {
				case got <- string(payload):
				default:
				}
			}
			return c
		}
		a, b := start(t, cfg(8)), start(t, cfg(8))
		join(t, b, a)
		select {
		case p := <-got:
			assert.Equal(t, "cccccccc", p, "keyed %v", keyed)
		case <-time.After(10 * time.Second):
			t.Fatalf("keyed %v: no ping completed", keyed)
		}
		c := start(t, cfg(swim.MaxAckPayloadLen))
		join(t, c, a)
		require.Eventually(t, func() bool { return c.Stats().Protocol.AckPayloadsTooLarge > 0 }, 10*time.Second, 10*time.Millisecond,
			"keyed %v", keyed)
		require.Eventually(t, func() bool { return aliveOrSuspect(a) == 3 && aliveOrSuspect(c) == 3 }, 10*time.Second, 10*time.Millisecond,
			"keyed %v: acks without their payload still answer the probes", keyed)
	}
}

// Start's error for an identity too large for MaxPacketSize names the
// least size that carries both the join and the view transfer, so the
// size it names starts (usr30: with a 255-byte ID and label, sealed, 589
// named 1142, and 1142 a larger one; 1419 is the least that works).
func TestStartNamesLeastPacketSize(t *testing.T) {
	id := swim.ID(strings.Repeat("x", 255))
	cfg := func(size int) Config {
		return Config{Keys: [][]byte{bytes.Repeat([]byte{7}, 32)}, Label: strings.Repeat("L", 255), ID: id, MaxPacketSize: size, DisableStream: true}
	}
	var named []string
	for _, size := range []int{589, 1142, 1418} {
		_, err := Start(context.Background(), cfg(size))
		require.ErrorIs(t, err, ErrSelfTooLarge, "MaxPacketSize %d", size)
		i := strings.Index(err.Error(), "set MaxPacketSize ")
		require.GreaterOrEqual(t, i, 0, "%v", err)
		named = append(named, strings.Fields(err.Error()[i:])[2])
	}
	assert.Equal(t, []string{"1419", "1419", "1419"}, named)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := Start(ctx, cfg(1419))
	require.NoError(t, err)
	require.NoError(t, a.Close())
}
