package wire

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// atk30 F3: a sealed packet other than a ping names its receiver, long
// ID or not. A decoder before the receiver check (before a3e44d5) skips
// tag 9 and reads a packet without To.ID as for whoever is at the
// address: a sealed user message, gossip, view, join or ping-req that a
// member sent d, replayed by an outsider without the key to c, a member
// of such a build, would open there (c's replay window for the sender is
// its own) and be applied, where named c drops it as misdirected. Plain,
// the check stands in for a long ID (anyone can write a plain packet, so
// a replay proves nothing a forgery does not); decoders of a3e44d5 to
// 0778b60, builds of one day's main, refuse it outside pings (atk30 F2).
func TestToCheckNamesReceiverForOlderDecoders(t *testing.T) {
	kr, _ := NewKeyring(key(7, 32))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	b := swim.Node{ID: swim.ID(strings.Repeat("b", 36)), Addr: "127.0.0.1:2"}
	d := swim.Node{ID: swim.ID(strings.Repeat("d", 36)), Addr: "127.0.0.1:4"}
	x := swim.Node{ID: "x", Addr: "127.0.0.1:9"}
	for _, p := range []*swim.Packet{
		{Kind: swim.MsgUser, From: b, To: d, User: []byte("for d only")},
		{Kind: swim.MsgGossip, From: b, To: d, Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: x, From: x.ID}}},
		{Kind: swim.MsgSync, From: b, To: d, Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: x, From: x.ID}}},
		{Kind: swim.MsgJoin, From: b, To: d, Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: b, From: b.ID}}},
		{Kind: swim.MsgPingReq, From: b, To: d, PingReq: swim.PingReq{Seq: 5, Target: x}},
	} {
		got, err := Unmarshal(mustMarshal(t, p), 0)
		require.NoError(t, err)
		assert.Empty(t, got.To.ID, "plain %v: checked", p.Kind)
		assert.Equal(t, swim.IDCheck(d.ID), got.ToCheck, "plain %v: checked", p.Kind)

		sealer := boundCodec(t, kr, clk, b.ID)
		opener := boundCodec(t, kr, &fakeClock{t: clk.t.Add(-time.Second)}, d.ID)
		bs, _, err := sealer.Encode(p)
		require.NoError(t, err)
		got, err = opener.DecodeDatagram(bs, nil)
		require.NoError(t, err)
		assert.Equal(t, d.ID, got.To.ID, "sealed %v: named, as a decoder before a3e44d5 reads a packet without To.ID as for anyone (F3)", p.Kind)
		assert.Zero(t, got.ToCheck, "sealed %v", p.Kind)
	}
}
