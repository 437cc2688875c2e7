package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func key(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

func TestKeyringValidation(t *testing.T) {
	for _, n := range []int{0, 1, 15, 17, 31, 33, 64} {
		_, err := NewKeyring(key(1, n))
		assert.Error(t, err, "key of %d bytes", n)
	}
	for _, n := range []int{16, 24, 32} {
		_, err := NewKeyring(key(1, n))
		assert.NoError(t, err, "key of %d bytes", n)
	}
	_, err := NewKeyring(key(1, 16), key(1, 16))
	assert.ErrorContains(t, err, "already")
	_, err = NewKeyring(key(1, 16), key(2, 7))
	assert.ErrorContains(t, err, "7 bytes")
}

func TestSecurityValidate(t *testing.T) {
	kr, err := NewKeyring(key(1, 16))
	require.NoError(t, err)
	var nilSec *Security
	assert.Error(t, nilSec.Validate())
	assert.ErrorContains(t, (&Security{}).Validate(), "Plain: true")
	assert.ErrorContains(t, (&Security{Plain: true, Keyring: kr}).Validate(), "both")
	assert.ErrorContains(t, (&Security{Keyring: &Keyring{}}).Validate(), "empty")
	_, err = (&Security{}).Seal(nil, []byte("x"))
	assert.Error(t, err)
	_, err = (&Security{}).Open([]byte{EnvelopePlain})
	assert.Error(t, err)
}

func TestSealOpenRoundTrip(t *testing.T) {
	kr, err := NewKeyring(key(7, 32))
	require.NoError(t, err)
	s := &Security{Keyring: kr}
	for _, payload := range [][]byte{{}, []byte("hello"), key(9, 1371)} {
		pkt, err := s.Seal(nil, payload)
		require.NoError(t, err)
		assert.Equal(t, len(payload)+Overhead(true), len(pkt))
		assert.Equal(t, EnvelopeEncrypted, pkt[0])
		if len(payload) > 4 {
			assert.False(t, bytes.Contains(pkt, payload), "payload visible in ciphertext")
		}
		got, err := s.Open(pkt)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(payload, got), "round trip of %d bytes", len(payload))
	}
	// Two seals of the same payload differ (fresh nonce).
	a, _ := s.Seal(nil, []byte("same"))
	b, _ := s.Seal(nil, []byte("same"))
	assert.NotEqual(t, a, b)
}

func TestSealAppendsToDst(t *testing.T) {
	s := &Security{Plain: true}
	pkt, err := s.Seal([]byte("pre"), []byte("xy"))
	require.NoError(t, err)
	assert.Equal(t, []byte{'p', 'r', 'e', EnvelopePlain, 'x', 'y'}, pkt)
}

func TestOpenRejectsTampering(t *testing.T) {
	kr, _ := NewKeyring(key(7, 16))
	s := &Security{Keyring: kr}
	pkt, err := s.Seal(nil, []byte("membership update"))
	require.NoError(t, err)
	for i := range pkt {
		bad := append([]byte(nil), pkt...)
		bad[i] ^= 0x40
		_, err := s.Open(bad)
		require.Error(t, err, "flipped byte %d", i)
		if i > 0 {
			assert.ErrorIs(t, err, ErrAuth, "flipped byte %d", i)
		}
	}
	// Truncations.
	for n := 0; n < len(pkt); n++ {
		_, err := s.Open(pkt[:n])
		assert.Error(t, err, "truncated to %d", n)
	}
	_, err = s.Open(pkt[:Overhead(true)-1])
	assert.ErrorIs(t, err, ErrShort)
	_, err = s.Open(nil)
	assert.ErrorIs(t, err, ErrShort)
}

