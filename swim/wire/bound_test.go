package wire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// boundCodec is a sealing codec for the member id (LocalID), on clk.
func boundCodec(t *testing.T, kr *Keyring, clk *fakeClock, id swim.ID) *Codec {
	t.Helper()
	c, err := NewCodec(CodecConfig{Security: &Security{Keyring: kr}, Replay: ReplayConfig{Now: clk.now}, LocalID: id})
	require.NoError(t, err)
	return c
}

// envelope returns a datagram's envelope byte (no label).
func envelope(b []byte) byte { return b[0] }

// pinged is an ackSender that knows one probe ping: seq to id.
func pinged(seq uint32, id swim.ID) func(uint32) (swim.ID, bool) {
	return func(s uint32) (swim.ID, bool) { return id, s == seq }
}

// The bound exchange, worked: m00 probes m01 with 36-byte IDs. The sealed
// probe ping names both members and asks for a bound ack (tag 8); the ack
// is sealed with m00's ID as additional data and names no one. It opens at
// m00 only, counts as the pinged member's, and once.
func TestBoundProbeRoundTrip(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	id0, id1 := swim.ID("m00-4d6f-8a1b-2c3d4e5f6a7b8c9d0e1f2a"), swim.ID("m01-4d6f-8a1b-2c3d4e5f6a7b8c9d0e1f2a")
	require.Len(t, id0, 36)
	m00, m01 := boundCodec(t, kr, clk, id0), boundCodec(t, kr, clk, id1)
	n00, n01 := swim.Node{ID: id0, Addr: "127.0.0.1:40123"}, swim.Node{ID: id1, Addr: "127.0.0.1:40124"}
	clk.t = clk.t.Add(time.Second)
	ping := &swim.Packet{Kind: swim.MsgPing, From: n00, To: n01, Ping: swim.Ping{Seq: 4, MatchBySeq: true}}
	ack := &swim.Packet{Kind: swim.MsgAck, From: n01, To: n00, Ack: swim.Ack{Seq: 4, NoSenderID: true}}

	b := seal(t, m00, ping)
	assert.Equal(t, EnvelopeEncrypted, envelope(b))
	got, err := m01.DecodeDatagram(b, nil)
	require.NoError(t, err)
	assert.Equal(t, n00, got.From)
	assert.Equal(t, swim.Node{}, got.To, "the receiver's ID left out for its check")
	assert.Equal(t, swim.IDCheck(id1), got.ToCheck)
	assert.True(t, got.Ping.MatchBySeq, "tag 8: answer with a bound ack")
	a := seal(t, m01, ack)
	assert.Equal(t, EnvelopeBound, envelope(a))

	// Sizes: envelope 1 + nonce 12 + tag 16 = 29, timestamp 8; payload:
	// version and kind 2, from 1 + 36 + 1 + 15 = 53, to 1 + 1 = 2 (the ID
	// left out for its check), seq 1, extensions 1 + 2 (tag 8) + 6 (tag 9,
	// the check) = 9, update count 2: the ping is 29 + 8 + 2 + 53 + 2 + 1 +
	// 9 + 2 = 106. The ack: 29 + 8 + 2, from and to 1 + 1 each, seq 1,
	// extensions 1, count 2 = 47. Sealed by a codec without LocalID, the
	// ping has no tag 8 (104) and the ack names both (36 bytes more for
	// each ID: 119); fdkit before bound acks and checks sent 134 and 119.
	assert.Len(t, b, 106)
	assert.Len(t, a, 47)
	old := boundCodec(t, kr, clk, "")
	assert.Len(t, seal(t, old, ping), 104)
	assert.Len(t, seal(t, old, ack), 119)

	// The bound ack opens at m00 only, and once.
	m02 := boundCodec(t, kr, clk, "m02")
	_, err = m02.DecodeDatagram(a, pinged(4, id1))
	assert.ErrorIs(t, err, ErrAuth, "bound to m00")
	got, err = m00.DecodeDatagram(a, pinged(4, id1))
	require.NoError(t, err)
	assert.Equal(t, swim.Node{ID: id1}, got.From, "the sender filled in from the ping")
	assert.Equal(t, id0, got.To.ID)
	assert.Equal(t, uint32(4), got.Ack.Seq)
	_, err = m00.DecodeDatagram(a, pinged(4, id1))
	assert.ErrorIs(t, err, ErrReplay, "m01's window")
}

