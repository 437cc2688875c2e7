package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// small keeps packets within 300 bytes, so that an answer carries a few
// of fullQueue's updates.
func small(c *Config) { c.MaxPacketSize = 300 }

// fullQueue makes a, configured small, hold 40 queued updates: more than
// an answer carries, for as many transmissions as a test takes.
func fullQueue(a *Member) {
	for i := range 40 {
		a.enqueue(Update{Kind: UpdateAlive, Node: Node{ID: ID(fmt.Sprintf("q%02d", i)), Addr: fmt.Sprintf("10.0.0.%d:7946", i)}, From: "q"})
	}
}

// queuedIn reports whether p carries updates from the queue (fullQueue's).
func queuedIn(p Packet) bool {
	for _, u := range p.Updates {
		if u.From == "q" {
			return true
		}
	}
	return false
}

// Pings forged from a verified member's own address, in its name, are
// vouched for (the transport sees the address they claim), and each drew
// an ack with the whole queue to the member (issue 27, user39 F2). 16 of
// them a protocol period for 5 periods draw 7 acks that carry the queue
// (queuedAnswer, by hand: the burst of 3 at the first three pings, then
// one at the start of each later period: pings 0, 1, 2, 16, 32, 48, 64);
// the other 73 acks are bare, within twice their pings' bytes, and carry
// this member's own Alive, queued (a refutation spreads with the acks in
// ModeSWIM).
func TestForgedPingsDrawOneQueuedAckPerPeriod(t *testing.T) {
	a := newTest(t, "a", ModeSWIM, small, "b", "c", "d")
	fullQueue(a)
	a.enqueue(a.selfAlive())
	const perPeriod, periods = 16, 5
	t0 := time.Second
	step := a.cfg.ProbeInterval / perPeriod
	var queued []int
	recv, sent := 0, 0
	for i := range perPeriod * periods {
		p := Packet{Kind: MsgPing, From: node("b"), To: a.Self(), Ping: Ping{Seq: uint32(2 * (i + 1))}}
		require.NoError(t, a.Step(t0+time.Duration(i)*step, &p))
		out, _ := drain(a)
		require.Len(t, out, 1, "the ack alone goes to b")
		require.Equal(t, MsgAck, out[0].Kind)
		if queuedIn(out[0]) {
			queued = append(queued, i)
			continue
		}
		assert.True(t, hasUpdate(out[0], UpdateAlive, "a", 0), "ping %d: this member's Alive", i)
		recv += a.recvBytes(&p)
		sent += a.sentBytes(&out[0])
	}
	assert.Equal(t, []int{0, 1, 2, 16, 32, 48, 64}, queued, "the pings whose acks carried the queue")
	assert.LessOrEqual(t, sent, 2*recv, "bytes of the bare acks against their pings'")
	assert.Equal(t, perPeriod*periods-len(queued), a.Stats().AnswersUnqueued)
}

// The answers to a member's ping-reqs (the relayed ack) share the budget
// of the acks to its pings: a ping-req forged from its address, its
// target answering, drew the queue to it each time otherwise. With the
// budget spent, the relayed ack carries the notice alone (here the
// member's suspicion, which it must hear); a period later, the queue.
func TestRelayedAckSharesTheQueuedBudget(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, small, "b", "c", "d")
	a.apply(0, Update{Kind: UpdateSuspect, Node: node("b"), From: "d"}, false) // a notice for b
	drain(a)
	fullQueue(a)
	t0 := time.Second
	relay := func(at time.Duration, seq uint32) Packet {
		t.Helper()
		req := Packet{Kind: MsgPingReq, From: node("b"), To: a.Self(), PingReq: PingReq{Seq: seq, Target: node("c")}}
		require.NoError(t, a.Step(at, &req))
		out, _ := drain(a)
		pings := only(t, out, MsgPing)
		require.Len(t, pings, 1)
		ack := Packet{Kind: MsgAck, From: node("c"), To: a.Self(), Ack: Ack{Seq: pings[0].Ping.Seq}}
		require.NoError(t, a.Step(at+time.Millisecond, &ack))
		out, _ = drain(a)
		acks := only(t, out, MsgAck)
		require.Len(t, acks, 1)
		assert.Equal(t, seq, acks[0].Ack.Seq)
		return acks[0]
	}
	for i := range queuedBurst {
		p := Packet{Kind: MsgPing, From: node("b"), To: a.Self(), Ping: Ping{Seq: uint32(2 * (i + 1))}}
		require.NoError(t, a.Step(t0, &p))
		out, _ := drain(a)
		require.True(t, queuedIn(only(t, out, MsgAck)[0]), "ping %d's ack", i)
	}

	ack := relay(t0+a.cfg.ProbeInterval/4, 7)
	assert.False(t, queuedIn(ack), "relayed with the budget spent")
	assert.True(t, hasUpdate(ack, UpdateSuspect, "b", 0), "the notice still")
	assert.Equal(t, 1, a.Stats().AnswersUnqueued)

	ack = relay(t0+a.cfg.ProbeInterval, 9)
	assert.True(t, queuedIn(ack), "relayed a period later")
}

