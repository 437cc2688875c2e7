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

// The bound exchange, worked: m00 probes m01 with 36-byte IDs. The first
// sealed ping says m00 reads bound packets (tag 8) and names both members;
// m01's answer, sealed, names both and says the same of m01. From then on
// each binds its packets to the other: the ping leaves out the receiver's
// ID and carries tag 7, and the ack to it names no one. Bound packets open
// at their receiver only, and the ack counts as the pinged member's.
func TestBoundProbeRoundTrip(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	id0, id1 := swim.ID("m00-4d6f-8a1b-2c3d4e5f6a7b8c9d0e1f2a"), swim.ID("m01-4d6f-8a1b-2c3d4e5f6a7b8c9d0e1f2a")
	require.Len(t, id0, 36)
	m00, m01 := boundCodec(t, kr, clk, id0), boundCodec(t, kr, clk, id1)
	n00, n01 := swim.Node{ID: id0, Addr: "127.0.0.1:40123"}, swim.Node{ID: id1, Addr: "127.0.0.1:40124"}
	clk.t = clk.t.Add(time.Second)
	ping := func(seq uint32) *swim.Packet {
		return &swim.Packet{Kind: swim.MsgPing, From: n00, To: n01, Ping: swim.Ping{Seq: seq, MatchBySeq: true}}
	}
	ack := func(seq uint32) *swim.Packet {
		return &swim.Packet{Kind: swim.MsgAck, From: n01, To: n00, Ack: swim.Ack{Seq: seq, NoSenderID: true}}
	}

	// First exchange: neither knows the other reads bound packets.
	b := seal(t, m00, ping(2))
	assert.Equal(t, EnvelopeEncrypted, envelope(b))
	assert.Len(t, b, 136, "29 + 8 + 2 + 53 + (1 + 36 + 1) + 1 + (1 + 2, tag 8) + 2")
	got, err := m01.DecodeDatagram(b, nil)
	require.NoError(t, err)
	assert.Equal(t, id1, got.To.ID)
	assert.False(t, got.Ping.MatchBySeq, "no tag 7 in a packet that is not bound")
	firstAck := seal(t, m01, ack(2))
	assert.Equal(t, EnvelopeBound, envelope(firstAck), "m00's ping said it reads bound packets")

	// The second round: both bound.
	got, err = m00.DecodeDatagram(firstAck, pinged(2, id1))
	require.NoError(t, err)
	assert.Equal(t, swim.Node{ID: id1}, got.From, "the sender filled in from the ping")
	assert.Equal(t, id0, got.To.ID)
	assert.Equal(t, uint32(2), got.Ack.Seq)
	b2 := seal(t, m00, ping(4))
	assert.Equal(t, EnvelopeBound, envelope(b2))
	got, err = m01.DecodeDatagram(b2, nil)
	require.NoError(t, err)
	assert.Equal(t, n00, got.From)
	assert.Equal(t, id1, got.To.ID)
	assert.True(t, got.Ping.MatchBySeq)
	a2 := seal(t, m01, ack(4))

	// Sizes: envelope 1 + nonce 12 + tag 16 = 29, timestamp 8; payload:
	// version and kind 2, from 1 + 36 + 1 + 15 = 53, to 1 + 1 = 2 (bound: no
	// ID, no address), seq 1, extensions 1 + 2 (tag 7) = 3, update count
	// 2. Ping 29 + 8 + 2 + 53 + 2 + 1 + 3 + 2 = 100. Ack 29 + 8 + 2 + 2 +
	// 2 + 1 + 1 + 2 = 47; named, as a codec without LocalID seals it, 36
	// bytes more for each ID: 119.
	assert.Len(t, b2, 100)
	assert.Len(t, a2, 47)
	named := seal(t, boundCodec(t, kr, clk, ""), ack(4))
	assert.Len(t, named, 119)

	// The bound ack opens at m00 only, and once.
	m02 := boundCodec(t, kr, clk, "m02")
	_, err = m02.DecodeDatagram(a2, pinged(4, id1))
	assert.ErrorIs(t, err, ErrAuth, "bound to m00")
	got, err = m00.DecodeDatagram(a2, pinged(4, id1))
	require.NoError(t, err)
	assert.Equal(t, id1, got.From.ID)
	_, err = m00.DecodeDatagram(a2, pinged(4, id1))
	assert.ErrorIs(t, err, ErrReplay, "m01's window")
}