// A bound ack needs the prober's record: Decode and DecodeFrame (streams)
// refuse it; one that matches no probe ping is returned with no sender and
// leaves every window as it was, so that a later genuine ack of the same
// member is still accepted.
func TestBoundAckNeedsTheProbersRecord(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	a, b := boundCodec(t, kr, clk, "a"), boundCodec(t, kr, clk, "b")
	clk.t = clk.t.Add(time.Second)
	ack := seal(t, b, &swim.Packet{Kind: swim.MsgAck, From: node("b"), To: node("a"), Ack: swim.Ack{Seq: 8, NoSenderID: true}})
	require.Equal(t, EnvelopeBound, envelope(ack))
	var de *DecodeError
	_, err := a.Decode(ack)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "from id", de.Field)
	_, _, err = a.DecodeFrame(ack, 0)
	assert.ErrorAs(t, err, &de)
	got, err := a.DecodeDatagram(ack, pinged(9, "b"))
	require.NoError(t, err)
	assert.Equal(t, swim.ID(""), got.From.ID, "unmatched: no sender")
	assert.True(t, got.Ack.NoSenderID)
	got, err = a.DecodeDatagram(ack, pinged(8, "b"))
	require.NoError(t, err, "the unmatched decode did not take its timestamp")
	assert.Equal(t, swim.ID("b"), got.From.ID)
}

// Whether an ack may name no one depends on the ping and on the envelope
// the answer goes in, never on what was heard of the prober before (atk29
// F1, F2: a member restarted into an earlier build kept getting bound
// packets). A sealed ping asks for a bound ack with tag 8, which only a
// codec with LocalID reads; a plain ping asks for a plain ack with tag 7
// (a member sending plain while encryption is turned on, maybe of an
// earlier version), which a codec that seals answers with a sealed ack
// naming both, as every version opens; a codec sending plain answers tag
// 8 with a plain ack naming no one, as a plain member would.
func TestMatchBySeqFollowsTheAnswer(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	a, b, old := boundCodec(t, kr, clk, "a"), boundCodec(t, kr, clk, "b"), boundCodec(t, kr, clk, "")
	clk.t = clk.t.Add(time.Second)
	ping := func(from swim.Node) *swim.Packet {
		return &swim.Packet{Kind: swim.MsgPing, From: from, To: node("b"), Ping: swim.Ping{Seq: 4, MatchBySeq: true}}
	}
	asks := func(recv *Codec, pkt []byte) bool {
		t.Helper()
		clk.t = clk.t.Add(time.Millisecond)
		got, err := recv.DecodeDatagram(pkt, nil)
		require.NoError(t, err)
		return got.Ping.MatchBySeq
	}
	assert.True(t, asks(b, seal(t, a, ping(node("a")))), "sealed, tag 8")
	assert.False(t, asks(old, seal(t, a, ping(node("a")))), "a codec without LocalID answers named")
	assert.False(t, asks(b, seal(t, old, ping(node("o")))), "an earlier build's sealed ping: no tag")

	a.sec.SetSendPlain(true)
	b.sec.SetAcceptPlain(true)
	plainPing := seal(t, a, ping(node("a")))
	require.Equal(t, EnvelopePlain, envelope(plainPing))
	assert.False(t, asks(b, plainPing), "tag 7 to a codec that seals: a named sealed ack")
	ack := seal(t, b, &swim.Packet{Kind: swim.MsgAck, From: node("b"), To: node("a"), Ack: swim.Ack{Seq: 4}})
	assert.Equal(t, EnvelopeEncrypted, envelope(ack))
	_, err := old.Decode(ack)
	assert.NoError(t, err, "any version opens it")

	a.sec.SetSendPlain(false)
	b.sec.SetSendPlain(true)
	assert.True(t, asks(b, seal(t, a, ping(node("a")))), "tag 8 to a codec sending plain: a plain ack")
	plainAck := seal(t, b, &swim.Packet{Kind: swim.MsgAck, From: node("b"), To: node("a"), Ack: swim.Ack{Seq: 4, NoSenderID: true}})
	assert.Equal(t, EnvelopePlain, envelope(plainAck))
}

