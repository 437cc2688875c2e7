package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// Forged updates that name a member at an address the agent cannot send
// to are dropped and counted (swim.Config.ValidAddr, memberAddr): a member
// stopped and declared dead is not revived at "12+.0.0.1:27949" (not an
// IP), a multicast group or port 0, nor is a new member added there; a
// revival at an ordinary ip:port (a member restarted elsewhere) still
// applies.
func TestForgedAddressesRefused(t *testing.T) {
	as := group(t, 3, Config{Plain: true})
	forger := newPlainPeer(t)
	victim := as[2].Self()
	require.NoError(t, as[2].Shutdown())
	require.Eventually(t, func() bool { return stateOf(as[0], victim.ID) == swim.StateDead }, 10*time.Second, 20*time.Millisecond,
		"the stopped member declared dead")

	forge := func(n swim.Node, inc swim.Incarnation) {
		t.Helper()
		forger.send(t, as[0], &swim.Packet{Kind: swim.MsgGossip, From: swim.Node{ID: "forger", Addr: forger.addr()}, To: as[0].Self(),
			Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: n, Incarnation: inc, From: n.ID}}})
	}
	bad := []string{"12+.0.0.1:27949", "224.0.0.251:7946", "[ff02::1]:7946", "192.0.2.1:0", "0.0.0.0:7946", "node-b:7946"}
	for i, addr := range bad {
		forge(swim.Node{ID: victim.ID, Addr: addr}, swim.Incarnation(10+i))
		forge(swim.Node{ID: swim.ID("new-" + addr), Addr: addr}, 0)
	}
	require.Eventually(t, func() bool { return as[0].Stats().Protocol.AddrsRefused == 2*len(bad) }, 5*time.Second, 10*time.Millisecond,
		"every forged address refused")
	assert.Equal(t, swim.StateDead, stateOf(as[0], victim.ID), "revived at an unusable address")
	for _, m := range as[0].Members() {
		assert.NotContains(t, bad, m.Node.Addr, "a member at a forged address")
		assert.Contains(t, []swim.ID{as[0].Self().ID, as[1].Self().ID, victim.ID}, m.Node.ID, "a member added at a forged address")
	}

	elsewhere := swim.Node{ID: victim.ID, Addr: "192.0.2.1:7946"}
	forge(elsewhere, 100)
	require.Eventually(t, func() bool { return stateOf(as[0], victim.ID) == swim.StateAlive }, 5*time.Second, 10*time.Millisecond,
		"a revival at an ordinary ip:port")
	assert.Equal(t, 2*len(bad), as[0].Stats().Protocol.AddrsRefused)
}

// stateOf returns id's state in a's view (0: not held).
func stateOf(a *Agent, id swim.ID) swim.State {
	for _, m := range a.Members() {
		if m.Node.ID == id {
			return m.State
		}
	}
	return 0
}

// Forged updates naming an address that spells an unusable one another way
// are refused like it (memberAddr): the limited broadcast address (Go sets
// SO_BROADCAST on every IPv4 UDP socket, so a ghost there would have every
// member that probes it send its pings to the whole local network), and
// IPv4-mapped IPv6 spellings of the unspecified (which Linux delivers to
// this host), broadcast and multicast addresses.
func TestForgedBroadcastAndMappedAddressesRefused(t *testing.T) {
	as := group(t, 2, Config{Plain: true})
	forger := newPlainPeer(t)
	bad := []string{"255.255.255.255:7946", "[::ffff:255.255.255.255]:7946", "[::ffff:0.0.0.0]:7946", "[::ffff:224.0.0.251]:7946"}
	for _, addr := range bad {
		n := swim.Node{ID: swim.ID("ghost-" + addr), Addr: addr}
		forger.send(t, as[0], &swim.Packet{Kind: swim.MsgGossip, From: swim.Node{ID: "forger", Addr: forger.addr()}, To: as[0].Self(),
			Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: n, From: n.ID}}})
	}
	require.Eventually(t, func() bool { return as[0].Stats().Protocol.AddrsRefused+len(as[0].Members()) >= 2+len(bad) }, 5*time.Second, 10*time.Millisecond,
		"every forged update applied or refused")
	assert.Equal(t, len(bad), as[0].Stats().Protocol.AddrsRefused)
	for _, m := range as[0].Members() {
		assert.NotContains(t, bad, m.Node.Addr, "a member at a forged address")
	}
	for _, addr := range bad {
		assert.Error(t, memberAddr(addr), addr)
	}
	for _, addr := range []string{"127.0.0.1:7946", "[::1]:7946", "[::ffff:192.0.2.1]:7946", "192.0.2.255:7946"} {
		assert.NoError(t, memberAddr(addr), addr)
	}
}
