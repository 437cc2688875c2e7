package swim

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetMeta: a metadata change raises the incarnation by one and queues
// the new Alive with the metadata and the version range; the receiver
// stores it and reports EventUpdate, once.
func TestSetMeta(t *testing.T) {
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.Meta = []byte("v1") }, "b")
	b := newTest(t, "b", ModeDetector, nil, "a")
	assert.Equal(t, "v1", a.Meta())
	assert.Equal(t, "v1", a.Members(0)[0].Meta)
	assert.Equal(t, DefaultVersions, a.Members(0)[0].Versions)

	require.NoError(t, a.SetMeta([]byte("role=db")))
	assert.Equal(t, Incarnation(1), a.Incarnation())
	require.NoError(t, a.SetMeta([]byte("role=db")), "the same metadata again")
	assert.Equal(t, Incarnation(1), a.Incarnation(), "nothing to disseminate")

	pk, _ := advance(a, 0)
	var got []Event
	for i := range pk {
		if pk[i].To.ID != "b" {
			continue
		}
		require.Contains(t, pk[i].Updates, Update{Kind: UpdateAlive, Node: node("a"), Incarnation: 1, From: "a",
			Meta: "role=db", Versions: DefaultVersions})
		require.NoError(t, b.Step(0, &pk[i]))
		_, ev := drain(b)
		got = append(got, ev...)
	}
	require.Len(t, got, 1)
	assert.Equal(t, EventUpdate, got[0].Kind)
	assert.Equal(t, "role=db", got[0].Meta)
	assert.Equal(t, Incarnation(1), got[0].Incarnation)
	st, ok := b.Member("a", 0)
	require.True(t, ok)
	assert.Equal(t, "role=db", st.Meta)
	assert.Equal(t, DefaultVersions, st.Versions)

	// A sync carries it to a member that never heard it.
	c := newTest(t, "c", ModeDetector, nil)
	b.sendSync(node("c"), 0)
	pk, _ = drain(b)
	for i := range pk {
		require.NoError(t, c.Step(0, &pk[i]))
	}
	st, ok = c.Member("a", 0)
	require.True(t, ok)
	assert.Equal(t, "role=db", st.Meta)
}

// TestMetaRelayedThroughFormat1: an Alive without a version range (relayed
// by a member writing wire format 1, which drops both fields) moves the
// incarnation but neither clears the metadata nor reports a change.
func TestMetaRelayedThroughFormat1(t *testing.T) {
	b := newTest(t, "b", ModeDetector, nil, "x")
	alive := Packet{Kind: MsgGossip, From: node("x"), To: node("b"), Updates: []Update{
		{Kind: UpdateAlive, Node: node("a"), Incarnation: 3, From: "a", Meta: "m", Versions: VersionRange{1, 2}}}}
	require.NoError(t, b.Step(0, &alive))
	alive.Updates[0] = Update{Kind: UpdateAlive, Node: node("a"), Incarnation: 4, From: "a"}
	require.NoError(t, b.Step(0, &alive))
	_, ev := drain(b)
	require.Len(t, ev, 1)
	assert.Equal(t, EventJoin, ev[0].Kind)
	assert.Equal(t, "m", ev[0].Meta)
	st, _ := b.Member("a", 0)
	assert.Equal(t, Incarnation(4), st.Incarnation)
	assert.Equal(t, "m", st.Meta)
	assert.Equal(t, VersionRange{1, 2}, st.Versions)
}

// TestMetaHostile: oversize metadata is refused by the API, the config and
// Step, with ErrMetaTooLarge or ErrPacket, and changes nothing.
func TestMetaHostile(t *testing.T) {
	a := newTest(t, "a", ModeDetector, nil, "b")
	err := a.SetMeta(make([]byte, MaxMetaLen+1))
	assert.ErrorIs(t, err, ErrMetaTooLarge)
	assert.ErrorContains(t, err, "513 bytes")
	assert.Equal(t, Incarnation(0), a.Incarnation())
	require.NoError(t, a.SetMeta(make([]byte, MaxMetaLen)), "512 bytes is the limit")

	_, err = New(Config{Self: node("z"), Meta: make([]byte, 600)}, nil)
	assert.Error(t, err)
	_, err = New(Config{Self: node("z"), Meta: make([]byte, 600)}, newTest(t, "q", ModeSWIM, nil).rng)
	assert.ErrorIs(t, err, ErrMetaTooLarge)
	_, err = New(Config{Self: node("z"), Versions: VersionRange{Min: 3, Max: 2}}, newTest(t, "q", ModeSWIM, nil).rng)
	assert.ErrorIs(t, err, ErrConfig)

	pk := Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: []Update{
		{Kind: UpdateAlive, Node: node("c"), From: "c", Meta: strings.Repeat("x", MaxMetaLen+1), Versions: DefaultVersions}}}
	assert.ErrorIs(t, a.Step(0, &pk), ErrPacket)
	_, ok := a.Member("c", 0)
	assert.False(t, ok)

	a.inc = MaxIncarnation
	assert.ErrorIs(t, a.SetMeta([]byte("x")), ErrIncarnationExhausted)
	require.NoError(t, a.Leave(time.Second))
	assert.ErrorIs(t, a.SetMeta([]byte("y")), ErrLeft)
}

