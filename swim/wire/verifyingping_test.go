package wire

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// collidingID returns an ID that starts with prefix and whose check
// (swim.IDCheck, FNV-1a 32) is target, found by meeting in the middle:
// the hash states after prefix and 3 more bytes, against the states that
// 3 last bytes take to target (FNV-1a's steps invert: multiply by the
// prime's inverse, then xor the byte). 62^6 candidates for 2^32 values:
// about 13 collisions, found in well under a second.
func collidingID(t *testing.T, prefix string, target uint32) swim.ID {
	t.Helper()
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	prime, inverse := uint32(16777619), uint32(899433627) // prime × inverse ≡ 1 mod 2^32
	require.Equal(t, uint32(1), prime*inverse)
	need := make(map[uint32][3]byte, len(alphabet)*len(alphabet)*len(alphabet))
	for _, a := range []byte(alphabet) {
		for _, b := range []byte(alphabet) {
			for _, c := range []byte(alphabet) {
				h := ((target*inverse^uint32(c))*inverse^uint32(b))*inverse ^ uint32(a)
				need[h] = [3]byte{a, b, c}
			}
		}
	}
	h0 := uint32(2166136261)
	for i := 0; i < len(prefix); i++ {
		h0 = (h0 ^ uint32(prefix[i])) * prime
	}
	for _, a := range []byte(alphabet) {
		ha := (h0 ^ uint32(a)) * prime
		for _, b := range []byte(alphabet) {
			hb := (ha ^ uint32(b)) * prime
			for _, c := range []byte(alphabet) {
				if tail, ok := need[(hb^uint32(c))*prime]; ok {
					id := swim.ID(prefix + string([]byte{a, b, c}) + string(tail[:]))
					require.Equal(t, target, swim.IDCheck(id))
					return id
				}
			}
		}
	}
	t.Fatal("no collision found")
	return ""
}

// rev30 HIGH 1: the receiver check is an unkeyed 32-bit hash, so a forger
// can pick an ID whose check is a real member's, and claim that member's
// address for it. A ping whose ack verifies its receiver there (a join
// challenge, the challenge or the probe of a member held unverified:
// swim.Ping.Verifies) must then name the receiver in full: the real
// member, taking a check for its own, would answer the challenge, and the
// seed would admit the forged ID at its address and send it views there
// (about 236 times the forged join's bytes, at a seed of 301 members).
// Here a seed's challenge of a join forged under such an ID reaches the
// member at the address, plain and sealed, and is dropped as misdirected;
// its ack would still leave out IDs (tag 7 or 8).
func TestVerifyingPingNamesItsReceiver(t *testing.T) {
	victim := swim.Node{ID: "v-7f3e2a10-5c4d-4b1e-9a8f-2d6c0e1b3a97", Addr: "127.0.0.1:4"}
	forged := swim.Node{ID: collidingID(t, "ghost-", swim.IDCheck(victim.ID)), Addr: victim.Addr}
	kr, _ := NewKeyring(key(3, 32))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	for _, sealed := range []bool{false, true} {
		seedCfg := swim.Config{Self: swim.Node{ID: "seed", Addr: "127.0.0.1:1"}}
		seed, err := swim.New(seedCfg, rand.New(rand.NewPCG(127000301, 1)))
		require.NoError(t, err)
		v, err := swim.New(swim.Config{Self: victim}, rand.New(rand.NewPCG(127000302, 1)))
		require.NoError(t, err)
		send, recv := plainCodec(t), plainCodec(t)
		if sealed {
			send, recv = boundCodec(t, kr, clk, seedCfg.Self.ID), boundCodec(t, kr, clk, victim.ID)
		}

		join := swim.Packet{Kind: swim.MsgJoin, From: forged, To: swim.Node{Addr: seedCfg.Self.Addr},
			Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: forged, From: forged.ID}}}
		require.NoError(t, seed.Step(time.Millisecond, &join))
		out := seed.Ready().Packets
		require.Len(t, out, 1, "sealed %v: the challenge", sealed)
		ch := out[0]
		require.Equal(t, swim.MsgPing, ch.Kind)
		require.True(t, ch.Ping.Verifies && ch.Ping.MatchBySeq)
		b, _, err := send.Encode(&ch)
		require.NoError(t, err)
		got, err := recv.DecodeDatagram(b, v.AckSender)
		require.NoError(t, err)
		assert.Equal(t, forged.ID, got.To.ID, "sealed %v: named in full", sealed)
		assert.Zero(t, got.ToCheck)
		assert.True(t, got.Ping.MatchBySeq, "sealed %v: it still asks for an ack without IDs", sealed)

		require.NoError(t, v.Step(2*time.Millisecond, got))
		assert.Empty(t, v.Ready().Packets, "sealed %v: the member at the address does not answer for the forged ID", sealed)
		assert.Equal(t, 1, v.Stats().Misdirected)
		assert.Equal(t, swim.State(0), seed.State(forged.ID))
	}

	// A probe ping that does not verify (of a member held verified)
	// checks a long ID; one that does names it.
	probe := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "seed", Addr: "127.0.0.1:1"}, To: victim, Ping: swim.Ping{Seq: 7, MatchBySeq: true}}
	got, err := Unmarshal(mustMarshal(t, probe), 0)
	require.NoError(t, err)
	assert.Empty(t, got.To.ID)
	probe.Ping.Verifies = true
	got, err = Unmarshal(mustMarshal(t, probe), 0)
	require.NoError(t, err)
	assert.Equal(t, victim.ID, got.To.ID)
	assert.True(t, got.Ping.MatchBySeq, "tag 7")
}

func plainCodec(t *testing.T) *Codec {
	t.Helper()
	c, err := NewCodec(CodecConfig{Security: &Security{Plain: true}})
	require.NoError(t, err)
	return c
}
