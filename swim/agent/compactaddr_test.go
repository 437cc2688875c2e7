package agent

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// TestAckFromUnknownMemberAsksItsView: wire format 2 leaves the sender's
// address out of an ack. An ack from a member the agent does not know
// makes it ask that member for its view; the request goes to the address
// the datagram came from. (The ack carries a payload: a packet less than
// half the size of the request draws none, swim's asksView, and
// TestSpoofedPacketsNotAmplified.)
func TestAckFromUnknownMemberAsksItsView(t *testing.T) {
	a := start(t, Config{Plain: true})
	ghost := newPlainPeer(t)
	ack, _, err := ghost.codec.Encode(&swim.Packet{Kind: swim.MsgAck, From: swim.Node{ID: "ghost", Addr: ghost.addr()},
		To: a.Self(), Ack: swim.Ack{Seq: 12345}, AckPayload: make([]byte, 64)})
	require.NoError(t, err)
	got, err := ghost.codec.Decode(ack)
	require.NoError(t, err)
	require.Empty(t, got.From.Addr, "the ack travels without its sender's address")

	require.NoError(t, ghost.conn.Send(netip.MustParseAddrPort(a.Self().Addr), ack))
	select {
	case p := <-ghost.conn.Packets():
		req, err := ghost.codec.Decode(p.Data)
		require.NoError(t, err)
		assert.Equal(t, swim.MsgJoin, req.Kind)
		assert.Equal(t, swim.ID("ghost"), req.To.ID)
		assert.Equal(t, a.Self(), req.From)
	case <-time.After(5 * time.Second):
		t.Fatal("no view request reached the unknown member")
	}
	assert.Zero(t, a.Stats().Rejected)
}
