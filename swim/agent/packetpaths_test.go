package agent

import (
	"context"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// plainPeer is a member driven by hand in plain mode: a codec and a UDP
// socket, for tests that send an agent packets no agent would make.
type plainPeer struct {
	codec *wire.Codec
	conn  *transport.UDP
}

func newPlainPeer(t *testing.T) *plainPeer {
	t.Helper()
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	conn, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return &plainPeer{codec: codec, conn: conn}
}

// addr is the address the peer's datagrams come from.
func (p *plainPeer) addr() string { return p.conn.LocalAddr().String() }

// send encodes pk and sends it to a.
func (p *plainPeer) send(t *testing.T, a *Agent, pk *swim.Packet) {
	t.Helper()
	b, _, err := p.codec.Encode(pk)
	require.NoError(t, err)
	require.NoError(t, p.conn.Send(netip.MustParseAddrPort(a.Self().Addr), b))
}

// TestRejectedCounted: a packet that authenticates and decodes but that the
// state machine refuses (a suspicion with no suspecter) is counted as
// Rejected, not as a decode or authentication failure, and changes nothing.
func TestRejectedCounted(t *testing.T) {
	a := start(t, Config{Plain: true})
	newPlainPeer(t).send(t, a, &swim.Packet{Kind: swim.MsgSync, From: swim.Node{ID: "x", Addr: "127.0.0.1:9"}, To: a.Self(),
		Updates: []swim.Update{{Kind: swim.UpdateSuspect, Node: a.Self()}}})
	require.Eventually(t, func() bool { return a.Stats().Rejected == 1 }, 3*time.Second, 10*time.Millisecond)
	s := a.Stats()
	assert.Zero(t, s.DecodeErrors)
	assert.Zero(t, s.AuthFailures)
	assert.Len(t, a.Members(), 1)
}

// TestStartRefusesSelfTooLarge: a member whose own join (its ID and address
// in the header and in its Alive update) cannot fit MaxPacketSize
// could never join; Start says so instead of every Join timing out.
func TestStartRefusesSelfTooLarge(t *testing.T) {
	_, err := Start(context.Background(), Config{Plain: true, ID: swim.ID(strings.Repeat("i", 255)), MaxPacketSize: 400})
	assert.ErrorIs(t, err, ErrSelfTooLarge)
	assert.ErrorContains(t, err, "ID of 255 bytes")
	assert.ErrorContains(t, err, "over MaxPacketSize 400")
	_, err = Start(context.Background(), Config{Plain: true, MaxPacketSize: 200})
	assert.ErrorContains(t, err, "MaxPacketSize 200: too small")
}

// TestOversizeDropsCounted: a datagram larger than MaxPacketSize, dropped by
// the transport before the agent sees it, still shows in the agent's Stats
// (exported by promswim), so that an oversized flood is visible: fdswim does
// not export the transport's own counters.
func TestOversizeDropsCounted(t *testing.T) {
	a := start(t, Config{})
	u, err := listenUDP(transport.Config{MaxPacketSize: 2000})
	require.NoError(t, err)
	defer u.Close()
	require.NoError(t, u.Send(netip.MustParseAddrPort(a.Self().Addr), make([]byte, 1401)))
	require.Eventually(t, func() bool { return a.Stats().DroppedOversize == 1 }, 3*time.Second, 10*time.Millisecond)
	assert.Zero(t, a.Stats().PacketsReceived, "the oversized datagram never reached the agent")
}

// TestReplayDroppedAndUnanswered: a sealed packet sent a second time, or
// captured before the agent (re)started, is dropped, counted in
// Stats.Replayed, and answered with nothing; the first copy is answered.
func TestReplayDroppedAndUnanswered(t *testing.T) {
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: mustKeyring(t)}})
	require.NoError(t, err)
	u, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	defer u.Close()
	early, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "x", Addr: u.LocalAddr().String()}, Ping: swim.Ping{Seq: 1}})
	require.NoError(t, err)

	a := start(t, Config{})
	to := netip.MustParseAddrPort(a.Self().Addr)
	require.NoError(t, u.Send(to, early))
	require.Eventually(t, func() bool { return a.Stats().Replayed == 1 }, 3*time.Second, 10*time.Millisecond,
		"sealed before the agent started")

	ping, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "x", Addr: u.LocalAddr().String()}, Ping: swim.Ping{Seq: 2}})
	require.NoError(t, err)
	require.NoError(t, u.Send(to, ping))
	// The first copy is answered: an ack (x is unknown, but its ping too
	// small to draw a view request: swim's asksView).
	require.Eventually(t, func() bool { return a.Stats().PacketsSent == 1 }, 3*time.Second, 10*time.Millisecond)
	sent := a.Stats().PacketsSent
	for range 5 {
		require.NoError(t, u.Send(to, ping))
	}
	require.Eventually(t, func() bool { return a.Stats().Replayed == 6 }, 3*time.Second, 10*time.Millisecond)
	s := a.Stats()
	assert.Equal(t, sent, s.PacketsSent, "nothing sent in answer to a replay")
	assert.Zero(t, s.AuthFailures)
	assert.Zero(t, s.Rejected)
}

