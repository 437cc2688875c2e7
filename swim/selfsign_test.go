package swim

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testKey is a deterministic Ed25519 key for member id.
func testKey(id string) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	copy(seed, "test key "+id)
	return ed25519.NewKeyFromSeed(seed)
}

func signedTest(t *testing.T, id string, mode Mode, peers ...string) *Member {
	t.Helper()
	m := newTest(t, id, mode, func(c *Config) { c.SigningKey = testKey(id) }, peers...)
	for _, p := range peers {
		m.Trust(ID(p), testKey(p).Public().(ed25519.PublicKey))
	}
	return m
}

// The forged-Alive chain (issue 12): Alive(a, 2^20), Alive(a, 2^21), then
// Suspect(a, 2^21). Unsigned, a third member stores a at 2^21 and accepts
// the accusation, which a (at 0) refuses as implausible: a is dead for
// good. Signed, the Alives are refused (no proof, or a proof under the
// forger's own key) and the accusation is taken at the incarnation a
// asserted, 0, which a refutes; its signed refutation is accepted.
func TestSignedSelfUpdatesCloseForgedAliveChain(t *testing.T) {
	forger := testKey("forger")
	chain := func(sign bool) []Update {
		ups := []Update{
			{Kind: UpdateAlive, Node: node("a"), Incarnation: 1 << 20, From: "a"},
			{Kind: UpdateAlive, Node: node("a"), Incarnation: 1 << 21, From: "a"},
		}
		if sign {
			for i := range ups {
				ups[i].Proof = Sign(forger, ups[i])
			}
		}
		return append(ups, Update{Kind: UpdateSuspect, Node: node("a"), Incarnation: 1 << 21, From: "b"})
	}

	// Unsigned: the gap, as it stands without SigningKey.
	c := newTest(t, "c", ModeLifeguard, nil, "a", "b")
	require.NoError(t, c.Step(time.Second, gossipFrom("b", chain(false)...)))
	st, _ := c.Member("a", time.Second)
	assert.Equal(t, Incarnation(1<<21), st.Incarnation)
	assert.Equal(t, StateSuspect, st.State)

	for _, sign := range []bool{false, true} {
		c := signedTest(t, "c", ModeLifeguard, "a", "b")
		require.NoError(t, c.Step(time.Second, gossipFrom("b", chain(sign)...)))
		st, _ := c.Member("a", time.Second)
		assert.Equal(t, Incarnation(0), st.Incarnation, "forged with a key: %v", sign)
		assert.Equal(t, StateAlive, st.State, "the rest of the chain is implausible from 0")
		assert.Equal(t, 1, c.Stats().BadProofs)
		assert.Equal(t, 2, c.Stats().Implausible)
		if sign {
			assert.Equal(t, 1, c.Stats().Conflicts, "another key for a bound ID is a conflicting claim")
		}
		// A plausible accusation above what a asserted is taken at 0.
		require.NoError(t, c.Step(time.Second, gossipFrom("b", Update{Kind: UpdateSuspect, Node: node("a"), Incarnation: 5, From: "b"})))
		st, _ = c.Member("a", time.Second)
		assert.Equal(t, Incarnation(0), st.Incarnation)
		assert.Equal(t, StateSuspect, st.State)
		assert.Equal(t, 1, c.Stats().AccusationsCapped)

		// a hears the capped accusation and refutes with a signed Alive
		// at 1.
		a := signedTest(t, "a", ModeLifeguard, "b", "c")
		sus := []Update{c.viewUpdate(c.peers["a"])}
		assert.Equal(t, Incarnation(0), sus[0].Incarnation)
		require.NoError(t, a.Step(2*time.Second, gossipFrom("c", sus[0])))
		assert.Equal(t, Incarnation(1), a.Incarnation())
		refute := a.selfAlive()
		assert.Len(t, string(refute.Proof), ProofSize)
		require.NoError(t, c.Step(2*time.Second, gossipFrom("b", refute)))
		assert.Equal(t, StateAlive, c.State("a"), "the signed refutation clears the suspicion")
	}
}

// With signed self-updates an unsigned leave, a proof for another address
// or incarnation, or an Alive naming an unknown member without a proof is
// refused; a member learnt with a proof is bound to its key at first sight.
func TestSignedSelfUpdatesRules(t *testing.T) {
	c := signedTest(t, "c", ModeLifeguard, "a", "b")
	leave := Update{Kind: UpdateDead, Node: node("a"), Incarnation: 0, From: "a"}
	require.NoError(t, c.Step(time.Second, gossipFrom("b", leave)))
	assert.Equal(t, StateAlive, c.State("a"), "unsigned leave")

	alive := Update{Kind: UpdateAlive, Node: node("a"), Incarnation: 3, From: "a"}
	moved := alive
	moved.Incarnation = 4
	moved.Proof = Sign(testKey("a"), alive) // signed for 3, claimed at 4
	require.NoError(t, c.Step(time.Second, gossipFrom("b", moved)))
	st, _ := c.Member("a", time.Second)
	assert.Equal(t, Incarnation(0), st.Incarnation, "a proof of another incarnation")

	alive.Proof = Sign(testKey("a"), alive)
	require.NoError(t, c.Step(time.Second, gossipFrom("b", alive)))
	st, _ = c.Member("a", time.Second)
	assert.Equal(t, Incarnation(3), st.Incarnation, "a's own signed Alive")

	leave.Incarnation = 3
	leave.Proof = Sign(testKey("a"), leave)
	require.NoError(t, c.Step(time.Second, gossipFrom("b", leave)))
	assert.Equal(t, StateLeft, c.State("a"), "a's own signed leave")

	// A new member: refused without a proof, bound to its key with one.
	n := Update{Kind: UpdateAlive, Node: node("n"), From: "n"}
	require.NoError(t, c.Step(time.Second, gossipFrom("b", n)))
	assert.Equal(t, State(0), c.State("n"))
	n.Proof = Sign(testKey("n"), n)
	require.NoError(t, c.Step(time.Second, gossipFrom("b", n)))
	assert.Equal(t, StateAlive, c.State("n"))
	n.Incarnation = 1
	n.Proof = Sign(testKey("forger"), n)
	require.NoError(t, c.Step(time.Second, gossipFrom("b", n)))
	st, _ = c.Member("n", time.Second)
	assert.Equal(t, Incarnation(0), st.Incarnation, "n is bound to its first key")
	assert.Equal(t, 4, c.Stats().BadProofs)

	// The view passes the proofs on: a member learning from c's view
	// accepts a's leave and n's Alive.
	d := signedTest(t, "d", ModeLifeguard, "c")
	c.sendSync(node("d"), 0)
	for _, pk := range c.Ready().Packets {
		require.NoError(t, d.Step(2*time.Second, &pk))
	}
	assert.Equal(t, StateAlive, d.State("n"))
	// b came to c from Bootstrap and has sent c no proof yet: d cannot
	// take it from c's view, and learns it from b's own Alive.
	assert.Equal(t, State(0), d.State("b"))
	assert.Equal(t, 1, d.Stats().BadProofs)
}
