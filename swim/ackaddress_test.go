package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An ack that names its sender but claims another address than the one
// the view holds for it (a forger's own: the transport found the datagram
// came from the address it claims and passed it to Step) is not its
// sender's answer: it answers no probe and completes no relay, as an ack
// from another host does (StepFromOtherSource; issue 27, user38 F1).
// Format 1 writes the sender's address in acks, and a format-2 decoder
// reads one wherever it is, so anyone can claim one. An ack without its
// sender's ID is held to this only while Step fills the ID in
// (ackSenderFilled); swim/agent fills it in first. atk28: found against
// 3d628db and 32d0225, both cases answered.
func TestAckClaimingAnotherAddressAnswersNothing(t *testing.T) {
	t.Run("probe", func(t *testing.T) {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
		a.Tick(0)
		pk, _ := drain(a)
		ping := only(t, pk, MsgPing)[0]
		target := a.pr.target.node
		require.NotEqual(t, "10.9.9.9:1", target.Addr)
		ack := Packet{Kind: MsgAck, From: Node{ID: target.ID, Addr: "10.9.9.9:1"}, To: a.Self(), Ack: Ack{Seq: ping.Ping.Seq}}
		require.NoError(t, a.Step(time.Millisecond, &ack))
		assert.True(t, a.pr.active, "the probe of %s still waits", target.ID)
	})
	t.Run("relay", func(t *testing.T) {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
		req := pingReq(node("c"), node("b"), false)
		ping, _ := relayOne(t, a, req)
		ack := Packet{Kind: MsgAck, From: Node{ID: "b", Addr: "10.9.9.9:1"}, To: a.Self(), Ack: Ack{Seq: ping.Ping.Seq}}
		require.NoError(t, a.Step(20*time.Millisecond, &ack))
		pk, _ := drain(a)
		assert.Empty(t, only(t, pk, MsgAck), "no ack relayed to c")
	})
}