// TestSignedMeta: with signed self-updates the proof covers the metadata,
// so an Alive whose metadata was changed in flight is refused.
func TestSignedMeta(t *testing.T) {
	keyA := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	keyB := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize))
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.SigningKey = keyA }, "b")
	b := newTest(t, "b", ModeDetector, func(c *Config) { c.SigningKey = keyB }, "a")
	b.Trust("a", keyA.Public().(ed25519.PublicKey))
	require.NoError(t, a.SetMeta([]byte("role=db")))
	u := a.selfAlive()
	require.NotEmpty(t, u.Proof)

	forged := u
	forged.Meta = "role=evil"
	pk := Packet{Kind: MsgGossip, From: node("a"), To: node("b"), Updates: []Update{forged}}
	require.NoError(t, b.Step(0, &pk))
	st, _ := b.Member("a", 0)
	assert.Equal(t, Incarnation(0), st.Incarnation, "refused")
	assert.Equal(t, 1, b.Stats().BadProofs)

	pk.Updates[0] = u
	require.NoError(t, b.Step(0, &pk))
	st, _ = b.Member("a", 0)
	assert.Equal(t, Incarnation(1), st.Incarnation)
	assert.Equal(t, "role=db", st.Meta)
}

// TestMetaLearntAtSameIncarnation: a member first heard through a format-1
// relay (no range, no metadata) gets both from the next Alive of the same
// incarnation that carries them, with EventUpdate; later ones change
// nothing.
func TestMetaLearntAtSameIncarnation(t *testing.T) {
	b := newTest(t, "b", ModeDetector, nil, "x")
	relayed := Packet{Kind: MsgGossip, From: node("x"), To: node("b"), Updates: []Update{
		{Kind: UpdateAlive, Node: node("a"), Incarnation: 2, From: "a"}}}
	require.NoError(t, b.Step(0, &relayed))
	st, _ := b.Member("a", 0)
	assert.True(t, st.Versions.IsZero())
	direct := Packet{Kind: MsgGossip, From: node("a"), To: node("b"), Updates: []Update{
		{Kind: UpdateAlive, Node: node("a"), Incarnation: 2, From: "a", Meta: "m", Versions: VersionRange{1, 2}}}}
	_, _ = drain(b)
	require.NoError(t, b.Step(0, &direct))
	_, ev := drain(b)
	require.Len(t, ev, 1)
	assert.Equal(t, EventUpdate, ev[0].Kind)
	st, _ = b.Member("a", 0)
	assert.Equal(t, "m", st.Meta)
	assert.Equal(t, VersionRange{1, 2}, st.Versions)
	assert.Equal(t, Incarnation(2), st.Incarnation)

	// Once known, an Alive of the same incarnation changes nothing.
	direct.Updates[0].Meta = "other"
	require.NoError(t, b.Step(0, &direct))
	_, ev = drain(b)
	assert.Empty(t, ev)
	st, _ = b.Member("a", 0)
	assert.Equal(t, "m", st.Meta)
}

// TestRestartedWithNewMeta: a member restarted at the same incarnation
// with new metadata hears its previous life's Alive (old metadata) in a
// sync and raises its incarnation, so the group takes the new metadata.
func TestRestartedWithNewMeta(t *testing.T) {
	b := newTest(t, "b", ModeDetector, nil, "x")
	old := Packet{Kind: MsgGossip, From: node("x"), To: node("b"), Updates: []Update{
		{Kind: UpdateAlive, Node: node("a"), From: "a", Meta: "v=old", Versions: DefaultVersions}}}
	require.NoError(t, b.Step(0, &old))
	_, _ = drain(b)

	a := newTest(t, "a", ModeDetector, func(c *Config) { c.Meta = []byte("v=new") })
	b.sendSync(node("a"), 0)
	pk, _ := drain(b)
	for i := range pk {
		require.NoError(t, a.Step(0, &pk[i]))
	}
	assert.Equal(t, Incarnation(1), a.Incarnation())
	assert.Equal(t, 1, a.Stats().MetaRestated)
	assert.Zero(t, a.Stats().Refutations, "no health penalty")
	out, _ := drain(a)
	var ev []Event
	for i := range out {
		if out[i].To.ID == "b" {
			require.NoError(t, b.Step(0, &out[i]))
			_, e := drain(b)
			ev = append(ev, e...)
		}
	}
	st, _ := b.Member("a", 0)
	assert.Equal(t, "v=new", st.Meta)
	assert.Equal(t, Incarnation(1), st.Incarnation)
	require.NotEmpty(t, ev)
	assert.Equal(t, EventUpdate, ev[0].Kind)

	// The same Alive relayed in wire format 1 (no range) changes nothing.
	a2 := newTest(t, "a", ModeDetector, func(c *Config) { c.Meta = []byte("v=new") })
	v1 := Packet{Kind: MsgGossip, From: node("x"), To: node("a"), Updates: []Update{
		{Kind: UpdateAlive, Node: node("a"), From: "a"}}}
	require.NoError(t, a2.Step(0, &v1))
	assert.Equal(t, Incarnation(0), a2.Incarnation())
}
