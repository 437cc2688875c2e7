package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// Over real sockets, an agent answers a ping that asks to be matched by
// its number (swim.Ping.MatchBySeq, a probe's) with an ack that leaves out
// its ID, and a ping without the flag (an earlier version's) with a named
// ack.
func TestAgentAckLeavesOutIDWhenAsked(t *testing.T) {
	a := start(t, Config{Plain: true})
	p := newPlainPeer(t)
	x := swim.Node{ID: "x", Addr: p.addr()}
	for _, flag := range []bool{true, false} {
		p.send(t, a, &swim.Packet{Kind: swim.MsgPing, From: x, To: a.Self(), Ping: swim.Ping{Seq: 77, MatchBySeq: flag}})
		deadline := time.After(5 * time.Second)
		for got := false; !got; {
			select {
			case d := <-p.conn.Packets():
				pk, err := p.codec.Decode(d.Data)
				require.NoError(t, err)
				if pk.Kind != swim.MsgAck || pk.Ack.Seq != 77 {
					continue // the agent's own probes and view requests
				}
				got = true
				if flag {
					assert.Empty(t, pk.From.ID, "an ack to a ping matched by number leaves out its sender's ID")
					assert.True(t, pk.Ack.NoSenderID)
				} else {
					assert.Equal(t, a.Self().ID, pk.From.ID, "an earlier version's ping gets a named ack")
				}
			case <-deadline:
				t.Fatalf("no ack (flag %v)", flag)
			}
		}
	}
}

// An agent's probe pings ask to be matched by number, and a peer that
// answers them with acks that leave out its ID, from its own address,
// answers the probes: it is never suspected, and no ack goes unmatched.
func TestAgentProbeAnsweredWithoutID(t *testing.T) {
	a := start(t, Config{Plain: true})
	p := newPlainPeer(t)
	p.announce(t, a)
	stop := time.After(2 * time.Second) // 20 protocol periods of fast()
	pings := 0
	for done := false; !done; {
		select {
		case d := <-p.conn.Packets():
			pk, err := p.codec.Decode(d.Data)
			require.NoError(t, err)
			if pk.Kind != swim.MsgPing {
				continue
			}
			if !pk.Ping.MatchBySeq {
				// The challenge ping that verifies x at its address
				// (swim: receipt.go), answered as before.
				p.send(t, a, &swim.Packet{Kind: swim.MsgAck, From: swim.Node{ID: "x"}, To: a.Self(), Ack: swim.Ack{Seq: pk.Ping.Seq}})
				continue
			}
			pings++
			p.send(t, a, &swim.Packet{Kind: swim.MsgAck, From: swim.Node{ID: "x"}, To: a.Self(),
				Ack: swim.Ack{Seq: pk.Ping.Seq, NoSenderID: true}})
		case <-stop:
			done = true
		}
	}
	require.GreaterOrEqual(t, pings, 5, "the agent probed x with pings matched by number")
	st := a.Stats().Protocol
	assert.Zero(t, st.AcksUnmatched)
	assert.Zero(t, st.AcksFromOtherHost)
	assert.Zero(t, st.ProbesFailed, "every probe of x was answered")
	for _, m := range a.Members() {
		if m.Node.ID == "x" {
			assert.Equal(t, swim.StateAlive, m.State)
		}
	}
}
