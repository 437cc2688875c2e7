package swim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestViewRequestBudgetAdversarial with ping-reqs: over many seeds, three
// IDs at three addresses send pings, acks and ping-reqs (for this member,
// for the members b and c, for themselves and for strangers at the same
// addresses, with and without a nack asked), 1 byte to several requests'
// size, at random gaps, one in five received from another source; b and
// c answer about half the pings they get. After every packet, the bytes
// sent to every sender (ID and address) and to every address are within
// twice the bytes received from it, where a packet received from another
// source counts for the address it claims (it pays for its own answer,
// reply.go, relay.go), and nothing goes to an address that no held member
// has and nobody claimed to send from.
func TestRelayBudgetAdversarial(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	for seed := range seeds {
		if !relayBudgetSeed(t, uint64(seed), far) {
			return
		}
	}
}

func relayBudgetSeed(t *testing.T, seed uint64, far func(*Config)) bool {
	rng := rand.New(rand.NewPCG(seed, 31))
	a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	a.Tick(0)
	drain(a)
	req := a.askViewSize(Node{ID: "j0", Addr: "v0:1"})
	sizes := []int{1, req / 3, (req + 1) / 2, req, req + req/2, 3 * req}
	gaps := []time.Duration{0, 10 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond, time.Second, 3 * time.Second, 7 * time.Second}
	// The addresses the senders claim, and one only a target names. (The
	// members the padding's updates announce are probed as any: not
	// counted.)
	victims := map[string]bool{"v0:1": true, "v1:1": true, "v2:1": true, "w:1": true}
	recv, sent := map[Node]int{}, map[Node]int{}
	recvAddr, sentAddr := map[string]int{}, map[string]int{}
	out := func(now time.Duration, pk []Packet) {
		for _, p := range pk {
			if victims[p.To.Addr] {
				sent[p.To] += p.Size()
				sentAddr[p.To.Addr] += p.Size()
				continue
			}
			if p.Kind == MsgPing && rng.IntN(2) == 0 {
				ack := Packet{Kind: MsgAck, From: p.To, To: a.Self(), Ack: Ack{Seq: p.Ping.Seq}}
				require.NoError(t, a.Step(now, &ack))
			}
		}
	}
	within := func(what string) bool {
		for n, s := range sent {
			if !assert.LessOrEqual(t, s, 2*recv[n], "seed %d, %s: to %v", seed, what, n) {
				return false
			}
		}
		for ad, s := range sentAddr {
			if !assert.LessOrEqual(t, s, 2*recvAddr[ad], "seed %d, %s: to address %s", seed, what, ad) {
				return false
			}
		}
		return true
	}
	now := time.Second
	for i := range 200 {
		now += gaps[rng.IntN(len(gaps))]
		tickUntil(a, now, func(at time.Duration, pk []Packet, _ []Event) { out(at, pk) })
		from := Node{ID: ID(fmt.Sprintf("j%d", rng.IntN(3))), Addr: fmt.Sprintf("v%d:1", rng.IntN(3))}
		p := pingOf(a, from, sizes[rng.IntN(len(sizes))])
		switch k := rng.IntN(4); {
		case k == 0:
			p.Kind, p.Ping, p.Ack = MsgAck, Ping{}, Ack{Seq: rng.Uint32()}
		case k >= 2:
			targets := []Node{a.Self(), node("b"), node("c"), from,
				{ID: "y", Addr: fmt.Sprintf("v%d:1", rng.IntN(3))}, {ID: "y", Addr: "w:1"}}
			p.Kind, p.Ping = MsgPingReq, Ping{}
			p.PingReq = PingReq{Seq: rng.Uint32(), Target: targets[rng.IntN(len(targets))], Nack: rng.IntN(2) == 0}
		}
		recv[p.From] += p.Size()
		recvAddr[p.From.Addr] += p.Size()
		if rng.IntN(5) == 0 {
			require.NoError(t, a.StepFromOtherSource(now, &p))
		} else {
			require.NoError(t, a.Step(now, &p))
		}
		pk, _ := drain(a)
		out(now, pk)
		if !within(fmt.Sprintf("packet %d (%v)", i, p.Kind)) {
			return false
		}
	}
	tickUntil(a, now+time.Minute, func(at time.Duration, pk []Packet, _ []Event) { out(at, pk) })
	assert.Zero(t, sentAddr["w:1"], "seed %d: to an address nobody claimed", seed)
	return within("after the packets")
}
