package kvstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// pulling makes s a store that asked "a" for its store with token tok.
func pulling(s *Store, tok byte) {
	s.pull.want = pullReq{id: "a", token: [tokenLen]byte{tok}}
}

// piece is a piece of a store for the pull with token tok, sent by a
// member at clock c, of es (pieceHeader).
func piece(t *testing.T, tok byte, c uint64, es ...entry) []byte {
	t.Helper()
	b, err := json.Marshal(es)
	require.NoError(t, err)
	head := append([]byte{kindState, tok}, make([]byte, tokenLen-1)...)
	return append(binary.BigEndian.AppendUint64(head, c), b...)
}

// One message moves the clock by at most MaxClockLead, however its
// entries chain: before, each entry was bounded by the clock the previous
// one had moved, and a message of n entries moved it by n·2^32 (issue 27,
// user33 F1). Clock 5: an entry at 5+L is taken, one at 5+L+1 (only 1
// above the moved clock) and one at 5+2L are refused; the next message
// may move it by L again.
func TestOneMessageMovesClockAtMostLead(t *testing.T) {
	const L = MaxClockLead
	s := &Store{data: map[string]entry{}, clock: 5}
	pulling(s, 1)
	s.receive(swim.Message{From: "a", Data: piece(t, 1, 0,
		entry{Key: "a", Time: 5 + L, Writer: "f"},
		entry{Key: "b", Time: 5 + L + 1, Writer: "f"},
		entry{Key: "c", Time: 5 + 2*L, Writer: "f"})})
	assert.Equal(t, uint64(5+L), s.clock)
	assert.Equal(t, uint64(2), s.Rejected())
	_, a := s.Get("a")
	_, b := s.Get("b")
	_, c := s.Get("c")
	assert.Equal(t, []bool{true, false, false}, []bool{a, b, c})
	s.receive(swim.Message{From: "a", Data: piece(t, 1, 0, entry{Key: "c", Time: 5 + 2*L, Writer: "f"})})
	assert.Equal(t, uint64(5+2*L), s.clock)
	assert.Equal(t, uint64(2), s.Rejected())
}

// Close may be called twice (user33's test did; the sender's stop
// channel was closed twice and panicked while this change was made).
func TestCloseTwice(t *testing.T) {
	s := newStore(t, plainCfg("a"))
	require.NoError(t, s.Close())
	assert.NotPanics(t, func() { _ = s.Close() })
}

// plainUDP returns an encoder of plain packets and a UDP socket on
// 127.0.0.1 to send them from, the forger's whole kit.
func plainUDP(t *testing.T) (*wire.Codec, *net.UDPConn) {
	t.Helper()
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return codec, c
}

// sendPlain encodes pk and sends it from c to s; it returns the bytes
// sent. It stops the test on an error: call it from the test's goroutine
// only (trySendPlain otherwise).
func sendPlain(t *testing.T, codec *wire.Codec, c *net.UDPConn, s *Store, pk swim.Packet) int {
	t.Helper()
	n, err := trySendPlain(codec, c, s, pk)
	require.NoError(t, err)
	return n
}

// trySendPlain is sendPlain returning its error, for goroutines other
// than the test's (flood), where require's FailNow is invalid.
func trySendPlain(codec *wire.Codec, c *net.UDPConn, s *Store, pk swim.Packet) (int, error) {
	pk.To = s.Agent().Self()
	data, _, err := codec.Encode(&pk)
	if err != nil {
		return 0, fmt.Errorf("encoding %v: %w", pk.Kind, err)
	}
	if _, err := c.WriteToUDPAddrPort(data, netip.MustParseAddrPort(s.Agent().Self().Addr)); err != nil {
		return 0, err
	}
	return len(data), nil
}

// countingTCP is a TCP service that reads and counts whatever it is sent:
// the victim of a reflection.
func countingTCP(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	var got atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { n, _ := io.Copy(io.Discard, c); got.Add(n); _ = c.Close() }()
		}
	}()
	return ln.Addr().String(), &got
}