func mustKeyring(t *testing.T) *wire.Keyring {
	t.Helper()
	kr, err := wire.NewKeyring(testKey)
	require.NoError(t, err)
	return kr
}

// TestUnknownKindIgnoredAndCounted: a well-formed packet of a message kind
// from a later version is counted in UnknownKinds, not as a decode error,
// and changes nothing.
func TestUnknownKindIgnoredAndCounted(t *testing.T) {
	a := start(t, Config{Plain: true})
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	pkt, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "x", Addr: "127.0.0.1:9"}, To: a.Self()})
	require.NoError(t, err)
	require.Equal(t, []byte{0x01, wire.Version, byte(swim.MsgPing)}, pkt[:3], "plain envelope, version, kind")
	pkt[2] = 42 // a kind this version does not know
	u, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	defer u.Close()
	require.NoError(t, u.Send(netip.MustParseAddrPort(a.Self().Addr), pkt))
	require.Eventually(t, func() bool { return a.Stats().UnknownKinds == 1 }, 3*time.Second, 10*time.Millisecond)
	s := a.Stats()
	assert.Zero(t, s.DecodeErrors)
	assert.Zero(t, s.AuthFailures)
	assert.Zero(t, s.Rejected)
	assert.Len(t, a.Members(), 1)
}

// TestForgedJoinNotReflected: a join is answered with the whole view sent to
// the address the joiner claims, so a join claiming someone else's address
// must not be answered: one forged 100-byte join made an agent send its view
// (hundreds of times the join's size as members grow) to the victim. A join
// from the address it claims is answered with the join challenge, a bare
// ping no larger than the join, and the ack to it with the view.
func TestForgedJoinNotReflected(t *testing.T) {
	a := start(t, Config{Plain: true})
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	victim, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	defer victim.Close()
	attacker, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	defer attacker.Close()
	claimed := swim.Node{ID: "fake", Addr: victim.LocalAddr().String()}
	join, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgJoin, From: claimed, To: swim.Node{Addr: a.Self().Addr},
		Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: claimed, From: claimed.ID}}})
	require.NoError(t, err)
	to := netip.MustParseAddrPort(a.Self().Addr)

	require.NoError(t, attacker.Send(to, join))
	require.Eventually(t, func() bool { return a.Stats().Rejected == 1 }, 3*time.Second, 10*time.Millisecond)
	select {
	case p := <-victim.Packets():
		t.Fatalf("the victim received %d bytes in answer to a join it did not send", len(p.Data))
	case <-time.After(300 * time.Millisecond):
	}
	assert.Len(t, a.Members(), 1, "the forged joiner is not admitted")

	require.NoError(t, victim.Send(to, join)) // the same join, from the claimed address
	size := 0
	next := func() *swim.Packet {
		t.Helper()
		select {
		case p := <-victim.Packets():
			got, err := codec.Decode(p.Data)
			require.NoError(t, err)
			size = len(p.Data)
			return got
		case <-time.After(5 * time.Second):
			t.Fatal("a join from the address it claims got no answer")
		}
		return nil
	}
	ping := next()
	require.Equal(t, swim.MsgPing, ping.Kind, "the join challenge")
	assert.LessOrEqual(t, size, len(join), "the challenge is no larger than the join")
	assert.Equal(t, claimed.ID, ping.To.ID)
	assert.Empty(t, ping.Updates)
	ack, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgAck, From: claimed, To: ping.From, Ack: swim.Ack{Seq: ping.Ping.Seq}})
	require.NoError(t, err)
	require.NoError(t, victim.Send(to, ack))
	assert.Equal(t, swim.MsgSync, next().Kind, "the view, once the challenge is answered")
}