func TestEnvelopeModes(t *testing.T) {
	kr, _ := NewKeyring(key(7, 16))
	enc := &Security{Keyring: kr}
	plain := &Security{Plain: true}

	p, err := plain.Seal(nil, []byte("hi"))
	require.NoError(t, err)
	_, err = enc.Open(p)
	assert.ErrorIs(t, err, ErrPlainRefused)

	e, err := enc.Seal(nil, []byte("hi"))
	require.NoError(t, err)
	_, err = plain.Open(e)
	assert.ErrorIs(t, err, ErrEncrypted)

	_, err = enc.Open([]byte{0x7f, 1, 2})
	assert.ErrorIs(t, err, ErrEnvelope)
	assert.ErrorContains(t, err, "0x7f")

	got, err := plain.Open(p)
	require.NoError(t, err)
	assert.Equal(t, []byte("hi"), got)

	// Downgrade: rewriting the envelope byte of an encrypted packet to plain
	// makes an encrypted receiver refuse it.
	d := append([]byte(nil), e...)
	d[0] = EnvelopePlain
	_, err = enc.Open(d)
	assert.ErrorIs(t, err, ErrPlainRefused)
}

func TestWrongKeyFailsAuth(t *testing.T) {
	a, _ := NewKeyring(key(1, 16))
	b, _ := NewKeyring(key(2, 16))
	pkt, err := (&Security{Keyring: a}).Seal(nil, []byte("x"))
	require.NoError(t, err)
	_, err = (&Security{Keyring: b}).Open(pkt)
	assert.ErrorIs(t, err, ErrAuth)
}

// TestKeyRotation walks the three-step rotation: install the new key
// everywhere, make it primary, remove the old one. At each step members at
// different steps still understand each other.
func TestKeyRotation(t *testing.T) {
	oldK, newK := key(1, 32), key(2, 32)
	ra, _ := NewKeyring(oldK)
	rb, _ := NewKeyring(oldK)
	a, b := &Security{Keyring: ra}, &Security{Keyring: rb}
	talk := func(step string) {
		t.Helper()
		for _, dir := range [][2]*Security{{a, b}, {b, a}} {
			pkt, err := dir[0].Seal(nil, []byte(step))
			require.NoError(t, err, step)
			got, err := dir[1].Open(pkt)
			require.NoError(t, err, step)
			assert.Equal(t, step, string(got))
		}
	}
	require.NoError(t, ra.AddKey(newK))
	talk("a has both, b only old")
	require.NoError(t, rb.AddKey(newK))
	require.NoError(t, ra.UseKey(newK))
	talk("a seals with new, b has both")
	require.NoError(t, rb.UseKey(newK))
	require.NoError(t, ra.RemoveKey(oldK))
	talk("a only new, b seals with new")
	require.NoError(t, rb.RemoveKey(oldK))
	talk("both only new")
	assert.Equal(t, 1, ra.Len())

	// b no longer opens packets sealed with the old key.
	old, _ := NewKeyring(oldK)
	pkt, _ := (&Security{Keyring: old}).Seal(nil, []byte("stale"))
	_, err := b.Open(pkt)
	assert.ErrorIs(t, err, ErrAuth)
}

func TestKeyringErrors(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16), key(2, 16))
	assert.ErrorContains(t, kr.UseKey(key(3, 16)), "not in keyring")
	assert.ErrorContains(t, kr.RemoveKey(key(3, 16)), "not in keyring")
	assert.ErrorContains(t, kr.RemoveKey(key(1, 16)), "primary")
	assert.Error(t, kr.AddKey(key(2, 16)))
	assert.Error(t, kr.AddKey(nil))
	require.NoError(t, kr.RemoveKey(key(2, 16)))
	assert.Equal(t, 1, kr.Len())
}

func TestParseKey(t *testing.T) {
	k, err := ParseKey("  000102030405060708090a0b0c0d0e0f\n")
	require.NoError(t, err)
	assert.Equal(t, 16, len(k))
	assert.Equal(t, byte(0x0f), k[15])
	_, err = ParseKey("zz")
	assert.ErrorContains(t, err, "not hex")
	_, err = ParseKey(strings.Repeat("ab", 10))
	assert.ErrorContains(t, err, "10 bytes")
}

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

