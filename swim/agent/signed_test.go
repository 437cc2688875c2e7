package agent

import (
	"context"
	"crypto/ed25519"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

func signingKey(i int) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = byte(i + 1)
	return ed25519.NewKeyFromSeed(seed)
}

// TestSignedAgentsResistForgedAliveChain: encrypted agents with signed
// self-updates converge, and a holder of the group key who sends
// Alive(victim, 2^20), Alive(victim, 2^21) and Suspect(victim, 2^21)
// (sealed, as from a member) to every other agent does not get the victim
// declared dead: the Alives are refused (Stats.BadProofs) and the victim
// stays alive at a low incarnation everywhere. Without signed
// self-updates the victim was dead for good (issue 12).
func TestSignedAgentsResistForgedAliveChain(t *testing.T) {
	const n = 4
	var as []*Agent
	var addrs []string
	for i := range n {
		p := fast()
		p.SigningKey = signingKey(i)
		a := start(t, Config{Protocol: p, Seed: uint64(i + 1)})
		if i > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			require.NoError(t, a.Join(ctx, addrs...))
			cancel()
		}
		as, addrs = append(as, a), append(addrs, a.Self().Addr)
	}
	require.Eventually(t, func() bool {
		for _, a := range as {
			if alive(a) != n {
				return false
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "full view")

	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: mustKeyring(t)}})
	require.NoError(t, err)
	u, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	defer u.Close()
	victim := as[0].Self()
	for i, a := range as[1:] {
		from := as[1+(i+1)%(n-1)].Self() // another member, as the packet's claimed sender
		pk := &swim.Packet{Kind: swim.MsgGossip, From: from, To: a.Self(), Updates: []swim.Update{
			{Kind: swim.UpdateAlive, Node: victim, Incarnation: 1 << 20, From: victim.ID},
			{Kind: swim.UpdateAlive, Node: victim, Incarnation: 1 << 21, From: victim.ID},
			{Kind: swim.UpdateSuspect, Node: victim, Incarnation: 1 << 21, From: from.ID},
		}}
		b, _, err := codec.Encode(pk)
		require.NoError(t, err)
		require.NoError(t, u.Send(netip.MustParseAddrPort(a.Self().Addr), b))
	}
	require.Eventually(t, func() bool {
		for _, a := range as[1:] {
			if a.Stats().Protocol.BadProofs == 0 {
				return false
			}
		}
		return true
	}, 3*time.Second, 10*time.Millisecond, "the forged Alives reached every agent and were refused")
	// Several suspicion timeouts of this fast configuration.
	time.Sleep(3 * time.Second)
	for _, a := range as[1:] {
		for _, m := range a.Members() {
			if m.Node.ID == victim.ID {
				assert.Contains(t, []swim.State{swim.StateAlive, swim.StateSuspect}, m.State, "in the view of %s", a.Self().ID)
				assert.Less(t, m.Incarnation, swim.Incarnation(1<<20), "in the view of %s", a.Self().ID)
			}
		}
	}
}
