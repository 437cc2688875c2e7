package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEmptySenderAddress: wire format 2 leaves the sender's address out of
// acks and nacks. An empty From.Addr stands for the address the receiver
// holds for the sender; nothing is ever sent to an empty address.
func TestEmptySenderAddress(t *testing.T) {
	noEmptyDestination := func(t *testing.T, pk []Packet) {
		t.Helper()
		for _, p := range pk {
			assert.NotEmpty(t, p.To.Addr, "%v sent to an empty address", p.Kind)
		}
	}

	t.Run("unknown sender, address filled by the transport", func(t *testing.T) {
		// An ack from a member this one does not know makes it ask the
		// sender for its view, at the address the transport saw.
		a := newTest(t, "a", ModeLifeguard, nil, "b")
		ghost := Node{ID: "ghost", Addr: "10.0.0.9:7946"}
		require.NoError(t, a.Step(time.Second, &Packet{Kind: MsgAck, From: ghost, To: Node{ID: "a"}, Ack: Ack{Seq: 99}}))
		pk, _ := drain(a)
		joins := only(t, pk, MsgJoin)
		require.Len(t, joins, 1)
		assert.Equal(t, ghost, joins[0].To)
		assert.Equal(t, 1, a.Stats().ViewRequests)
	})

	t.Run("unknown sender, no address", func(t *testing.T) {
		a := newTest(t, "a", ModeLifeguard, nil, "b")
		require.NoError(t, a.Step(time.Second, &Packet{Kind: MsgAck, From: Node{ID: "ghost"}, To: Node{ID: "a"}, Ack: Ack{Seq: 99}}))
		pk, _ := drain(a)
		assert.Empty(t, pk)
		assert.Zero(t, a.Stats().ViewRequests)
		// Packets that must be answered are refused, and change nothing.
		for _, k := range []MessageKind{MsgPing, MsgPingReq, MsgJoin} {
			pkt := &Packet{Kind: k, From: Node{ID: "ghost"}, To: Node{ID: "a"},
				PingReq: PingReq{Seq: 1, Target: node("b")},
				Updates: []Update{{Kind: UpdateAlive, Node: Node{ID: "ghost"}, From: "ghost"}}}
			err := a.Step(time.Second, pkt)
			assert.ErrorIs(t, err, ErrPacket, "%v", k)
			assert.ErrorContains(t, err, "without an address", "%v", k)
		}
		assert.Equal(t, StateAlive, a.State("b"))
		assert.Equal(t, State(0), a.State("ghost"))
		pk, _ = drain(a)
		assert.Empty(t, pk)
	})

	t.Run("known sender", func(t *testing.T) {
		// A ping or ping-req without the sender's address is answered at
		// the address in the view.
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
		require.NoError(t, a.Step(time.Second, &Packet{Kind: MsgPing, From: Node{ID: "b"}, To: Node{ID: "a"}, Ping: Ping{Seq: 5}}))
		require.NoError(t, a.Step(time.Second, &Packet{Kind: MsgPingReq, From: Node{ID: "b"}, To: Node{ID: "a"},
			PingReq: PingReq{Seq: 6, Target: node("a")}}))
		pk, _ := drain(a)
		noEmptyDestination(t, pk)
		acks := only(t, pk, MsgAck)
		require.Len(t, acks, 2)
		for i, seq := range []uint32{5, 6} {
			assert.Equal(t, node("b"), acks[i].To)
			assert.Equal(t, seq, acks[i].Ack.Seq)
		}
		// A relayed probe's ack goes back to the origin's view address.
		require.NoError(t, a.Step(2*time.Second, &Packet{Kind: MsgPingReq, From: Node{ID: "b"}, To: Node{ID: "a"},
			PingReq: PingReq{Seq: 7, Target: node("c")}}))
		pk, _ = drain(a)
		pings := only(t, pk, MsgPing)
		require.Len(t, pings, 1)
		require.NoError(t, a.Step(2*time.Second, &Packet{Kind: MsgAck, From: Node{ID: "c"}, To: Node{ID: "a"}, Ack: Ack{Seq: pings[0].Ping.Seq}}))
		pk, _ = drain(a)
		noEmptyDestination(t, pk)
		acks = only(t, pk, MsgAck)
		require.Len(t, acks, 1)
		assert.Equal(t, node("b"), acks[0].To)
		assert.Equal(t, uint32(7), acks[0].Ack.Seq)
	})
}