// Forged Alives of members at a victim's TCP address (plain mode, from
// the forger's own socket) draw no store there, and start no goroutine
// per join: before, each join event started a goroutine that copied the
// store and sent it to the ghost, about 115 times the forger's bytes and
// a copy of the store per ghost in flight (user33 F2).
func TestGhostJoinsDrawNoStore(t *testing.T) {
	a := newStore(t, plainCfg("a"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 50 {
		require.NoError(t, a.Set(ctx, fmt.Sprintf("key-%02d", i), strings.Repeat("v", 900)))
	}
	events, stop := a.Agent().Subscribe(1024)
	defer stop()
	victim, got := countingTCP(t)
	codec, c := plainUDP(t)
	self := swim.Node{ID: "att", Addr: c.LocalAddr().String()}
	g0 := runtime.NumGoroutine()
	sent := 0
	const ghosts = 64
	for g := range ghosts {
		ghost := swim.Node{ID: swim.ID(fmt.Sprintf("ghost-%02d", g)), Addr: victim}
		sent += sendPlain(t, codec, c, a, swim.Packet{Kind: swim.MsgGossip, From: self,
			Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: ghost, From: self.ID, Incarnation: 1}}})
	}
	joins, maxG := 0, g0
	require.Eventually(t, func() bool {
		for {
			select {
			case e := <-events:
				if e.Kind == swim.EventJoin && strings.HasPrefix(string(e.Node.ID), "ghost-") {
					joins++
				}
				continue
			default:
			}
			break
		}
		maxG = max(maxG, runtime.NumGoroutine())
		return joins >= 10
	}, 10*time.Second, 5*time.Millisecond, "ghosts admitted")
	// Each join event of the ghosts has been seen: whatever a store does
	// for it has started. Watch for a while more.
	for range 100 {
		maxG = max(maxG, runtime.NumGoroutine())
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%d ghosts admitted of %d; forger sent %d B, the victim read %d B; goroutines %d before, up to %d",
		joins, ghosts, sent, got.Load(), g0, maxG)
	assert.LessOrEqual(t, maxG-g0, 8, "goroutines grew with the ghosts")
	assert.LessOrEqual(t, got.Load(), int64(2*sent), "the victim got more than twice the forger's bytes")
	n, _ := a.StateErrors()
	assert.Zero(t, n, "no store was sent")
}

// A forged request for the store from a ghost at a victim's address draws
// one challenge there, a datagram about the request's size, and no
// store; an echo of a challenge the store never sent is refused.
func TestForgedPullDrawsChallengeOnly(t *testing.T) {
	// Probes a second apart: the ghost, which never answers, stays alive
	// for seconds after its Alive, while the forger asks and echoes, on
	// a loaded machine too.
	cfg := plainCfg("a")
	cfg.Protocol.ProbeInterval, cfg.Protocol.ProbeTimeout = time.Second, 500*time.Millisecond
	a := newStore(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 50 {
		require.NoError(t, a.Set(ctx, fmt.Sprintf("key-%02d", i), strings.Repeat("v", 900)))
	}
	victim, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer victim.Close()
	codec, c := plainUDP(t)
	var chals, chalBytes atomic.Int64
	go func() {
		buf := make([]byte, 65536)
		for {
			n, _, err := victim.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if pk, err := codec.Decode(buf[:n]); err == nil && pk.Kind == swim.MsgUser && len(pk.User) > 0 && pk.User[0] == kindChal {
				chals.Add(1)
				chalBytes.Add(int64(n))
			}
		}
	}()
	self := swim.Node{ID: "att", Addr: c.LocalAddr().String()}
	ghost := swim.Node{ID: "ghost", Addr: victim.LocalAddr().String()}
	sendPlain(t, codec, c, a, swim.Packet{Kind: swim.MsgGossip, From: self,
		Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: ghost, From: self.ID, Incarnation: 1}}})
	require.Eventually(t, func() bool { _, err := a.liveAddr("ghost"); return err == nil }, 10*time.Second, 5*time.Millisecond, "ghost admitted")
	asked := sendPlain(t, codec, c, a, swim.Packet{Kind: swim.MsgUser, From: ghost, User: askMsg([askNonceLen]byte{1})})
	require.Eventually(t, func() bool { return chals.Load() == 1 }, 10*time.Second, 5*time.Millisecond, "one challenge to the ghost")
	sendPlain(t, codec, c, a, swim.Packet{Kind: swim.MsgUser, From: ghost, User: echoMsg([challengeLen]byte{}, [tokenLen]byte{})})
	require.Eventually(t, func() bool { return a.Rejected() == 1 }, 10*time.Second, 5*time.Millisecond, "the forged echo refused")
	t.Logf("forged request %d B; challenge %d B", asked, chalBytes.Load())
	assert.LessOrEqual(t, chalBytes.Load(), int64(2*asked))
	assert.Zero(t, a.Agent().Stats().ReliableSent)
	n, _ := a.StateErrors()
	assert.Zero(t, n)
	assert.Equal(t, int64(1), chals.Load())
}

