package wire

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// A labelled packet is the label header, then the envelope: exact bytes
// for a plain one, and the sealed one opens only with the same label.
func TestLabelLayout(t *testing.T) {
	plain := &Security{Plain: true, Label: "dc1"}
	b, err := plain.Seal(nil, []byte("hi"))
	require.NoError(t, err)
	assert.Equal(t, []byte{EnvelopeLabel, 3, 'd', 'c', '1', EnvelopePlain, 'h', 'i'}, b)
	assert.Equal(t, 1+5, plain.Overhead())
	out, err := plain.Open(b)
	require.NoError(t, err)
	assert.Equal(t, []byte("hi"), out)

	kr, _ := NewKeyring(key(1, 16))
	enc := &Security{Keyring: kr, Label: "dc1"}
	assert.Equal(t, 29+5, enc.Overhead())
	s, err := enc.Seal(nil, []byte("hi"))
	require.NoError(t, err)
	assert.Len(t, s, 29+5+2)
	assert.Equal(t, []byte{EnvelopeLabel, 3, 'd', 'c', '1', EnvelopeEncrypted}, s[:6])
	out, err = enc.Open(s)
	require.NoError(t, err)
	assert.Equal(t, []byte("hi"), out)

	// The label is authenticated: the same key under another label of the
	// same length, with the header rewritten to match, fails.
	forged := bytes.Clone(s)
	copy(forged[2:5], "dc2")
	_, err = (&Security{Keyring: kr, Label: "dc2"}).Open(forged)
	assert.ErrorIs(t, err, ErrAuth)
}

// Every mismatch of labels is refused with ErrLabel, naming both labels,
// before any key is tried; truncated headers are ErrShort.
func TestLabelMismatch(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	seal := func(label string) []byte {
		b, err := (&Security{Keyring: kr, Label: label}).Seal(nil, []byte("x"))
		require.NoError(t, err)
		return b
	}
	for _, c := range []struct {
		have, sent, msg string
	}{
		{"dc1", "dc2", `packet labelled "dc2", want "dc1"`},
		{"dc1", "", `packet has no label, want "dc1"`},
		{"", "dc1", `packet labelled "dc1", this member has no label`},
		{"dc1", "dc10", `packet labelled "dc10", want "dc1"`},
	} {
		_, err := (&Security{Keyring: kr, Label: c.have}).Open(seal(c.sent))
		assert.ErrorIs(t, err, ErrLabel, "%+v", c)
		assert.ErrorContains(t, err, c.msg)
	}
	sec := &Security{Plain: true, Label: "dc1"}
	for _, p := range [][]byte{{EnvelopeLabel}, {EnvelopeLabel, 3, 'd', 'c', '1'}, {EnvelopeLabel, 200, 'd'}} {
		_, err := sec.Open(p)
		assert.ErrorIs(t, err, ErrShort, "%x", p)
	}
	assert.ErrorContains(t, (&Security{Plain: true, Label: strings.Repeat("l", 256)}).Validate(), "Label is 256 bytes, at most 255")
	require.NoError(t, (&Security{Plain: true, Label: strings.Repeat("l", 255)}).Validate())
}

// Turning encryption on: each stage's member reads the packets of the
// stages next to it, and a packet sealed with another key is refused at
// every stage.
func TestPlainMigrationStages(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	other, _ := NewKeyring(key(2, 16))
	stage := func(accept, send bool) *Codec {
		sec := &Security{Keyring: kr}
		sec.SetAcceptPlain(accept)
		sec.SetSendPlain(send)
		c, err := NewCodec(CodecConfig{Security: sec})
		require.NoError(t, err)
		return c
	}
	plainGroup, _ := NewCodec(CodecConfig{Security: &Security{Plain: true}})
	s1, s2, s3 := stage(true, true), stage(true, false), stage(false, false)
	wrong, _ := NewCodec(CodecConfig{Security: &Security{Keyring: other}})
	p := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "a", Addr: "127.0.0.1:1"}, Ping: swim.Ping{Seq: 1}}
	enc := func(c *Codec) []byte {
		b, _, err := c.Encode(p)
		require.NoError(t, err)
		return b
	}
	ok := func(c *Codec, b []byte, want bool, what string) {
		_, err := c.Decode(b)
		assert.Equal(t, want, err == nil, "%s: %v", what, err)
	}
	assert.Equal(t, EnvelopePlain, enc(s1)[0], "stage 1 sends plain")
	assert.Equal(t, EnvelopeEncrypted, enc(s2)[0], "stage 2 seals")
	ok(plainGroup, enc(s1), true, "a plain member reads stage 1")
	ok(s1, enc(plainGroup), true, "stage 1 reads a plain member")
	ok(s1, enc(s2), true, "stage 1 reads stage 2")
	ok(s2, enc(s1), true, "stage 2 reads stage 1")
	ok(s3, enc(s2), true, "stage 3 reads stage 2")
	ok(s2, enc(s3), true, "stage 2 reads stage 3")
	ok(s3, enc(s1), false, "stage 3 refuses plain")
	ok(plainGroup, enc(s2), false, "a plain member cannot read sealed packets")
	for i, c := range []*Codec{s1, s2, s3} {
		_, err := c.Decode(enc(wrong))
		assert.ErrorIs(t, err, ErrAuth, "stage %d, another key", i+1)
	}
	assert.Equal(t, uint64(1), s1.Stats().PlainAccepted, "the plain member's packet")
	assert.Equal(t, uint64(1), s2.Stats().PlainAccepted, "stage 1's packet")
	assert.Zero(t, s3.Stats().PlainAccepted)
	assert.Zero(t, plainGroup.Stats().PlainAccepted, "plain mode counts nothing as a migration's plain packet")
	assert.Equal(t, s1.MaxPayload(), s3.MaxPayload(), "sending plain keeps the sealed bound")
}

