package swim

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type pingDone struct {
	target  ID
	rtt     time.Duration
	payload string
}

// PingComplete gets the direct probe's target, the time from its ping to
// its ack (7 ms here, exactly) and the ack's payload; a relayed ack of a
// later probe, which measures the path through an intermediate, is not
// reported (as in memberlist).
func TestPingCompleteExactRTT(t *testing.T) {
	var got []pingDone
	a := newTest(t, "a", ModeLifeguard, func(c *Config) {
		c.PingComplete = func(n Node, rtt time.Duration, payload []byte) {
			got = append(got, pingDone{n.ID, rtt, string(payload)})
		}
	}, "b", "c")
	a.Tick(0)
	pk, _ := drain(a)
	ping := only(t, pk, MsgPing)
	require.Len(t, ping, 1)
	target := ping[0].To
	ack := Packet{Kind: MsgAck, From: target, To: node("a"), Ack: Ack{Seq: ping[0].Ping.Seq}, AckPayload: []byte("coord")}
	require.NoError(t, a.Step(7*time.Millisecond, &ack))
	assert.Equal(t, []pingDone{{target.ID, 7 * time.Millisecond, "coord"}}, got)

	// The next probe: no direct ack; the ack relayed by the intermediate
	// (From is the intermediate) ends the probe without a report.
	a.Tick(time.Second)
	pk, _ = drain(a)
	ping = only(t, pk, MsgPing)
	require.Len(t, ping, 1)
	a.Tick(time.Second + 600*time.Millisecond) // past the probe timeout: ping-reqs
	pk, _ = drain(a)
	reqs := only(t, pk, MsgPingReq)
	require.NotEmpty(t, reqs)
	relayed := Packet{Kind: MsgAck, From: reqs[0].To, To: node("a"), Ack: Ack{Seq: reqs[0].PingReq.Seq}, AckPayload: []byte("x")}
	require.NoError(t, a.Step(time.Second+700*time.Millisecond, &relayed))
	assert.Len(t, got, 1, "a relayed ack was reported")
}

// AckPayload rides on every ack this member sends in answer to a ping, a
// datagram or a stream ping; one over MaxAckPayloadLen is left out and
// counted.
func TestAckPayloadOnAcks(t *testing.T) {
	payload := []byte("coord of b")
	b := newTest(t, "b", ModeLifeguard, func(c *Config) { c.AckPayload = func() []byte { return payload } }, "a")
	ping := Packet{Kind: MsgPing, From: node("a"), To: node("b"), Ping: Ping{Seq: 3}}
	require.NoError(t, b.Step(0, &ping))
	pk, _ := drain(b)
	acks := only(t, pk, MsgAck)
	require.Len(t, acks, 1)
	assert.Equal(t, payload, acks[0].AckPayload)
	ack, err := b.AnswerStreamPing(0, &ping)
	require.NoError(t, err)
	assert.Equal(t, payload, ack.AckPayload)

	payload = make([]byte, MaxAckPayloadLen+1)
	require.NoError(t, b.Step(time.Millisecond, &ping))
	pk, _ = drain(b)
	acks = only(t, pk, MsgAck)
	require.Len(t, acks, 1)
	assert.Nil(t, acks[0].AckPayload)
	assert.Equal(t, 1, b.Stats().AckPayloadsTooLarge)
}

// MergeFilter refuses a view packet or a join whole: nothing applied,
// nothing answered, counted; a packet it accepts is merged.
func TestMergeFilterRefusesWhole(t *testing.T) {
	var asked [][]Update
	a := newTest(t, "a", ModeLifeguard, func(c *Config) {
		c.MergeFilter = func(from Node, ups []Update) error {
			asked = append(asked, ups)
			for _, u := range ups {
				if u.Meta == "dc=2" {
					return errors.New("other datacenter")
				}
			}
			return nil
		}
	}, "b")
	sync := Packet{Kind: MsgSync, From: node("b"), To: node("a"), Updates: []Update{
		{Kind: UpdateAlive, Node: node("x"), From: "x", Meta: "dc=1", Versions: VersionRange{Min: 1, Max: 2}},
		{Kind: UpdateAlive, Node: node("y"), From: "y", Meta: "dc=2", Versions: VersionRange{Min: 1, Max: 2}},
	}}
	require.NoError(t, a.Step(0, &sync))
	assert.Equal(t, State(0), a.State("x"), "an entry of a refused view was applied")
	assert.Equal(t, 1, a.Stats().MergesRefused)
	join := Packet{Kind: MsgJoin, From: node("y"), To: node("a"), Updates: []Update{
		{Kind: UpdateAlive, Node: node("y"), From: "y", Meta: "dc=2", Versions: VersionRange{Min: 1, Max: 2}}}}
	require.NoError(t, a.Step(0, &join))
	pk, _ := drain(a)
	assert.Empty(t, pk, "a refused join was answered")
	assert.Equal(t, 2, a.Stats().MergesRefused)
	sync.Updates = sync.Updates[:1]
	require.NoError(t, a.Step(0, &sync))
	assert.Equal(t, StateAlive, a.State("x"))
	assert.Len(t, asked, 3)
}

// AliveFilter is asked only about Alives that would change the view, and
// a refusal keeps the member out (or at its old incarnation).
func TestAliveFilter(t *testing.T) {
	var asked []Incarnation
	a := newTest(t, "a", ModeLifeguard, func(c *Config) {
		c.AliveFilter = func(u Update) error {
			asked = append(asked, u.Incarnation)
			if u.Meta == "role=intruder" {
				return errors.New("intruder")
			}
			return nil
		}
	}, "b")
	gossip := func(u Update) {
		t.Helper()
		p := Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: []Update{u}}
		require.NoError(t, a.Step(0, &p))
	}
	v := VersionRange{Min: 1, Max: 2}
	gossip(Update{Kind: UpdateAlive, Node: node("z"), From: "z", Meta: "role=intruder", Versions: v})
	assert.Equal(t, State(0), a.State("z"))
	gossip(Update{Kind: UpdateAlive, Node: node("x"), Incarnation: 1, From: "x", Meta: "role=web", Versions: v})
	assert.Equal(t, StateAlive, a.State("x"))
	gossip(Update{Kind: UpdateAlive, Node: node("x"), Incarnation: 1, From: "x", Meta: "role=web", Versions: v}) // stale: not asked
	gossip(Update{Kind: UpdateAlive, Node: node("x"), Incarnation: 2, From: "x", Meta: "role=intruder", Versions: v})
	p, ok := a.Member("x", 0)
	require.True(t, ok)
	assert.Equal(t, Incarnation(1), p.Incarnation, "a refused Alive raised the incarnation")
	assert.Equal(t, "role=web", p.Meta)
	assert.Equal(t, []Incarnation{0, 1, 2}, asked)
	assert.Equal(t, 2, a.Stats().AlivesRefused)
}
