package swim

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// group holds members by address for exchange.
type group map[string]*Member

func groupOf(ms ...*Member) group {
	g := group{}
	for _, m := range ms {
		g[m.Self().Addr] = m
	}
	return g
}

// run delivers every packet the members produce, in order, until none is
// left, and returns them all.
func (g group) run(t *testing.T, now time.Duration) []Packet {
	t.Helper()
	var all []Packet
	var queue []Packet
	for _, m := range g {
		pk, _ := drain(m)
		queue = append(queue, pk...)
	}
	for n := 0; len(queue) > 0; n++ {
		require.Less(t, n, 1000, "the exchange does not end")
		p := queue[0]
		queue = queue[1:]
		all = append(all, p)
		to := g[p.To.Addr]
		if to == nil {
			continue
		}
		require.NoError(t, to.Step(now, &p))
		pk, _ := drain(to)
		queue = append(queue, pk...)
	}
	return all
}

func kinds(pk []Packet) []MessageKind {
	var ks []MessageKind
	for _, p := range pk {
		ks = append(ks, p.Kind)
	}
	return ks
}

// TestDigestEqualViews: two members whose views agree exchange one MsgJoin
// with the digest and nothing else: no view goes either way.
func TestDigestEqualViews(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	b := newTest(t, "b", ModeLifeguard, nil, "a")
	require.Equal(t, a.digest(), b.digest())
	a.pushPull(time.Second)
	pk := groupOf(a, b).run(t, time.Second)
	require.Equal(t, []MessageKind{MsgJoin}, kinds(pk))
	assert.Equal(t, ViewDigest{Members: 2, Hash: a.digest().Hash}, pk[0].Digest)
	assert.Equal(t, node("b"), pk[0].To)
	assert.Equal(t, 1, a.Stats().PushPulls)
	assert.Equal(t, 1, b.Stats().DigestMatches)
	assert.Zero(t, b.Stats().DigestMismatches)
}

// TestDigestRepairs: a difference in any hashed field makes the receiver
// send its view and ask for the initiator's; both end with the same view
// and the same digest, whichever side held the newer entry.
func TestDigestRepairs(t *testing.T) {
	gossip := func(t *testing.T, m *Member, us ...Update) {
		t.Helper()
		require.NoError(t, m.Step(0, &Packet{Kind: MsgGossip, From: node("z"), To: m.Self(), Updates: us}))
		drain(m)
	}
	cases := map[string]func(t *testing.T, a, b *Member){
		"incarnation, newer at the receiver": func(t *testing.T, a, b *Member) {
			gossip(t, b, Update{Kind: UpdateAlive, Node: node("c"), Incarnation: 3, From: "c"})
		},
		"incarnation, newer at the initiator": func(t *testing.T, a, b *Member) {
			gossip(t, a, Update{Kind: UpdateAlive, Node: node("c"), Incarnation: 3, From: "c"})
		},
		"state": func(t *testing.T, a, b *Member) {
			gossip(t, b, Update{Kind: UpdateSuspect, Node: node("c"), Incarnation: 0, From: "z"})
		},
		"metadata": func(t *testing.T, a, b *Member) {
			gossip(t, b, Update{Kind: UpdateAlive, Node: node("c"), Incarnation: 0, From: "c", Meta: "role=db", Versions: DefaultVersions})
		},
		"a member each side lacks": func(t *testing.T, a, b *Member) {
			gossip(t, a, Update{Kind: UpdateAlive, Node: node("e"), From: "e"})
			gossip(t, b, Update{Kind: UpdateAlive, Node: node("d"), From: "d"})
		},
	}
	for name, differ := range cases {
		t.Run(name, func(t *testing.T) {
			a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
			b := newTest(t, "b", ModeLifeguard, nil, "a", "c")
			require.Equal(t, a.digest(), b.digest())
			differ(t, a, b)
			require.NotEqual(t, a.digest(), b.digest())
			// The target is drawn from a's list: make it b.
			a.list = []*peer{a.peers["b"]}
			a.pushPull(time.Second)
			pk := groupOf(a, b).run(t, time.Second)
			joins := only(t, pk, MsgJoin)
			require.Len(t, joins, 2, "%v", kinds(pk))
			assert.False(t, joins[0].Digest.IsZero())
			assert.True(t, joins[1].Digest.IsZero(), "the repair request carries no digest")
			assert.Equal(t, node("a"), joins[1].To)
			assert.NotEmpty(t, only(t, pk, MsgSync))
			assert.Equal(t, 1, b.Stats().DigestMismatches)
			assert.Zero(t, b.Stats().DigestMatches)
			assert.Equal(t, a.digest(), b.digest(), "both hold the union")
			for _, id := range []ID{"a", "b", "c", "d", "e"} {
				assert.Equal(t, a.State(id), b.State(id), "%s", id)
				pa, _ := a.Member(id, time.Second)
				pb, _ := b.Member(id, time.Second)
				assert.Equal(t, pa.Incarnation, pb.Incarnation, "%s", id)
				assert.Equal(t, pa.Meta, pb.Meta, "%s", id)
			}
		})
	}
}

// TestDigestOrderIndependent: the digest depends on the entries, not on
// the order they were learnt in, nor on which member's own entry is which.
func TestDigestOrderIndependent(t *testing.T) {
	x := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e")
	y := newTest(t, "a", ModeLifeguard, nil, "e", "d", "c", "b")
	z := newTest(t, "c", ModeLifeguard, nil, "d", "a", "e", "b")
	assert.Equal(t, x.digest(), y.digest())
	assert.Equal(t, x.digest(), z.digest())
	assert.Equal(t, uint32(5), x.digest().Members)
	w := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	assert.NotEqual(t, x.digest(), w.digest())
}

