package swim

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An ack to a pinger the view did not hold, verified, at the address it
// claims (an unknown ID, a member's ID at another address, a ping that
// names itself Alive, a ping the transport received from elsewhere) is at
// most twice the ping's size, view request included: the claimed address
// may be a victim's, and a 48-byte forged ping drew acks of about 1,050
// bytes, 22 times its size, while the group broadcast. An ack to a member
// at its address carries the queue and the broadcasts as before.
func TestAckToUnvouchedSenderWithinTwiceThePing(t *testing.T) {
	const now = 10 * time.Millisecond
	// sent returns the packets a sends after it receives p, the bytes
	// sent to p's claimed address, and the ack.
	sent := func(p Packet, other bool) (int, Packet) {
		t.Helper()
		a := newTest(t, "a", ModeLifeguard, func(c *Config) {
			c.Meta = bytes.Repeat([]byte("m"), 200)
			c.AckPayload = func() []byte { return bytes.Repeat([]byte("p"), 100) }
		}, "b", "c", "d")
		a.Tick(0)
		drain(a)
		require.NoError(t, a.SetMeta([]byte("zone=a"))) // queues this member's Alive
		drain(a)                                        // its eager gossip
		require.NoError(t, a.Broadcast("k", bytes.Repeat([]byte("x"), 300)))
		p.To = a.Self()
		if other {
			require.NoError(t, a.StepFromOtherSource(now, &p))
		} else {
			require.NoError(t, a.Step(now, &p))
		}
		pk, _ := drain(a)
		total := 0
		for _, q := range pk {
			if q.To.Addr == p.From.Addr {
				total += q.Size()
			}
		}
		acks := only(t, pk, MsgAck)
		require.Len(t, acks, 1, "from %v", p.From)
		assert.Equal(t, p.From.Addr, acks[0].To.Addr)
		return total, acks[0]
	}
	ping := func(from Node) Packet { return Packet{Kind: MsgPing, From: from, Ping: Ping{Seq: 8}} } // a round's probe

	_, got := sent(ping(node("b")), false)
	assert.NotEmpty(t, got.Updates, "to a member at its address")
	assert.NotEmpty(t, got.Broadcasts, "to a member at its address")
	assert.NotEmpty(t, got.AckPayload, "to a member at its address")
	assert.Greater(t, got.Size(), 500)

	selfAlive := ping(Node{ID: "x", Addr: "victim:1"})
	selfAlive.Updates = []Update{{Kind: UpdateAlive, Node: selfAlive.From, Incarnation: 1, Meta: strings.Repeat("z", 300)}}
	for name, c := range map[string]struct {
		p       Packet
		other   bool
		accused bool
	}{
		"unknown ID":               {p: ping(Node{ID: "x", Addr: "victim:1"})},
		"member ID elsewhere":      {p: ping(Node{ID: "b", Addr: "victim:1"}), accused: true},
		"member from other source": {p: ping(node("b")), other: true},
		"naming itself Alive":      {p: selfAlive},
	} {
		total, ack := sent(c.p, c.other)
		if c.accused {
			// The gossip telling it who holds its ID (accuseBack) has
			// its own budget per period, not per packet: only the ack.
			total = ack.Size()
		}
		assert.LessOrEqual(t, total, 2*c.p.Size(), "%s: %d bytes sent for %d received", name, total, c.p.Size())
		assert.Empty(t, ack.Broadcasts, name)
	}
	// The ping naming itself Alive (about 370 bytes) pays for an ack
	// with the payload, and some of the queue.
	_, ack := sent(selfAlive, false)
	assert.NotEmpty(t, ack.AckPayload)
}

// The budgets of unvouched senders count bytes on the wire: a received
// packet at its WireLen, a sent one at its Size plus Config.WireOverhead.
// Forged pings of many lengths, 24 bytes shorter on the wire than their
// Size (a plain encoding is about 60 bytes below Size, a seal adds 37),
// answered by a member whose transport adds 37 bytes to each packet, make
// it send the claimed address at most twice their length on the wire, the
// overhead of each packet sent included; and the longer ones still draw
// the view request. Counting a ping at its Size and the answers at theirs,
// as before, drew up to 2.2 times a ping's bytes on the wire.
func TestUnvouchedBudgetInWireBytes(t *testing.T) {
	const overhead = 37
	asked := false
	for ups := range 9 {
		for pad := 0; pad <= 50; pad += 5 {
			a := newTest(t, "a", ModeLifeguard, func(c *Config) {
				c.Meta = bytes.Repeat([]byte("m"), 200)
				c.WireOverhead = overhead
			}, "b")
			a.Tick(0)
			drain(a)
			p := Packet{Kind: MsgPing, From: Node{ID: ID("x" + strings.Repeat("i", pad)), Addr: "victim:1"}, To: a.Self(), Ping: Ping{Seq: 7}}
			for range ups {
				p.Updates = append(p.Updates, Update{Kind: UpdateAlive, Node: node("b"), From: "b"})
			}
			p.WireLen = p.Size() - 24
			require.NoError(t, a.Step(500*time.Millisecond, &p))
			pk, _ := drain(a)
			total := 0
			for _, q := range pk {
				if q.To.Addr == p.From.Addr {
					total += q.Size() + overhead
					asked = asked || q.Kind == MsgJoin
				}
			}
			require.Len(t, only(t, pk, MsgAck), 1, "a ping of %d bytes", p.WireLen)
			if ack := (Packet{Kind: MsgAck, From: a.Self(), To: p.From}); 2*p.WireLen >= ack.Size()+overhead {
				// The bare ack is always sent (reply.go).
				assert.LessOrEqual(t, total, 2*p.WireLen, "a ping of %d bytes on the wire", p.WireLen)
			}
		}
	}
	assert.True(t, asked, "no ping drew a view request")
}

// Packet.WireLen is what the transport says it read: a value above the
// largest datagram counts as 65,535 bytes, so that the budgets' sums do
// not overflow (a WireLen near math.MaxInt made twice it negative, and a
// ping drew no ack budget at all), and a negative one as unknown: Size
// plus Config.WireOverhead.
func TestWireLenClamped(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	p := Packet{Kind: MsgPing, From: node("j"), To: a.Self(), Ping: Ping{Seq: 1}}
	for _, c := range []struct{ wire, want int }{
		{0, p.Size()}, {-5, p.Size()}, {100, 100}, {65535, 65535}, {65536, 65535}, {math.MaxInt, 65535},
	} {
		p.WireLen = c.wire
		assert.Equal(t, c.want, a.recvBytes(&p), "WireLen %d", c.wire)
	}
	// Without a WireLen, the transport's overhead is added to the Size.
	o := newTest(t, "a", ModeLifeguard, func(c *Config) { c.WireOverhead = 37 }, "b")
	p.WireLen = 0
	assert.Equal(t, p.Size()+37, o.recvBytes(&p))
	p.WireLen = 100
	assert.Equal(t, 100, o.recvBytes(&p), "WireLen counts as is")
	p.WireLen = math.MaxInt
	require.NoError(t, a.Step(time.Second, &p))
	pk, _ := drain(a)
	assert.Len(t, only(t, pk, MsgAck), 1)
	assert.Len(t, only(t, pk, MsgJoin), 1, "paid for by 65,535 bytes")
}
