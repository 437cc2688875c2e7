package swim

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testAddr is a Config.ValidAddr for the tests' addresses (node: "id:7946"):
// a name of letters and digits, then ":7946".
func testAddr(addr string) error {
	host, ok := strings.CutSuffix(addr, ":7946")
	if !ok || host == "" || strings.ContainsFunc(host, func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	}) {
		return errors.New("not a test address")
	}
	return nil
}

// Config.ValidAddr drops every update that would bring an address it
// rejects into the view, and counts it (Stats.AddrsRefused): a new member
// there, a dead member revived there at a higher incarnation (a forged
// update moving it to "12+.0.0.1:27949"), a live member claimed there;
// an update at the address held is not asked about, and a revival at an
// accepted address applies.
func TestValidAddrRefusesUpdates(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.ValidAddr = testAddr }, "b", "c")
	a.apply(0, Update{Kind: UpdateDead, Node: node("c"), From: "b"}, true)
	require.Equal(t, StateDead, a.State("c"))
	bad := "12+.0.0.1:27949"
	for i, u := range []Update{
		{Kind: UpdateAlive, Node: Node{ID: "x", Addr: bad}, From: "x"},
		{Kind: UpdateAlive, Node: Node{ID: "c", Addr: bad}, Incarnation: 5, From: "c"},
		{Kind: UpdateAlive, Node: Node{ID: "b", Addr: bad}, Incarnation: 5, From: "b"},
		{Kind: UpdateSuspect, Node: Node{ID: "b", Addr: bad}, Incarnation: 5, From: "c"},
	} {
		require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: []Update{u}}))
		drain(a)
		assert.Equal(t, i+1, a.Stats().AddrsRefused, "%v of %s at %s", u.Kind, u.Node.ID, u.Node.Addr)
	}
	assert.Zero(t, a.State("x"))
	assert.Equal(t, StateDead, a.State("c"), "revived at a rejected address")
	assert.Equal(t, StateAlive, a.State("b"))
	assert.Zero(t, a.Stats().Conflicts, "a claim at a rejected address is no conflict")
	for _, p := range a.Members(time.Millisecond) {
		assert.NotEqual(t, bad, p.Node.Addr)
	}

	require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"),
		Updates: []Update{{Kind: UpdateSuspect, Node: node("b"), From: "c"}, {Kind: UpdateAlive, Node: node("c2"), From: "c2"}}}))
	assert.Equal(t, StateSuspect, a.State("b"), "at the address held")
	assert.Equal(t, StateAlive, a.State("c2"))
	require.NoError(t, a.Step(3*time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"),
		Updates: []Update{{Kind: UpdateAlive, Node: Node{ID: "c", Addr: "elsewhere:7946"}, Incarnation: 6, From: "c"}}}))
	assert.Equal(t, StateAlive, a.State("c"), "revived at an accepted address")
	assert.Equal(t, 4, a.Stats().AddrsRefused)
}

// New refuses a Self.Addr that Config.ValidAddr rejects, naming it.
func TestValidAddrChecksSelf(t *testing.T) {
	_, err := New(Config{Self: Node{ID: "a", Addr: "12+.0.0.1:27949"}, ValidAddr: testAddr}, rand.New(rand.NewPCG(1, 2)))
	require.ErrorIs(t, err, ErrConfig)
	assert.ErrorContains(t, err, `Self.Addr "12+.0.0.1:27949": not a test address`)
}