// TestEntryHash checks the entry hash against an independent
// implementation: hash/fnv's FNV-1a over the fields with little-endian
// 2-byte lengths and the 8-byte incarnation, then MurmurHash3's fmix64;
// so the digest is the same in every process and version that follows
// the definition (ViewDigest).
func TestEntryHash(t *testing.T) {
	ref := func(n Node, inc Incarnation, st State, meta string) uint64 {
		f := fnv.New64a()
		for _, s := range []string{string(n.ID), n.Addr} {
			_, _ = f.Write(binary.LittleEndian.AppendUint16(nil, uint16(len(s))))
			_, _ = f.Write([]byte(s))
		}
		_, _ = f.Write(binary.LittleEndian.AppendUint64(nil, uint64(inc)))
		_, _ = f.Write([]byte{byte(st)})
		_, _ = f.Write(binary.LittleEndian.AppendUint16(nil, uint16(len(meta))))
		_, _ = f.Write([]byte(meta))
		h := f.Sum64()
		h ^= h >> 33
		h *= 0xff51afd7ed558ccd
		h ^= h >> 33
		h *= 0xc4ceb9fe1a85ec53
		h ^= h >> 33
		return h
	}
	long := string(make([]byte, MaxMetaLen))
	for _, c := range []struct {
		n    Node
		inc  Incarnation
		st   State
		meta string
	}{
		{Node{ID: "m00", Addr: "127.0.0.1:40123"}, 0, StateAlive, ""},
		{Node{ID: "m00", Addr: "127.0.0.1:40123"}, 1, StateAlive, ""},
		{Node{ID: "m00", Addr: "127.0.0.1:40123"}, 0, StateSuspect, ""},
		{Node{ID: "m00", Addr: "127.0.0.1:40124"}, 0, StateAlive, ""},
		{Node{ID: "m00", Addr: "127.0.0.1:40123"}, MaxIncarnation, StateLeft, long},
	} {
		assert.Equal(t, ref(c.n, c.inc, c.st, c.meta), entryHash(c.n, c.inc, c.st, c.meta), "%+v", c)
	}
	// Fields do not run into each other: ID "ab" address "c" is not ID "a"
	// address "bc".
	assert.NotEqual(t, entryHash(Node{ID: "ab", Addr: "c"}, 0, StateAlive, ""), entryHash(Node{ID: "a", Addr: "bc"}, 0, StateAlive, ""))
}

// TestDigestOlderReceiver: a receiver that predates digests (its decoder
// skips the entry) answers the MsgJoin as any pull, with its view, so the
// initiator still gets the pull half.
func TestDigestOlderReceiver(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	b := newTest(t, "b", ModeLifeguard, nil, "a", "d")
	a.pushPull(time.Second)
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	join := pk[0]
	join.Digest = ViewDigest{} // what an older decoder hands its state machine
	require.NoError(t, b.Step(time.Second, &join))
	pk, _ = drain(b)
	require.Equal(t, []MessageKind{MsgSync}, kinds(pk))
	for i := range pk {
		require.NoError(t, a.Step(time.Second, &pk[i]))
	}
	assert.Equal(t, StateAlive, a.State("d"))
	assert.Zero(t, b.Stats().DigestMatches+b.Stats().DigestMismatches)
}

// TestDigestState: the application's push-pull state goes each way once
// per exchange, whether the views agree or not.
func TestDigestState(t *testing.T) {
	for _, differ := range []bool{false, true} {
		var got []RemoteState
		withState := func(c *Config) {
			id := c.Self.ID
			c.LocalState = func(bool) []byte { return []byte("state of " + id) }
		}
		a := newTest(t, "a", ModeLifeguard, withState, "b")
		b := newTest(t, "b", ModeLifeguard, withState, "a")
		if differ {
			require.NoError(t, b.Step(0, &Packet{Kind: MsgGossip, From: node("z"), To: b.Self(),
				Updates: []Update{{Kind: UpdateAlive, Node: node("d"), From: "d"}}}))
			drain(b)
		}
		a.pushPull(time.Second)
		g := groupOf(a, b)
		var pk []Packet
		q, _ := drain(a)
		for len(q) > 0 {
			p := q[0]
			q = q[1:]
			pk = append(pk, p)
			to := g[p.To.Addr]
			require.NoError(t, to.Step(time.Second, &p))
			r := to.Ready()
			got = append(got, r.RemoteStates...)
			q = append(q, r.Packets...)
		}
		assert.ElementsMatch(t, []RemoteState{
			{From: node("a"), State: []byte("state of a")},
			{From: node("b"), State: []byte("state of b")},
		}, got, "views differ: %v; packets %v", differ, kinds(pk))
		assert.Equal(t, 1, a.Stats().StatesSent)
		assert.Equal(t, 1, b.Stats().StatesSent)
		if differ {
			assert.Equal(t, StateAlive, a.State("d"))
			assert.Equal(t, a.digest(), b.digest())
		}
	}
}

// BenchmarkDigest: the digest of a view of 1,000 members (bench-like names),
// computed once per exchange by each side.
func BenchmarkDigest(b *testing.B) {
	var peers []Node
	for i := range 999 {
		peers = append(peers, Node{ID: ID(fmt.Sprintf("m%03d", i)), Addr: fmt.Sprintf("127.0.0.1:%d", 40000+i)})
	}
	m, err := New(Config{Self: Node{ID: "a", Addr: "127.0.0.1:39999"}}, rand.New(rand.NewPCG(1, 2)))
	require.NoError(b, err)
	m.Bootstrap(peers)
	require.Equal(b, uint32(1000), m.digest().Members)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.digest()
	}
}