// An entry received in a state message that would not fit a broadcast is
// refused and counted, and the others of the message are taken: before,
// it was kept, no pull carried it (statePieces left it out at every
// joiner's pull) and no write of it was gossiped, so the stores differed
// for good (issue 27, user37 F5).
func TestOversizeEntryRefused(t *testing.T) {
	s := &Store{data: map[string]entry{}}
	pulling(s, 1)
	s.receive(swim.Message{From: "a", Data: piece(t, 1, 2,
		entry{Key: "big", Value: strings.Repeat("x", 100<<10), Time: 1, Writer: "z"},
		entry{Key: "small", Value: "1", Time: 2, Writer: "z"})})
	_, big := s.Get("big")
	_, small := s.Get("small")
	assert.Equal(t, []bool{false, true}, []bool{big, small})
	assert.Equal(t, uint64(1), s.Rejected())
	ps, err := statePieces([]byte{kindState}, []entry{s.data["small"]}, StatePiece)
	assert.NoError(t, err)
	assert.Len(t, ps, 1)
}

// The bound is Set's: {"k":"x","v":V,"t":1,"w":"f"} is 30 bytes and V's
// length encoded, so an update with 993 bytes of value is 1+30+993 =
// 1024 = swim.MaxBroadcastLen bytes and is taken; one more byte is
// refused (sent first, so that taking it would show in the value).
func TestReceivedEntrySizeBound(t *testing.T) {
	s := &Store{data: map[string]entry{}}
	for _, n := range []int{994, 993} {
		msg := fmt.Appendf([]byte{kindUpdate}, `{"k":"x","v":"%s","t":1,"w":"f"}`, strings.Repeat("v", n))
		require.Len(t, msg, 1+30+n)
		s.receive(swim.Message{Data: msg})
	}
	v, ok := s.Get("x")
	assert.True(t, ok)
	assert.Len(t, v, 993)
	assert.Equal(t, uint64(1), s.Rejected())
}

// A piece of a pulled store carries no entry stamped above maxAdopted,
// the most of its sender's clock a store adopts (usr30b A). A hostile
// member asked for its store (by a joiner, or by Repair every
// RepairInterval) sent its clock at maxAdopted and an entry MaxClockLead
// above it: the entry passed apply's bound (the clock before it, moved to
// maxAdopted), carried this store's clock past maxAdopted, and every
// member that adopted no more than maxAdopted from it refused its writes
// for good. Now the entry is refused and the clock stays at maxAdopted.
func TestPieceEntriesCappedAtAdoptedClock(t *testing.T) {
	t.Skip("known, not mended: refusing piece entries above maxAdopted (14f92c4) let a header alone at maxAdopted shut the store's later writes out of every pull (atk30d F2, TestWriteAfterAdoptedClockReachesOthers), a simpler attack than this one; withdrawn. A Lamport clock that a member asked for its store may move to its cap has this edge whatever the cap (package comment)")
	_, a, b := pair(t)
	b.mu.Lock()
	b.pull.want = pullReq{id: a.Agent().Self().ID, token: [tokenLen]byte{7}}
	b.mu.Unlock()
	rejected := b.Rejected()
	b.receive(swim.Message{From: a.Agent().Self().ID, Data: piece(t, 7, maxAdopted,
		entry{Key: "k", Value: "hostile", Time: maxAdopted + MaxClockLead, Writer: "zz"},
		entry{Key: "k2", Value: "at the cap", Time: maxAdopted, Writer: "zz"})})
	_, ok := b.Get("k")
	assert.False(t, ok, "the entry above maxAdopted is refused")
	v, ok := b.Get("k2")
	assert.True(t, ok)
	assert.Equal(t, "at the cap", v)
	assert.Equal(t, rejected+1, b.Rejected())
	b.mu.Lock()
	assert.Equal(t, uint64(maxAdopted), b.clock)
	b.mu.Unlock()
}
