package swim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// IDCheck worked by hand: FNV-1a 32 of "a" is 0xe40c292c (offset basis
// 0x811c9dc5 xor 0x61, times the prime 0x01000193, modulo 2^32).
func TestIDCheckWorked(t *testing.T) {
	assert.Equal(t, uint32(0xe40c292c), IDCheck("a"))
	assert.Equal(t, uint32(0x811c9dc5), IDCheck(""), "no byte: the offset basis")
	assert.NotEqual(t, IDCheck("m00"), IDCheck("m01"))
}

// A ping that checks its receiver instead of naming it (Packet.ToCheck)
// is answered by the member whose ID matches, and dropped and counted as
// misdirected by any other (a member restarted under another ID at the
// address), as one naming another ID is.
func TestToCheckMisdirected(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	other := Packet{Kind: MsgPing, From: node("b"), ToCheck: IDCheck("zz"), Ping: Ping{Seq: 1, MatchBySeq: true}}
	require.NoError(t, a.Step(0, &other))
	pk, _ := drain(a)
	assert.Empty(t, pk, "not for a")
	assert.Equal(t, 1, a.Stats().Misdirected)

	own := Packet{Kind: MsgPing, From: node("b"), ToCheck: IDCheck("a"), Ping: Ping{Seq: 2, MatchBySeq: true}}
	require.NoError(t, a.Step(0, &own))
	pk, _ = drain(a)
	require.Len(t, pk, 1)
	assert.Equal(t, MsgAck, pk[0].Kind)
	assert.Equal(t, uint32(2), pk[0].Ack.Seq)
	assert.True(t, pk[0].Ack.NoSenderID)
	assert.Equal(t, 1, a.Stats().Misdirected)
}

// BenchmarkIDCheck: the check of a 36-byte ID, once per probe ping
// encoded and decoded (run with -benchmem: it allocates nothing).
func BenchmarkIDCheck(b *testing.B) {
	id := ID("m00-4d6f-8a1b-2c3d4e5f6a7b8c9d0e1f2a")
	b.ReportAllocs()
	var s uint32
	for b.Loop() {
		s += IDCheck(id)
	}
	_ = s
}