// A bound packet is an ack that names neither member: a bound ping, or a
// bound ack that names one, is malformed.
func TestBoundPacketIsAnAckNamingNoOne(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	a := boundCodec(t, kr, clk, "a")
	clk.t = clk.t.Add(time.Second)
	for _, p := range []*swim.Packet{
		{Kind: swim.MsgPing, From: node("b"), Ping: swim.Ping{Seq: 1}},
		{Kind: swim.MsgAck, From: node("b"), Ack: swim.Ack{Seq: 1}},
		{Kind: swim.MsgAck, To: node("a"), Ack: swim.Ack{Seq: 1, NoSenderID: true}},
		{Kind: swim.MsgNack, From: node("b"), Nack: swim.Nack{Seq: 1}},
	} {
		head := []byte{0, 0, 0, 0, 0, 0, 0, 0}
		ts := a.replay.stamp()
		for i := range head {
			head[i] = byte(ts >> (56 - 8*i))
		}
		payload, _, err := marshal(head, p, 0, encoding{v: 2, sealed: true})
		require.NoError(t, err)
		pkt, err := a.sec.seal(nil, payload, true, "a")
		require.NoError(t, err)
		var de *DecodeError
		_, err = a.DecodeDatagram(pkt, pinged(1, "b"))
		require.ErrorAs(t, err, &de, "%v from %q to %q", p.Kind, p.From.ID, p.To.ID)
		assert.ErrorIs(t, err, ErrMalformed)
	}
}

// Security.Open, which knows no member, refuses a bound packet with
// ErrEnvelope (a Codec with LocalID opens it), and a Codec opens one bound
// to another member not at all (ErrAuth).
func TestOpenRefusesBound(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	sec := &Security{Keyring: kr}
	pkt, err := sec.seal(nil, []byte("payload"), true, "a")
	require.NoError(t, err)
	require.Equal(t, EnvelopeBound, envelope(pkt))
	_, err = sec.Open(pkt)
	assert.ErrorIs(t, err, ErrEnvelope)
	_, _, err = sec.open(pkt, "b")
	assert.ErrorIs(t, err, ErrAuth)
	out, env, err := sec.open(pkt, "a")
	require.NoError(t, err)
	assert.Equal(t, EnvelopeBound, env)
	assert.Equal(t, []byte("payload"), out)
}

// DecodeDatagram fills in a plain ack's sender too, so that the agent
// resolves an ack without IDs in one place whatever its envelope; one that
// matches no probe ping keeps its empty sender.
func TestDecodeDatagramFillsPlainAck(t *testing.T) {
	c, err := NewCodec(CodecConfig{Security: &Security{Plain: true}})
	require.NoError(t, err)
	b := seal(t, c, &swim.Packet{Kind: swim.MsgAck, From: node("b"), To: node("a"), Ack: swim.Ack{Seq: 4, NoSenderID: true}})
	got, err := c.DecodeDatagram(b, pinged(4, "b"))
	require.NoError(t, err)
	assert.Equal(t, swim.ID("b"), got.From.ID)
	got, err = c.DecodeDatagram(b, pinged(9, "b"))
	require.NoError(t, err)
	assert.Equal(t, swim.ID(""), got.From.ID)
	assert.True(t, got.Ack.NoSenderID)
}
