package agent

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// TestChallengeFloodFromOnePrefixSparesJoiner (user39 F6, from its
// repro): 150 ghosts spoofed at closed ports of one address announce
// themselves to member M every 50 ms, the challenge's lifetime, so that
// their challenges would take all of M's (PullsPerPeriod per
// ProbeInterval); after 2 s of it a real joiner J at 127.0.0.1, a
// scripted socket that announces itself, pings M every 100 ms and acks
// every ping it gets, is verified at M within 2 s: M pings it with a
// round's number (even). Ghosts at 127.0.9.3, in another /24 than J,
// draw at most three quarters of M's challenges with their gossip
// (swim/receipt.go, prefixChallenges), and J draws one of the rest; at
// 127.0.0.3, in J's /24, an eighth more is left to pings, and J pings. With one
// budget for all, J was not verified within 30 s (user39's repro), and
// here within 2 s in some runs only (docs/experiments.md, “SWIM: real
// joiners under loss and the challenge ledger”). Needs root for the raw
// socket; skipped otherwise.
func TestChallengeFloodFromOnePrefixSparesJoiner(t *testing.T) {
	for _, ip := range []string{"127.0.9.3", "127.0.0.3"} {
		t.Run(ip, func(t *testing.T) { challengeFlood(t, ip) })
	}
}

// challengeFlood runs TestChallengeFloodFromOnePrefixSparesJoiner with
// the ghosts at ghostIP.
func challengeFlood(t *testing.T, ghostIP string) {
	const k, every = 150, 50 * time.Millisecond
	as := group(t, 8, Config{Plain: true, Protocol: fast()})
	m := as[0]
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	sp := newSpoofer(t, codec)
	var gs []swim.Node
	for i := range k {
		gs = append(gs, spoofedGhost(i, netip.AddrPortFrom(netip.MustParseAddr(ghostIP), uint16(20000+i))))
	}
	periodsFrom(t, as...)(3)
	inc := swim.Incarnation(1)
	flood := func() {
		for _, g := range gs {
			sp.send(t, netip.MustParseAddrPort(g.Addr), m.Self(), swim.Packet{Kind: swim.MsgGossip, From: g,
				Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: g, From: g.ID, Incarnation: inc}}})
		}
		inc++
	}
	refusedBefore := m.Stats().Protocol.VerifyChallengesRefused
	for start := time.Now(); time.Since(start) < 2*time.Second; time.Sleep(every) {
		flood()
	}
	js := newVictim(t, codec)
	jaddr := netip.MustParseAddrPort(js.LocalAddr().String())
	j := swim.Node{ID: "joiner", Addr: jaddr.String()}
	began := time.Now()
	sp.send(t, jaddr, m.Self(), swim.Packet{Kind: swim.MsgGossip, From: j, Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: j, From: j.ID, Incarnation: 1}}})
	lastFlood, lastPing := time.Now(), time.Now()
	seq := uint32(0)
	var verifiedAfter time.Duration
	for time.Since(began) < 2*time.Second && verifiedAfter == 0 {
		if time.Since(lastFlood) >= every {
			flood()
			lastFlood = time.Now()
		}
		if time.Since(lastPing) >= 100*time.Millisecond {
			seq += 4
			sp.send(t, jaddr, m.Self(), swim.Packet{Kind: swim.MsgPing, From: j, Ping: swim.Ping{Seq: seq}})
			lastPing = time.Now()
		}
		for len(js.Packets()) > 0 {
			p := <-js.Packets()
			pk, err := codec.Decode(p.Data)
			if err != nil || pk.Kind != swim.MsgPing || pk.From.ID != m.Self().ID {
				continue
			}
			if pk.Ping.Seq&3 != 3 {
				verifiedAfter = time.Since(began)
				break
			}
			sp.send(t, jaddr, m.Self(), swim.Packet{Kind: swim.MsgAck, From: j, Ack: swim.Ack{Seq: pk.Ping.Seq}})
		}
		time.Sleep(2 * time.Millisecond)
	}
	refused := m.Stats().Protocol.VerifyChallengesRefused - refusedBefore
	msg := fmt.Sprintf("ghosts at %s: J pinged with a round's number after %v (0: not within 2 s); challenges refused since the flood began %d", ghostIP, verifiedAfter.Round(time.Millisecond), refused)
	t.Log(msg)
	assert.Positive(t, refused, "the flood spent the ghosts' share: %s", msg)
	assert.Positive(t, verifiedAfter, msg)
}
