package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// victim is a UDP socket on 127.0.0.1 standing for the target of a
// reflection: it counts the bytes on the wire and the acks it receives.
type victim struct {
	*transport.UDP
	codec     *wire.Codec
	got, acks int
	// largest and datagrams are the size of the largest datagram and
	// the number of datagrams readBare has read.
	largest, datagrams int
}

// newVictim listens on 127.0.0.1 with a queue of 4,096 datagrams and
// decodes what it receives with codec; the socket closes when t ends.
func newVictim(t *testing.T, codec *wire.Codec) *victim {
	t.Helper()
	u, err := listenUDP(transport.Config{Bind: "127.0.0.1:0", QueueLen: 4096})
	require.NoError(t, err)
	t.Cleanup(func() { u.Close() })
	return &victim{UDP: u, codec: codec}
}

// read counts every datagram already queued, without waiting.
func (v *victim) read() {
	for {
		select {
		case p := <-v.Packets():
			v.got += len(p.Data)
			if pk, err := v.codec.Decode(p.Data); err == nil && pk.Kind == swim.MsgAck {
				v.acks++
			}
		default:
			return
		}
	}
}

// readUntilQuiet reads until 100 ms pass without a datagram.
func (v *victim) readUntilQuiet() {
	for quiet := time.Now(); time.Since(quiet) < 100*time.Millisecond; time.Sleep(10 * time.Millisecond) {
		n := v.got
		if v.read(); v.got != n {
			quiet = time.Now()
		}
	}
}

// readBare reads every datagram already queued, without waiting, and
// checks that each decodes and is bare: no broadcasts, and no update but
// one about notice (the node placed at the victim's address), the
// sender's own Alive (a refutation or a join announcement), or an eager
// push's one update.
func (v *victim) readBare(t *testing.T, notice swim.ID) {
	t.Helper()
	for len(v.Packets()) > 0 {
		p := <-v.Packets()
		v.got += len(p.Data)
		v.largest = max(v.largest, len(p.Data))
		v.datagrams++
		pk, err := v.codec.Decode(p.Data)
		require.NoError(t, err)
		assert.Empty(t, pk.Broadcasts, "%v from %s", pk.Kind, pk.From.ID)
		for _, u := range pk.Updates {
			own := u.Node.ID == notice || u.Node.ID == pk.From.ID || pk.Kind == swim.MsgGossip && len(pk.Updates) == 1
			assert.True(t, own, "%v from %s with %d updates: %v about %s", pk.Kind, pk.From.ID, len(pk.Updates), u.Kind, u.Node.ID)
		}
	}
}
