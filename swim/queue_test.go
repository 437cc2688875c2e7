package swim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigPacket returns a ping carrying n updates of kind k about members
// "p0"…: Alive about unknown members, or Suspect (from "x") about members
// the receiver knows.
func bigPacket(n int, k UpdateKind) Packet {
	p := Packet{Kind: MsgPing, From: node("x"), To: node("a"), Ping: Ping{Seq: 1}}
	for i := 0; i < n; i++ {
		p.Updates = append(p.Updates, Update{Kind: k, Node: node(fmt.Sprintf("p%d", i)), From: "x"})
	}
	return p
}

// The dissemination queue keeps one update per member, the newest, and
// a superseded update starts its transmissions from zero.
func TestQueueOneUpdatePerMember(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
	a.enqueue(Update{Kind: UpdateSuspect, Node: node("b"), Incarnation: 0, From: "c"})
	a.enqueue(Update{Kind: UpdateAlive, Node: node("c"), Incarnation: 2, From: "c"})
	a.send(Packet{Kind: MsgPing, To: node("c")})
	a.enqueue(Update{Kind: UpdateAlive, Node: node("b"), Incarnation: 1, From: "b"})
	require.Len(t, a.queue.items, 2)
	kind, tx := map[ID]UpdateKind{}, map[ID]int{}
	for i := range a.queue.items {
		kind[a.queue.items[i].u.Node.ID], tx[a.queue.items[i].u.Node.ID] = a.queue.items[i].u.Kind, a.queue.items[i].tx
	}
	assert.Equal(t, UpdateAlive, kind["b"])
	assert.Equal(t, 0, tx["b"], "superseded: transmissions restart")
	assert.Equal(t, 1, tx["c"])
	assert.True(t, a.selfQueued() == false)
	limit := retransmitLimit(a.cfg.RetransmitMult, a.NumAlive())
	for i := 0; i < limit; i++ {
		a.send(Packet{Kind: MsgPing, To: node("c")})
	}
	assert.Empty(t, a.queue.items, "every update sent its limit and dropped")
	a.enqueue(Update{Kind: UpdateAlive, Node: node("c"), Incarnation: 3, From: "c"})
	assert.Len(t, a.queue.items, 1, "a dropped update's member can be queued again")
}

// BenchmarkStepLargePacket: Step of one packet with 20,000 updates. Queueing
// each applied update cost O(queue length) (a scan for an older update about
// the same member): quadratic in the packet.
func BenchmarkStepLargePacket(b *testing.B) {
	const n = 20000
	for _, k := range []UpdateKind{UpdateAlive, UpdateSuspect} {
		b.Run(k.String(), func(b *testing.B) {
			pkt := bigPacket(n, k)
			var known []Node
			for i := 0; i < n; i++ {
				known = append(known, node(fmt.Sprintf("p%d", i)))
			}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				m, err := New(Config{Self: node("a"), Mode: ModeLifeguard}, rand.New(rand.NewPCG(1, 2)))
				require.NoError(b, err)
				if k == UpdateSuspect {
					m.Bootstrap(known)
				}
				p := pkt
				p.Updates = append([]Update(nil), pkt.Updates...)
				b.StartTimer()
				require.NoError(b, m.Step(time.Second, &p))
			}
		})
	}
}
