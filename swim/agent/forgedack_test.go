package agent

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
)

// Acks forged from another host do not verify the members they answer for
// (swim.Member.StepFromOtherSource): a forger announces ghosts at a third
// host's address (127.0.0.2 here) and answers each ping sent there from
// its own (127.0.0.1), as one that predicts the probe numbers would. Those
// acks answer no probe (swim: onAck) and verify no member: the view holds
// at most the unverified quota (64) of the ghosts however many the forger
// announces. Verified by those acks, each would raise the quota,
// and the victim would ping the third host in every round.
func TestForgedAcksFromAnotherHostDoNotVerify(t *testing.T) {
	a := start(t, Config{Plain: true})
	forger := newPlainPeer(t)
	third, err := listenUDP(transport.Config{Bind: "127.0.0.2:0"})
	require.NoError(t, err)
	defer third.Close()
	const ghosts = 100
	var nodes []swim.Node
	for i := range ghosts {
		nodes = append(nodes, swim.Node{ID: swim.ID(fmt.Sprintf("ghost-%03d", i)), Addr: third.LocalAddr().String()})
	}
	live := haunt(t, a, forger, nodes, third.Packets(), func(_ netip.AddrPort, b []byte) error {
		return forger.conn.Send(netip.MustParseAddrPort(a.Self().Addr), b)
	})
	assert.LessOrEqual(t, live-1, 64, "ghosts live beyond the unverified quota")
	assert.Greater(t, live-1, 32, "the forger's ghosts are held within the quota")
}

// A host answering at one address for many member IDs it announced gets
// one of them verified (swim: verify): the others answer, so they stay
// live, but only within the unverified quota (64). Verified one per
// protocol period (an answered probe refunds its budget), they would fill
// the view beyond the quota and take probe turns from the known members.
func TestGhostsAtOneAddressVerifyOnce(t *testing.T) {
	a := start(t, Config{Plain: true, DisableStream: true})
	forger := newPlainPeer(t)
	host := newPlainPeer(t) // answers for every ghost, at the ghosts' address
	const ghosts = 120
	var nodes []swim.Node
	for i := range ghosts {
		nodes = append(nodes, swim.Node{ID: swim.ID(fmt.Sprintf("ghost-%03d", i)), Addr: host.addr()})
	}
	live := haunt(t, a, forger, nodes, host.conn.Packets(), host.conn.Send)
	assert.LessOrEqual(t, live-1, 64+1, "ghosts live beyond the unverified quota and one verified")
	assert.Greater(t, live-1, 32, "the ghosts are held within the quota")
}

// haunt announces nodes to a from forger every 50 ms for 4 s (about 40
// protocol periods), answers each ping that arrives on pings with an ack
// from the member pinged, sent with reply (to the ping's source), and
// returns the live members of a's view, itself included.
func haunt(t *testing.T, a *Agent, forger *plainPeer, nodes []swim.Node, pings <-chan transport.Packet, reply func(to netip.AddrPort, b []byte) error) int {
	t.Helper()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case p := <-pings:
				pk, err := forger.codec.Decode(p.Data)
				if err != nil || pk.Kind != swim.MsgPing {
					continue
				}
				b, _, err := forger.codec.Encode(&swim.Packet{Kind: swim.MsgAck, From: swim.Node{ID: pk.To.ID}, To: a.Self(), Ack: swim.Ack{Seq: pk.Ping.Seq}})
				if err == nil {
					_ = reply(p.From, b)
				}
			case <-tick.C:
				for i := 0; i < len(nodes); i += 10 {
					var ups []swim.Update
					for _, n := range nodes[i:min(i+10, len(nodes))] {
						ups = append(ups, swim.Update{Kind: swim.UpdateAlive, Node: n, From: n.ID})
					}
					b, _, err := forger.codec.Encode(&swim.Packet{Kind: swim.MsgGossip, From: swim.Node{ID: "forger", Addr: forger.addr()}, To: a.Self(), Updates: ups})
					if err == nil {
						_ = forger.conn.Send(netip.MustParseAddrPort(a.Self().Addr), b)
					}
				}
			}
		}
	}()
	time.Sleep(4 * time.Second)
	close(stop)
	<-done
	live := 0
	for _, m := range a.Members() {
		if m.State == swim.StateAlive || m.State == swim.StateSuspect {
			live++
		}
	}
	return live
}
