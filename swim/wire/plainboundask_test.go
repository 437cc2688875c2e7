package wire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// atk29c F1. Packet tag 8 is for sealed pings only, but a codec that seals
// and accepts plain packets (Security.SetAcceptPlain, while encryption is
// turned on) takes it from a plain one too: anyone can then have member c
// seal a bound ack, with a sequence number of the forger's choosing, to
// member a. A bound ack names neither member: a takes it as the answer of
// whomever its probe ping with that number went to, checked against that
// member's replay window, where c's timestamp is new. The probe number is
// the round's (predictable), so an outsider without the key who forges a
// plain ping "from a" to c with a's current probe number, and sends the
// ack it draws from a crashed member b's host, answers a's probe of b for
// b: the atk28 replay, through a plain forgery instead of a replay. The
// forger gets the ack by naming its own address as a's in the ping: c
// answers a ping at the address it claims. It matters where a refuses plain
// packets and c still accepts them: during the last step of turning
// encryption on (fdswim's rolling restart, or SIGHUP with the stage file
// moving from accept-plain to sealed member by member); where a accepts
// plain, a forged plain ack does as much.
//
// Expected: a plain ping asks for a plain ack (tag 7) or for nothing, never
// for a bound one; c answers it, sealing, with an ack naming both members,
// which a takes as c's, not b's.
func TestPlainPingDrawsBoundAck(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	a := boundCodec(t, kr, clk, "a")
	sec := &Security{Keyring: kr}
	sec.SetAcceptPlain(true) // c seals, and accepts plain while the group turns encryption on
	c, err := NewCodec(CodecConfig{Security: sec, Replay: ReplayConfig{Now: clk.now}, LocalID: "c"})
	require.NoError(t, err)
	clk.t = clk.t.Add(time.Second)

	// a's current probe: its round's number, 2r, to b (crashed).
	const seq = 2 * 1234
	// The forger's plain ping "from a", to c, with tag 8 (written as a
	// sealed ping's payload, behind the plain envelope byte).
	forged := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "a", Addr: "10.0.0.2:7946"}, To: swim.Node{ID: "c"},
		Ping: swim.Ping{Seq: seq, MatchBySeq: true}}
	payload, _, err := marshal(nil, forged, c.MaxPayload(), encoding{v: 2, sealed: true, matchBound: true})
	require.NoError(t, err)
	plain := append([]byte{EnvelopePlain}, payload...)

	got, err := c.DecodeDatagram(plain, nil)
	require.NoError(t, err, "c accepts plain packets")
	// c's state machine answers the ping as swim.Member does (step.go).
	ack := &swim.Packet{Kind: swim.MsgAck, From: swim.Node{ID: "c", Addr: "10.0.0.3:7946"}, To: got.From,
		Ack: swim.Ack{Seq: got.Ping.Seq, NoSenderID: got.Ping.MatchBySeq}}
	out := seal(t, c, ack)
	assert.NotEqual(t, EnvelopeBound, envelope(out), "a plain ping drew a bound ack")

	// At a, the ack counts as b's: a's probe ping with that number went
	// to b, and c's timestamp is new in b's window.
	p, err := a.DecodeDatagram(out, pinged(seq, "b"))
	if err == nil {
		assert.NotEqual(t, swim.ID("b"), p.From.ID, "c's ack, drawn by a plain forgery, answers a's probe of b")
	}
}
