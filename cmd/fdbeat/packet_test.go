package main

import (
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
		"version": append(append([]byte{}, good[:4]...), append([]byte{2}, good[5:]...)...),
		"trailer": append(append([]byte{}, good...), 'x'),
		"name":    func() []byte { b := append([]byte{}, good...); b[30] = ' '; return b }(),
	}
	for name, b := range cases {
		_, err := decodePacket(b)
		var pe *packetError
		assert.ErrorAs(t, err, &pe, name)
	}
	_, err := decodePacket(good[:packetHeaderSize+1])
	assert.ErrorContains(t, err, "field length: want 32 bytes (name length 2), got 31")
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
	f.Add([]byte("FDHB"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePacket(b)
		if err != nil {
			return
		}
		// A valid packet re-encodes to the same bytes.
		again, err := appendPacket(nil, p)
		if err != nil {
			t.Fatalf("decoded packet does not encode: %v", err)
		}
		if string(again) != string(b) {
			t.Fatalf("round trip changed the packet: %x -> %x", b, again)
		}
	})
}
