package wire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// An outsider without the key replays to member a a sealed packet that b
// sent to another member, d: a packet that is not bound names its
// receiver only in its payload, so it opens at a, and its timestamp is
// new in a's window for b (windows are per receiver). a's codec takes it
// as b's latest word before the state machine drops it as misdirected
// (swim.Stats.Misdirected): when it carried packet tag 8, a binds its
// packets to b from then on. b, restarted meanwhile (same ID) as a
// build that reads no bound packets, had told a so with its first sealed
// packet; the replay, of any of b's packets of its previous life sealed
// within MaxSkew (30 s), makes a bind again, and b can open nothing of
// a's (atk29 F2). A packet that names another receiver must not change what
// a's codec sends its sender; since the fix, nothing a codec sends depends
// on what it heard before: only an ack to a ping that asked for it is
// bound.
func TestMisdirectedReplayBindsNothing(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	a, d := boundCodec(t, kr, clk, "a"), boundCodec(t, kr, clk, "d")
	b := boundCodec(t, kr, clk, "b")
	na, nb, nd := swim.Node{ID: "a", Addr: "127.0.0.1:1"}, swim.Node{ID: "b", Addr: "127.0.0.1:2"}, swim.Node{ID: "d", Addr: "127.0.0.1:4"}
	clk.t = clk.t.Add(time.Second)

	// b's previous life: a sealed ping to d, with tag 8; the outsider
	// keeps a copy.
	toD := seal(t, b, &swim.Packet{Kind: swim.MsgPing, From: nb, To: nd, Ping: swim.Ping{Seq: 2}})
	_, err := d.DecodeDatagram(toD, nil)
	require.NoError(t, err)

	// b comes back as a build without bound packets (no LocalID) and
	// pings a: a learns that b reads no bound packets.
	clk.t = clk.t.Add(2 * time.Second)
	old := replayCodec(t, kr, clk, nil)
	_, err = a.DecodeDatagram(seal(t, old, &swim.Packet{Kind: swim.MsgPing, From: nb, To: na, Ping: swim.Ping{Seq: 4}}), nil)
	require.NoError(t, err)
	ack := &swim.Packet{Kind: swim.MsgAck, From: na, To: nb, Ack: swim.Ack{Seq: 4}}
	pkt := seal(t, a, ack)
	require.Equal(t, EnvelopeEncrypted, envelope(pkt))
	_, err = old.Decode(pkt)
	require.NoError(t, err)

	// The replay of b's ping to d, at a.
	clk.t = clk.t.Add(100 * time.Millisecond)
	if p, err := a.DecodeDatagram(toD, nil); err == nil {
		t.Logf("accepted at a: a ping from %q to %q (the state machine drops it as misdirected)", p.From.ID, p.To.ID)
	}
	ack.Ack.Seq = 6
	pkt = seal(t, a, ack)
	assert.Equal(t, EnvelopeEncrypted, envelope(pkt), "a binds nothing to b on the word of a replay")
	_, err = old.Decode(pkt)
	assert.NoError(t, err, "b opens a's packets")
}
