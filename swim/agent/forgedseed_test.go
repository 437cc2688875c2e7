package agent

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// forgeSeedViews sends to, from a socket of its own, view transfers
// (MsgSync) that claim to come from seed, each listing 20 new forged Alive
// members, every 2 ms until stop is closed, and returns how many it sent.
func forgeSeedViews(t *testing.T, seed swim.Node, to swim.Node, stop <-chan struct{}) <-chan int {
	t.Helper()
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	forger, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	sent := make(chan int, 1)
	go func() {
		defer forger.Close()
		dst := netip.MustParseAddrPort(to.Addr)
		g := 0
		for {
			select {
			case <-stop:
				sent <- g
				return
			case <-time.After(2 * time.Millisecond):
			}
			pk := swim.Packet{Kind: swim.MsgSync, From: seed, To: to}
			for range 20 {
				n := swim.Node{ID: swim.ID(fmt.Sprintf("ghost-%d", g)), Addr: fmt.Sprintf("192.0.2.%d:%d", 1+g%250, 7946+g/250)}
				pk.Updates = append(pk.Updates, swim.Update{Kind: swim.UpdateAlive, Node: n, From: n.ID})
				g++
			}
			data, _, err := codec.Encode(&pk)
			if err == nil {
				_ = forger.Send(dst, data)
			}
		}
	}()
	return sent
}

// A view transfer that claims to come from the seed of a join but arrives
// from another address (a forger racing the seed's answer, plain mode or
// any key holder) is not the seed's view: the members it lists are held
// within the unverified quota like any gossip, not vouched for by the
// seed (swim/verify.go), so a flood sent while a member joins does not
// fill its probe order with ghosts.
func TestForgedSeedViewVouchesForNothing(t *testing.T) {
	seed := start(t, Config{Plain: true})
	joiner := start(t, Config{Plain: true})
	stop := make(chan struct{})
	sent := forgeSeedViews(t, seed.Self(), joiner.Self(), stop)
	require.Eventually(t, func() bool { return joiner.Stats().PacketsReceived >= 5 }, 10*time.Second, time.Millisecond,
		"the flood is under way when the join starts")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, joiner.Join(ctx, seed.Self().Addr))
	periodsFrom(t, joiner)(3) // three protocol periods of flood after the answer
	close(stop)
	n := <-sent
	live := aliveOrSuspect(joiner)
	t.Logf("%d forged members sent as the seed's view; %d live at the joiner", n, live)
	require.Greater(t, n, 4*ghostQuota, "the forger sent too little to tell")
	assert.LessOrEqual(t, live, 2*(2+ghostQuota), "forged members vouched for beyond the unverified quota (2 real members and 64)")
}

// A Join through an address where no member listens is not completed by
// a view that claims to come from there but arrives from elsewhere.
func TestForgedSeedViewAnswersNoJoin(t *testing.T) {
	joiner := start(t, Config{Plain: true})
	// A UDP port nothing reads (bound and never read, so no ICMP refusal
	// either), and no TCP listener at that port.
	hole, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer hole.Close()
	nobody := swim.Node{ID: "seed", Addr: hole.LocalAddr().String()}
	stop := make(chan struct{})
	sent := forgeSeedViews(t, nobody, joiner.Self(), stop)
	defer func() { close(stop); <-sent }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = joiner.Join(ctx, nobody.Addr)
	var je *JoinError
	assert.ErrorAs(t, err, &je, "a forged view answered the join")
}