// Ping-reqs forged from a verified member's address, naming a verified
// target, each drew a relayed ping with the whole queue to the target
// (issue 27, user40 F2: 8.8-9× the forged bytes). The relayed ping and
// its relayed ack share one answer of the origin's budget
// (queuedAnswer): 16 ping-reqs a period for 5 periods, the target acking
// each ping at once, draw 7 relayed pings that carry the queue (by hand,
// as TestForgedPingsDrawOneQueuedAckPerPeriod: ping-reqs 0, 1, 2, 16,
// 32, 48, 64), and the relayed acks that go with them; the others carry
// neither.
func TestForgedPingReqsDrawOneQueuedRelayPerPeriod(t *testing.T) {
	a := newTest(t, "a", ModeSWIM, small, "b", "c", "d")
	fullQueue(a)
	const perPeriod, periods = 16, 5
	t0 := time.Second
	step := a.cfg.ProbeInterval / perPeriod
	var queuedPings, queuedAcks []int
	for i := range perPeriod * periods {
		at := t0 + time.Duration(i)*step
		req := Packet{Kind: MsgPingReq, From: node("b"), To: a.Self(), PingReq: PingReq{Seq: uint32(2 * (i + 1)), Target: node("c")}}
		require.NoError(t, a.Step(at, &req))
		out, _ := drain(a)
		pings := only(t, out, MsgPing)
		require.Len(t, pings, 1, "ping-req %d relayed", i)
		require.Equal(t, node("c"), pings[0].To)
		if queuedIn(pings[0]) {
			queuedPings = append(queuedPings, i)
		}
		require.NoError(t, a.Step(at, &Packet{Kind: MsgAck, From: node("c"), To: a.Self(), Ack: Ack{Seq: pings[0].Ping.Seq}}))
		out, _ = drain(a)
		acks := only(t, out, MsgAck)
		require.Len(t, acks, 1, "ping-req %d answered", i)
		if queuedIn(acks[0]) {
			queuedAcks = append(queuedAcks, i)
		}
	}
	want := []int{0, 1, 2, 16, 32, 48, 64}
	assert.Equal(t, want, queuedPings, "the relayed pings that carried the queue")
	assert.Equal(t, want, queuedAcks, "the relayed acks that carried it")
	assert.Zero(t, a.Stats().RelaysRefused)
}

// A message to a verified member (SendTo) carried the whole queue each
// time (user40): an application that answers each message it receives
// with SendTo sent the queue to whoever forged messages from a member's
// address, as the acks of forged pings did. The messages share the
// answers' budget (queuedAnswer): 16 messages a protocol period for 5
// periods carry the queue 7 times (by hand, as
// TestForgedPingsDrawOneQueuedAckPerPeriod: messages 0, 1, 2, 16, 32, 48,
// 64); every message goes, the others with this member's own Alive,
// queued. After three messages at one instant the ack of b's ping goes
// without the queue, and a period later with it.
func TestSendToSharesTheQueuedBudget(t *testing.T) {
	a := newTest(t, "a", ModeSWIM, small, "b", "c", "d")
	require.True(t, a.peers["b"].verified)
	fullQueue(a)
	a.enqueue(a.selfAlive())
	const perPeriod, periods = 16, 5
	t0 := time.Second
	step := a.cfg.ProbeInterval / perPeriod
	var queued []int
	for i := range perPeriod * periods {
		data := []byte(fmt.Sprintf("answer %d", i))
		require.NoError(t, a.SendTo(t0+time.Duration(i)*step, "b", data))
		out, _ := drain(a)
		require.Len(t, out, 1)
		require.Equal(t, MsgUser, out[0].Kind)
		require.Equal(t, data, out[0].User, "message %d sent", i)
		if queuedIn(out[0]) {
			queued = append(queued, i)
			continue
		}
		assert.True(t, hasUpdate(out[0], UpdateAlive, "a", 0), "message %d: this member's Alive", i)
		assert.Empty(t, out[0].Broadcasts, "message %d", i)
	}
	assert.Equal(t, []int{0, 1, 2, 16, 32, 48, 64}, queued, "the messages that carried the queue")
	assert.Equal(t, perPeriod*periods-len(queued), a.Stats().MessagesUnqueued)
	assert.Equal(t, perPeriod*periods, a.Stats().MessagesSent)

	t1 := t0 + time.Duration(periods+queuedBurst)*a.cfg.ProbeInterval
	for range queuedBurst {
		require.NoError(t, a.SendTo(t1, "b", []byte("x")))
	}
	drain(a)
	ping := func(at time.Duration, seq uint32) Packet {
		require.NoError(t, a.Step(at, &Packet{Kind: MsgPing, From: node("b"), To: a.Self(), Ping: Ping{Seq: seq}}))
		out, _ := drain(a)
		return only(t, out, MsgAck)[0]
	}
	assert.False(t, queuedIn(ping(t1, 2)), "the ack after three messages")
	assert.Equal(t, 1, a.Stats().AnswersUnqueued)
	assert.True(t, queuedIn(ping(t1+a.cfg.ProbeInterval, 4)), "the ack a period later")
}