// A bound ack without its sender's ID needs the prober's record: Decode
// and DecodeFrame (streams) refuse it; one that matches no probe ping is
// returned with no sender and leaves every window as it was, so that a
// later genuine ack of the same member is still accepted.
func TestBoundAckNeedsTheProbersRecord(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	a, b := boundCodec(t, kr, clk, "a"), boundCodec(t, kr, clk, "b")
	clk.t = clk.t.Add(time.Second)
	_, err := b.Decode(seal(t, a, pingFrom("a", 1))) // b learns that a reads bound packets
	require.NoError(t, err)
	ack := seal(t, b, &swim.Packet{Kind: swim.MsgAck, From: node("b"), To: node("a"), Ack: swim.Ack{Seq: 8, NoSenderID: true}})
	require.Equal(t, EnvelopeBound, envelope(ack))
	var de *DecodeError
	_, err = a.Decode(ack)
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

// Whether a member reads bound packets is what its latest sealed packet
// said: a member that restarts with a build before them (its sealed
// packets carry no tag 8) gets packets that name it again at once, and a
// codec without LocalID neither says it nor binds. Bound packets are
// sealed packets only: a codec sending plain while encryption is turned
// on (SetSendPlain) sends its usual plain ack.
func TestBoundFollowsTheLatestPacket(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	a, b := boundCodec(t, kr, clk, "a"), boundCodec(t, kr, clk, "b")
	old := boundCodec(t, kr, clk, "") // as a build before bound packets
	clk.t = clk.t.Add(time.Second)
	toA := &swim.Packet{Kind: swim.MsgGossip, From: node("b"), To: node("a")}

	assert.Equal(t, EnvelopeEncrypted, envelope(seal(t, b, toA)), "nothing heard of a")
	_, err := b.Decode(seal(t, a, pingFrom("a", 1)))
	require.NoError(t, err)
	assert.Equal(t, EnvelopeBound, envelope(seal(t, b, toA)))
	clk.t = clk.t.Add(time.Millisecond)               // two codecs stamp "a": apart
	_, err = b.Decode(seal(t, old, pingFrom("a", 2))) // a restarted, older
	require.NoError(t, err)
	assert.Equal(t, EnvelopeEncrypted, envelope(seal(t, b, toA)))
	got, err := old.Decode(seal(t, b, toA))
	require.NoError(t, err, "the older build reads it")
	assert.Equal(t, swim.ID("a"), got.To.ID)
	_, err = old.Decode(seal(t, a, pingFrom("a", 3)))
	require.NoError(t, err)
	assert.Equal(t, EnvelopeEncrypted, envelope(seal(t, old, &swim.Packet{Kind: swim.MsgGossip, From: node("x"), To: node("a")})), "no LocalID: never bound")

	clk.t = clk.t.Add(time.Millisecond)
	_, err = b.Decode(seal(t, a, pingFrom("a", 4)))
	require.NoError(t, err)
	b.sec.SetSendPlain(true)
	plainAck := seal(t, b, &swim.Packet{Kind: swim.MsgAck, From: node("b"), To: node("a"), Ack: swim.Ack{Seq: 8, NoSenderID: true}})
	assert.Equal(t, EnvelopePlain, envelope(plainAck))
}

// A bound packet that names a receiver anyway is malformed: the envelope
// names it. So is a bound nack without its sender (only an ack to a
// probe ping leaves it out), which the decoder refuses as any packet
// without a sender.
func TestBoundPacketNamesNoReceiver(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	a := boundCodec(t, kr, clk, "a")
	clk.t = clk.t.Add(time.Second)
	stamp := func() []byte {
		var h [timestampSize]byte
		ts := a.replay.stamp()
		for i := range h {
			h[i] = byte(ts >> (56 - 8*i))
		}
		return h[:]
	}
	for _, tc := range []struct {
		p     *swim.Packet
		field string
	}{
		{&swim.Packet{Kind: swim.MsgPing, From: node("b"), To: node("a"), Ping: swim.Ping{Seq: 1}}, "to id"},
		{&swim.Packet{Kind: swim.MsgNack, From: swim.Node{}, To: swim.Node{}, Nack: swim.Nack{Seq: 1}}, "from id"},
	} {
		payload, _, err := marshal(stamp(), tc.p, 0, encoding{v: 2, sealed: true})
		if tc.p.Kind == swim.MsgNack {
			// The encoder refuses a nack without its sender; write one by hand.
			payload = append(stamp(), 2, byte(swim.MsgNack), 0, 0, 0, 0, 1, 0, 0, 0)
			err = nil
		}
		require.NoError(t, err)
		pkt, err := a.sec.seal(nil, payload, true, "a")
		require.NoError(t, err)
		var de *DecodeError
		_, err = a.DecodeDatagram(pkt, pinged(1, "b"))
		require.ErrorAs(t, err, &de, "%v", tc.p.Kind)
		assert.Equal(t, tc.field, de.Field, "%v", tc.p.Kind)
	}
}