func TestSealNonceError(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	_, err := (&Security{Keyring: kr, Rand: failReader{}}).Seal(nil, []byte("x"))
	assert.ErrorContains(t, err, "no entropy")
}

// FuzzOpen feeds arbitrary packets to an encrypted and a plain receiver:
// Open never panics, and only packets sealed with a known key are accepted.
func FuzzOpen(f *testing.F) {
	kr, _ := NewKeyring(key(5, 16), key(6, 24))
	enc := &Security{Keyring: kr}
	plain := &Security{Plain: true}
	labelled := &Security{Keyring: kr, Label: "dc1"}
	labelled.SetAcceptPlain(true)
	// A fixed nonce keeps the seed identical in every fuzz worker process.
	good, _ := (&Security{Keyring: kr, Rand: bytes.NewReader(make([]byte, nonceSize))}).Seal(nil, []byte("seed"))
	goodLabelled, _ := (&Security{Keyring: kr, Label: "dc1", Rand: bytes.NewReader(make([]byte, nonceSize))}).Seal(nil, []byte("seed"))
	f.Add(good)
	f.Add(goodLabelled)
	f.Add([]byte{EnvelopeLabel, 3, 'd', 'c', '1', EnvelopePlain, 1, 2})
	f.Add([]byte{EnvelopeLabel, 9, 'd'})
	f.Add([]byte{EnvelopePlain, 1, 2, 3})
	f.Add([]byte{EnvelopeEncrypted})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		if out, err := enc.Open(pkt); err == nil {
			// Only the seed can authenticate; a fuzzer forging GCM would be news.
			if !bytes.Equal(pkt, good) {
				t.Fatalf("forged packet accepted: %x -> %x", pkt, out)
			}
		}
		out, err := plain.Open(pkt)
		if err == nil && !bytes.HasSuffix(pkt, out) {
			t.Fatalf("plain open changed payload")
		}
		if err == nil && pkt[0] == EnvelopeLabel && pkt[1] != 0 {
			t.Fatalf("a labelled packet accepted by a member without a label: %x", pkt)
		}
		// With a label and plain accepted: only packets under that label,
		// and sealed ones only as the seed.
		if out, err := labelled.Open(pkt); err == nil {
			if !bytes.HasPrefix(pkt, []byte{EnvelopeLabel, 3, 'd', 'c', '1'}) {
				t.Fatalf("packet without the label accepted: %x", pkt)
			}
			if pkt[5] == EnvelopeEncrypted && !bytes.Equal(pkt, goodLabelled) {
				t.Fatalf("forged labelled packet accepted: %x -> %x", pkt, out)
			}
		}
	})
}

func TestKeyringKeysAndReplace(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16), key(2, 16))
	ks := kr.Keys()
	require.Len(t, ks, 2)
	assert.Equal(t, key(1, 16), ks[0])
	ks[0][0] = 9 // a copy
	assert.Equal(t, key(1, 16), kr.Keys()[0])

	sealedOld, _ := (&Security{Keyring: kr}).Seal(nil, []byte("x"))
	require.NoError(t, kr.Replace([][]byte{key(3, 32), key(2, 16)}))
	assert.Equal(t, [][]byte{key(3, 32), key(2, 16)}, kr.Keys())
	_, err := (&Security{Keyring: kr}).Open(sealedOld)
	assert.ErrorIs(t, err, ErrAuth, "key 1 is gone")

	assert.Error(t, kr.Replace(nil))
	assert.Error(t, kr.Replace([][]byte{key(4, 5)}))
	assert.Error(t, kr.Replace([][]byte{key(4, 16), key(4, 16)}))
	assert.Equal(t, 2, kr.Len(), "unchanged after errors")
}