// A codec whose SendPlain flips while it encodes (Agent.SetSendPlain
// during traffic) still sends packets that decode: each is sealed with
// its timestamp or plain without one, never a mix of the two.
func TestEncodeWhileSendPlainFlips(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	sec := &Security{Keyring: kr}
	sec.SetAcceptPlain(true)
	send, err := NewCodec(CodecConfig{Security: sec})
	require.NoError(t, err)
	rsec := &Security{Keyring: kr}
	rsec.SetAcceptPlain(true)
	recv, err := NewCodec(CodecConfig{Security: rsec})
	require.NoError(t, err)
	stop := make(chan struct{})
	flipped := make(chan struct{})
	go func() {
		defer close(flipped)
		for on := true; ; on = !on {
			select {
			case <-stop:
				return
			default:
				sec.SetSendPlain(on)
			}
		}
	}()
	p := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "a", Addr: "127.0.0.1:1"}, Ping: swim.Ping{Seq: 1}}
	bad := 0
	for range 20000 {
		b, _, err := send.Encode(p)
		require.NoError(t, err)
		if _, err := recv.Decode(b); err != nil {
			bad++
		}
	}
	close(stop)
	<-flipped
	assert.Zero(t, bad, "packets of 20,000 that did not decode")
}

// With SkipInboundLabelCheck a transport in front strips the label:
// packets without one open as if they carried this member's label (a
// sealed one still authenticates it), and one that still carries a label
// is refused, as memberlist refuses a "double label header".
func TestSkipInboundLabelCheck(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	strip := func(pk []byte) []byte { return pk[2+int(pk[1]):] }
	for _, tc := range []struct {
		name                 string
		sender, other, recv  *Security
		wantOther, wantLabel error
	}{
		{"sealed", &Security{Keyring: kr, Label: "dc1"}, &Security{Keyring: kr, Label: "dc2"},
			&Security{Keyring: kr, Label: "dc1", SkipInboundLabelCheck: true}, ErrAuth, ErrLabel},
		{"plain", &Security{Plain: true, Label: "dc1"}, &Security{Plain: true, Label: "dc2"},
			&Security{Plain: true, Label: "dc1", SkipInboundLabelCheck: true}, nil, ErrLabel},
	} {
		pk, err := tc.sender.Seal(nil, []byte("hi"))
		require.NoError(t, err)
		out, err := tc.recv.Open(strip(pk))
		require.NoError(t, err, tc.name)
		assert.Equal(t, []byte("hi"), out, tc.name)
		_, err = tc.recv.Open(pk)
		assert.ErrorIs(t, err, tc.wantLabel, "%s: a label the transport should have stripped", tc.name)
		other, err := tc.other.Seal(nil, []byte("hi"))
		require.NoError(t, err)
		_, err = tc.recv.Open(strip(other))
		if tc.wantOther == nil {
			assert.NoError(t, err, "%s: a plain packet has nothing to authenticate the label with", tc.name)
		} else {
			assert.ErrorIs(t, err, tc.wantOther, "%s: sealed under another label", tc.name)
		}
		// What it sends still carries the label.
		own, err := tc.recv.Seal(nil, []byte("hi"))
		require.NoError(t, err)
		assert.Equal(t, byte(EnvelopeLabel), own[0], tc.name)
	}
}

// A packet whose first byte is no envelope's is ErrEnvelope in a labelled
// group too, not a packet of another group: random bytes are not counted
// as label mismatches (issue 27, user31 F7). An unlabelled plain or sealed
// packet is one.
func TestGarbageIsNotLabelMismatch(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	for _, s := range []*Security{{Keyring: kr, Label: "dc1"}, {Plain: true, Label: "dc1"}} {
		for _, first := range []byte{0x00, 0x05, 0x7f, 0xff} {
			_, err := s.Open([]byte{first, 'x', 'y', 'z'})
			assert.ErrorIs(t, err, ErrEnvelope, "first byte 0x%02x", first)
			assert.NotErrorIs(t, err, ErrLabel, "first byte 0x%02x", first)
		}
		for _, first := range []byte{EnvelopePlain, EnvelopeEncrypted, EnvelopeBound} {
			_, err := s.Open([]byte{first, 'x', 'y', 'z'})
			assert.ErrorIs(t, err, ErrLabel, "first byte 0x%02x", first)
		}
	}
}
