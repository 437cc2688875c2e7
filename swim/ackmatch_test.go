package swim

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A probe's ping asks for an ack by sequence number (Ping.MatchBySeq), and
// the answer to such a ping is built with Ack.NoSenderID: an encoding may
// leave its sender's ID out. An ack without the ID that the prober gets
// back is its target's: it answers the probe as the named ack does.
func TestAckWithoutSenderIDAnswersProbe(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	pk, _ := drain(a)
	ping := only(t, pk, MsgPing)
	require.Len(t, ping, 1)
	assert.True(t, ping[0].Ping.MatchBySeq, "a probe's ping is matched by its number")
	target := a.pr.target.node

	// The target answers with NoSenderID set.
	b := newTest(t, string(target.ID), ModeLifeguard, nil, "a")
	require.NoError(t, b.Step(0, &ping[0]))
	out, _ := drain(b)
	acks := only(t, out, MsgAck)
	require.Len(t, acks, 1)
	assert.True(t, acks[0].Ack.NoSenderID)
	assert.Equal(t, target.ID, acks[0].From.ID, "the Packet a Member builds names its sender")

	id, ok := a.AckSender(ping[0].Ping.Seq)
	require.True(t, ok)
	assert.Equal(t, target.ID, id)
	ack := Packet{Kind: MsgAck, To: a.Self(), Ack: Ack{Seq: ping[0].Ping.Seq, NoSenderID: true}} // as decoded: no ID
	require.NoError(t, a.Step(time.Millisecond, &ack))
	assert.Empty(t, ack.From.ID, "Step does not write into the caller's packet")
	assert.False(t, a.pr.active, "answered")
	assert.Zero(t, a.Stats().AcksUnmatched)
}

// An ack without its sender's ID whose number matches no probe ping is
// refused and counted; nothing else changes.
func TestAckWithoutSenderIDUnmatched(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	pk, _ := drain(a)
	seq := only(t, pk, MsgPing)[0].Ping.Seq
	for i, s := range []uint32{seq + 2, seq + 1, 12345} {
		ack := Packet{Kind: MsgAck, To: a.Self(), Ack: Ack{Seq: s, NoSenderID: true}}
		err := a.Step(time.Millisecond, &ack)
		require.Error(t, err)
		assert.True(t, errors.Is(err, ErrPacket), "%v", err)
		assert.Equal(t, i+1, a.Stats().AcksUnmatched)
	}
	assert.True(t, a.pr.active, "the probe still waits")
	_, ok := a.AckSender(seq + 2)
	assert.False(t, ok)
}

// The ring keeps the latest sentPingsKept probe pings: a late ack, one
// after its probe ended, still names its sender; the ping before them is
// forgotten. A number held for two targets matches neither.
func TestSentPingsRing(t *testing.T) {
	var s sentPings
	_, ok := s.find(0)
	assert.False(t, ok, "an empty ring matches nothing, not even 0")
	for i := range uint32(sentPingsKept + 1) {
		s.add(sentPingsKept, 2*i, ID(rune('a'+i)))
	}
	_, ok = s.find(0)
	assert.False(t, ok, "the oldest ping is forgotten")
	for i := uint32(1); i <= sentPingsKept; i++ {
		id, ok := s.find(2 * i)
		require.True(t, ok, "ping %d", i)
		assert.Equal(t, ID(rune('a'+i)), id)
	}
	s.add(sentPingsKept, 4, "z") // number 4 went to c and now to z
	_, ok = s.find(4)
	assert.False(t, ok, "a number held for two targets")
	s.add(sentPingsKept, 6, "d") // the same ping resent: one target
	id, ok := s.find(6)
	assert.True(t, ok)
	assert.Equal(t, ID("d"), id)
}

// A late ack without its sender's ID, after its probe ended, is taken as
// the target's, as a named one is: its sender is heard from.
func TestLateAckWithoutSenderIDNamesItsSender(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	pk, _ := drain(a)
	ping := only(t, pk, MsgPing)[0]
	target := a.pr.target.node.ID
	advance(a, 3*a.cfg.ProbeInterval)
	require.NotEqual(t, ping.Ping.Seq, a.pr.seq, "later probes ran")
	id, ok := a.AckSender(ping.Ping.Seq)
	require.True(t, ok)
	assert.Equal(t, target, id)
	ack := Packet{Kind: MsgAck, To: a.Self(), Ack: Ack{Seq: ping.Ping.Seq, NoSenderID: true}}
	require.NoError(t, a.Step(3*a.cfg.ProbeInterval+time.Millisecond, &ack))
	assert.Zero(t, a.Stats().AcksUnmatched)
}

// An ack without its sender's ID that comes with another address than the
// one the view holds for the member it matches (a transport that filled in
// the datagram's source) answers no probe: it is taken as one from
// another host.
func TestAckWithoutSenderIDFromOtherAddress(t *testing.T) {
	for _, addr := range []string{"10.9.9.9:1", ""} {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
		a.Tick(0)
		pk, _ := drain(a)
		seq := only(t, pk, MsgPing)[0].Ping.Seq
		ack := Packet{Kind: MsgAck, From: Node{Addr: addr}, To: a.Self(), Ack: Ack{Seq: seq, NoSenderID: true}}
		require.NoError(t, a.Step(time.Millisecond, &ack))
		if addr != "" {
			assert.True(t, a.pr.active, "not answered")
			assert.Equal(t, 1, a.Stats().AcksFromOtherHost)
		} else {
			assert.False(t, a.pr.active, "answered")
			assert.Zero(t, a.Stats().AcksFromOtherHost)
		}
	}
}
