package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// (atk28b) an intermediate that still holds the target b at its old
// address relays a ping-req that names b at the address b moved to (the
// requester learnt the move first): the ping goes to the address named,
// and b answers from there. A format-2 ack (no address) is relayed; a
// format-1 ack, which claims b's new address, the address the relayed ping
// went to, is taken as from another host since abdc551 and the requester
// gets no answer (AcksFromOtherHost).
func TestRelayToMovedTargetAnswered(t *testing.T) {
	moved := Node{ID: "b", Addr: "b2:7946"}
	for _, claim := range []string{"", moved.Addr} {
		t.Run("claim "+claim, func(t *testing.T) {
			a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
			ping, _ := relayOne(t, a, pingReq(node("c"), moved, false))
			require.Equal(t, moved, ping.To, "the relayed ping goes to the address the ping-req names")
			ack := Packet{Kind: MsgAck, From: Node{ID: "b", Addr: claim}, To: a.Self(), Ack: Ack{Seq: ping.Ping.Seq}}
			require.NoError(t, a.Step(20*time.Millisecond, &ack))
			pk, _ := drain(a)
			assert.Len(t, only(t, pk, MsgAck), 1, "the answer relayed to c (AcksFromOtherHost %d)", a.Stats().AcksFromOtherHost)
		})
	}
}