// TestForgedBroadcastNumberRefused: the agent numbers broadcasts by its
// clock and bounds received numbers by its own clock plus MaxBroadcastLead,
// so a broadcast numbered 2^64−1 under another origin's name is refused
// and counted instead of silencing that origin.
func TestForgedBroadcastNumberRefused(t *testing.T) {
	a := start(t, Config{Plain: true})
	u := newPlainPeer(t)
	u.announce(t, a) // a member, whose broadcasts may raise o's numbers
	send := func(seq uint64) { u.broadcast(t, a, seq) }
	send(^uint64(0))
	require.Eventually(t, func() bool { return a.Stats().Protocol.BroadcastsImplausible == 1 }, 3*time.Second, 10*time.Millisecond)
	send(uint64(time.Now().UnixNano())) // o's genuine number, from its clock
	require.Eventually(t, func() bool { return a.Stats().Protocol.BroadcastsReceived == 1 }, 3*time.Second, 10*time.Millisecond)
}

// TestBroadcastCeilingFollowsWallClock: the numbering ceiling is the wall
// clock read with each Step, not the start time plus monotonic time since,
// so a member started with its clock 60 s behind refuses honest numbers
// only until NTP corrects the clock, not until it restarts.
func TestBroadcastCeilingFollowsWallClock(t *testing.T) {
	var skew atomic.Int64
	skew.Store(int64(-60 * time.Second))
	a := start(t, Config{Plain: true, wallSkew: func() time.Duration { return time.Duration(skew.Load()) }})
	u := newPlainPeer(t)
	u.announce(t, a)
	send := func(seq uint64) { u.broadcast(t, a, seq) }
	// 60 s behind, more than MaxBroadcastLead: o's honest number looks forged.
	send(uint64(time.Now().UnixNano()))
	require.Eventually(t, func() bool { return a.Stats().Protocol.BroadcastsImplausible == 1 }, 3*time.Second, 10*time.Millisecond)
	skew.Store(0) // NTP steps the clock to the right time
	send(uint64(time.Now().UnixNano()))
	require.Eventually(t, func() bool { return a.Stats().Protocol.BroadcastsReceived == 1 }, 3*time.Second, 10*time.Millisecond,
		"an honest number refused after the clock was corrected")
	assert.EqualValues(t, 1, a.Stats().Protocol.BroadcastsImplausible)
}

// announce sends a gossip from "x" with its own Alive at the peer's
// address and waits until a holds x alive: a's view then holds the
// peer live where its packets come from, and it takes broadcasts the peer
// sends numbered above what it delivered from their origin (a stranger's
// are dropped, swim.Stats.BroadcastsUnvouched).
func (p *plainPeer) announce(t *testing.T, a *Agent) {
	t.Helper()
	x := swim.Node{ID: "x", Addr: p.addr()}
	p.send(t, a, &swim.Packet{Kind: swim.MsgGossip, From: x, To: a.Self(),
		Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: x, From: "x"}}})
	require.Eventually(t, func() bool {
		for _, m := range a.Members() {
			if m.Node.ID == "x" && m.State == swim.StateAlive {
				return true
			}
		}
		return false
	}, 3*time.Second, 10*time.Millisecond, "x announced")
}

// broadcast sends a gossip from "x" carrying one broadcast, "x" from
// origin "o" numbered seq.
func (p *plainPeer) broadcast(t *testing.T, a *Agent, seq uint64) {
	t.Helper()
	p.send(t, a, &swim.Packet{Kind: swim.MsgGossip, From: swim.Node{ID: "x", Addr: p.addr()}, To: a.Self(),
		Broadcasts: []swim.Broadcast{{Origin: "o", Seq: seq, Data: []byte("x")}}})
}
