package agent

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// atk29c F1, end to end (swim/wire TestPlainPingDrawsBoundAck). A group
// is turning encryption on: member a already refuses plain packets (stage
// sealed), member c still accepts them (stage accept-plain), and member X
// crashes. An outsider without the key, on X's host, answers c's own
// probes of X with forged plain acks in X's name (c accepts plain: no
// defence there, and not this finding; c's relayed pings for a go
// unanswered, or they would answer a's probes through c). a takes sealed
// packets only, yet its probes are answered too: a plain ping "from a"
// with a's probe number and packet tag 8 makes c seal an ack bound to a
// that names no one, and send it to the address the ping claims, the
// outsider's; sent on from X's host, a takes it for X's. The outsider
// forwards bound acks only (envelope byte 0x04, in the clear): a named
// ack of c's sent from X's host would fail a's host check, which the
// test's single address, 127.0.0.1, cannot show. X must be declared dead
// at a as fast as when only c's probes are answered.
//
// The outsider must know a's probe number: the round's, predictable
// (probeorder.go); the test gives it the number of each ping a sends X
// (read with the group key) instead of making it guess.
//
// Fails at a3e44d5 (X alive at a past the limit); passes once a plain
// packet's tag 8 is ignored (Codec.decode's plain path).
func TestPlainPingDrawsBoundAckKeepsCrashedAlive(t *testing.T) {
	var base time.Duration
	t.Run("c's probes answered", func(t *testing.T) { base = plainBoundAsk(t, false, 20*time.Second) })
	t.Run("a's too, through c", func(t *testing.T) { plainBoundAsk(t, true, 2*time.Second+3*base) })
}

// plainBoundAsk runs the outsider, answering a's probes too when attack,
// and returns how long after the crash X was declared dead at a, which
// must be within limit.
func plainBoundAsk(t *testing.T, attack bool, limit time.Duration) time.Duration {
	const n = 3
	tap, wires, as, idx := tappedGroup(t, n)
	a, c, x := as[0], as[1], 2
	c.sec.SetAcceptPlain(true)
	xid := as[x].Self().ID
	kr, err := wire.NewKeyring(testKey)
	require.NoError(t, err)
	oracle, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: kr}})
	require.NoError(t, err)
	// The outsider's own key: only to write a ping's payload with tag 8,
	// then sent behind the plain envelope byte.
	own, err := wire.NewKeyring([]byte("the outsider's key, not group's!"))
	require.NoError(t, err)
	ownSec := &wire.Security{Keyring: own}
	writer, err := wire.NewCodec(wire.CodecConfig{Security: ownSec, LocalID: "w"})
	require.NoError(t, err)
	plain, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	att, err := listenUDP(transport.Config{}) // on X's host, 127.0.0.1
	require.NoError(t, err)
	defer att.Close()
	attAddr := att.LocalAddr().String()
	aAddr, cAddr := netip.MustParseAddrPort(a.Self().Addr), netip.MustParseAddrPort(c.Self().Addr)

	wires[x].down.Store(true)
	t0 := time.Now()
	// c's bound ack, on to a. Not a named one: from X's host it would
	// fail the host check, which the test's single address, 127.0.0.1,
	// cannot show.
	forward := func(p transport.Packet) {
		if len(p.Data) > 0 && p.Data[0] == wire.EnvelopeBound {
			_ = att.Send(aAddr, p.Data)
		}
	}
	defer outsider(tap, att.Packets(), func(s sniffed) {
		k, ok := idx[s.from]
		if !ok || s.to != x || (k != 1 && (k != 0 || !attack)) {
			return
		}
		ping, err := oracle.Decode(s.data)
		if err != nil || ping.Kind != swim.MsgPing {
			return
		}
		seq := ping.Ping.Seq
		if k == 1 && seq&3 == 1 {
			// c's relayed ping for a's ping-req (otherSeq, 1 modulo 4):
			// unanswered, so that only the bound acks can answer a's
			// probes.
			return
		}
		if k == 1 { // c's own probe: a forged plain ack in X's name
			b, _, err := plain.Encode(&swim.Packet{Kind: swim.MsgAck, From: swim.Node{ID: xid}, To: c.Self(), Ack: swim.Ack{Seq: seq}})
			if err == nil {
				_ = att.Send(cAddr, b)
			}
			return
		}
		// a's probe: a plain ping "from a" to c, asking with tag 8.
		sealed, _, err := writer.Encode(&swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: a.Self().ID, Addr: attAddr},
			To: c.Self(), Ping: swim.Ping{Seq: seq, MatchBySeq: true}})
		if err != nil {
			return
		}
		payload, err := ownSec.Open(sealed)
		if err != nil {
			return
		}
		_ = att.Send(cAddr, append([]byte{wire.EnvelopePlain}, payload[8:]...)) // without the sealed timestamp
	}, forward)()
	took, ok := waitDeadAt(as[:1], xid, t0, limit)
	t.Logf("a's probes answered too: %v: X dead at a: %v after %v (limit %v)", attack, ok, took.Round(time.Millisecond), limit.Round(time.Millisecond))
	require.True(t, ok, "X, crashed, declared dead at a (which refuses plain) within %v", limit)
	return took
}
