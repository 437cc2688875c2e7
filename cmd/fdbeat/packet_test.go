package main

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPacketRoundTrip(t *testing.T) {
	p := packet{Name: "node-1", Incarnation: 1764420000123456789, Seq: 42, Sent: 1764420001 * time.Second}
	b, err := appendPacket(nil, p)
	require.NoError(t, err)
	assert.Len(t, b, 36)
	assert.Equal(t, []byte("FDHB\x01\x06"), b[:6])
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 42}, b[14:22])
	got, err := decodePacket(b)
	require.NoError(t, err)
	assert.Equal(t, p, got)

	anon, _ := appendPacket(nil, packet{Seq: 0})
	assert.Len(t, anon, packetHeaderSize)
	got, err = decodePacket(anon)
	require.NoError(t, err)
	assert.Equal(t, packet{}, got)
}

func TestPacketErrors(t *testing.T) {
	good, _ := appendPacket(nil, packet{Name: "ab", Seq: 1})
	cases := map[string][]byte{
		"length":  good[:10],
		"magic":   append([]byte("XXHB"), good[4:]...),
		"version": append(append([]byte{}, good[:4]...), append([]byte{3}, good[5:]...)...),
		"no MAC":  append(append([]byte{}, good[:4]...), append([]byte{2}, good[5:]...)...),
		"trailer": append(append([]byte{}, good...), 'x'),
		"name":    func() []byte { b := append([]byte{}, good...); b[30] = ' '; return b }(),
	}
	for name, b := range cases {
		_, err := decodePacket(b)
		var pe *packetError
		assert.ErrorAs(t, err, &pe, name)
	}
	_, err := decodePacket(good[:packetHeaderSize+1])
	assert.ErrorContains(t, err, "field length: want 32 bytes (version 1, name length 2), got 31")
	_, err = appendPacket(nil, packet{Name: "has space"})
	assert.ErrorIs(t, err, errNameInvalid)
	_, err = appendPacket(nil, packet{Name: string(make([]byte, 256))})
	assert.ErrorIs(t, err, errNameInvalid)
	for _, n := range []string{"-", "#x", "a\tb", "\xff"} {
		_, err = appendPacket(nil, packet{Name: n})
		assert.ErrorIs(t, err, errNameInvalid, n)
	}
}

func FuzzDecodePacket(f *testing.F) {
	good, _ := appendPacket(nil, packet{Name: "n1", Incarnation: 7, Seq: 3, Sent: 99})
	f.Add(good)
	body, _ := appendPacket(nil, packet{Name: "n1", Incarnation: 7, Seq: 3, Sent: 99, Signed: true})
	f.Add(signPacket(body, []byte("0123456789abcdef")))
	f.Add([]byte("FDHB"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePacket(b)
		if err != nil {
			return
		}
		// A valid packet re-encodes to the same bytes (a version-2 one
		// with its MAC, which decoding does not check).
		again, err := appendPacket(nil, p)
		if err != nil {
			t.Fatalf("decoded packet does not encode: %v", err)
		}
		if p.Signed {
			again = append(again, b[len(b)-macSize:]...)
		}
		if string(again) != string(b) {
			t.Fatalf("round trip changed the packet: %x -> %x", b, again)
		}
	})
}

// An authenticated packet verifies under its key (also as a second key of
// the ring), and fails under another key, with any byte changed, or
// truncated; HMAC-SHA256 itself is checked against RFC 4231 test case 2.
func TestPacketMAC(t *testing.T) {
	tc2 := signPacket([]byte("what do ya want for nothing?"), []byte("Jefe"))
	assert.Equal(t, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", hex.EncodeToString(tc2[len(tc2)-macSize:]))

	k1, k2 := []byte("0123456789abcdef"), []byte("fedcba9876543210")
	body, err := appendPacket(nil, packet{Name: "a", Incarnation: 5, Seq: 9, Sent: 77, Signed: true})
	require.NoError(t, err)
	assert.Equal(t, byte(2), body[4])
	b := signPacket(body, k1)
	require.Len(t, b, packetHeaderSize+1+macSize)
	p, err := decodePacket(b)
	require.NoError(t, err)
	assert.Equal(t, packet{Name: "a", Incarnation: 5, Seq: 9, Sent: 77, Signed: true}, p)
	assert.True(t, verifyPacket(b, [][]byte{k1}))
	assert.True(t, verifyPacket(b, [][]byte{k2, k1}))
	assert.False(t, verifyPacket(b, [][]byte{k2}))
	assert.False(t, verifyPacket(b, nil))
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 1
		assert.False(t, verifyPacket(c, [][]byte{k1}), "byte %d flipped", i)
	}
	assert.False(t, verifyPacket(b[:10], [][]byte{k1}))
}
