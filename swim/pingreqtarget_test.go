package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A ping-req whose target has no address (no writer leaves it out; a
// forged or corrupted one) is relayed to the address this member holds
// for the target, and refused when the target is not in the view:
// nothing is sent to an empty address (Step's contract). Before, the
// relayed ping went to "".
func TestPingReqTargetWithoutAddress(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
	require.NoError(t, a.Step(time.Second, &Packet{Kind: MsgPingReq, From: node("b"), To: Node{ID: "a"},
		PingReq: PingReq{Seq: 6, Target: Node{ID: "c"}}}))
	pk, _ := drain(a)
	pings := only(t, pk, MsgPing)
	require.Len(t, pings, 1)
	assert.Equal(t, node("c"), pings[0].To)

	err := a.Step(time.Second, &Packet{Kind: MsgPingReq, From: node("b"), To: Node{ID: "a"},
		PingReq: PingReq{Seq: 7, Target: Node{ID: "zz"}}})
	assert.ErrorIs(t, err, ErrPacket)
	assert.ErrorContains(t, err, "without an address")
	pk, _ = drain(a)
	for _, p := range pk {
		assert.NotEmpty(t, p.To.Addr, "%v sent to an empty address", p.Kind)
	}
}
