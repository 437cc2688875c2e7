package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// A message SendTo sends arrives marked FromHeldAddr (swim.Message); one
// forged under the sender's ID from another socket on the same host,
// naming the sender's address or leaving it out, arrives unmarked
// (kvstore keeps a place for a joiner's own ask on this).
func TestMessageFromHeldAddrOverSockets(t *testing.T) {
	as := group(t, 2, Config{Plain: true})
	msgs, cancel := as[1].Receive(8)
	defer cancel()
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	require.NoError(t, as[0].SendTo(ctx, as[1].Self().ID, []byte("own")))
	m := receiveOne(t, msgs)
	assert.Equal(t, []byte("own"), m.Data)
	assert.True(t, m.FromHeldAddr, "sent by as[0] from its address")

	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	att := newAttacker(t, codec, "att")
	for _, from := range []swim.Node{as[0].Self(), {ID: as[0].Self().ID}} {
		_, err := att.write(as[1].Self(), swim.Packet{Kind: swim.MsgUser, From: from, User: []byte("forged")})
		require.NoError(t, err)
		m := receiveOne(t, msgs)
		assert.Equal(t, []byte("forged"), m.Data)
		assert.Equal(t, as[0].Self().ID, m.From)
		assert.False(t, m.FromHeldAddr, "forged from another socket, naming %q", from.Addr)
	}
}
