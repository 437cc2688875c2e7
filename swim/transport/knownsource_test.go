package transport

import (
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// F1 of the attacker review (issue 27): a flood of stalled streams, one
// from each of several addresses, does not evict the stream of a known
// peer whose first frame has not arrived whole, although that stream has
// been idle longest. The flood's streams go first, oldest first, then an
// unknown stream that delivered a frame, and the member's frame then
// arrives whole. Before, the member's stream, unframed and idle longest,
// was the first to go.
func TestStreamEvictionSparesKnownSource(t *testing.T) {
	l, dialFrom := listenEcho(t, StreamConfig{MaxConns: 3, MaxConnsPerSource: 3, MaxFrame: 100, Timeout: 20 * time.Second})
	l.SetKnownSource(netip.MustParseAddr("127.0.0.1"), true)
	send := func(src string, b []byte) net.Conn {
		c := dialFrom(src)
		writeSeen(t, l, c, b) // in the order written
		return c
	}
	member := send("127.0.0.1", partialFrame(100, 10)) // idle longest from here on
	flood := []net.Conn{send("127.0.0.2", partialFrame(100, 10)), send("127.0.0.3", partialFrame(100, 10))}

	first := dialFrom("127.0.0.4")
	require.NoError(t, pingEcho(first, 10*time.Second), "a fourth source is served")
	require.True(t, closedByPeer(flood[0], 10*time.Second), "the flood's stream idle longest was closed")
	waitingOnPeer(t, l, 3)
	require.NoError(t, pingEcho(dialFrom("127.0.0.5"), 10*time.Second), "a fifth source is served")
	require.True(t, closedByPeer(flood[1], 10*time.Second), "the flood's other stream, without a frame, was closed")
	waitingOnPeer(t, l, 3)
	require.NoError(t, pingEcho(dialFrom("127.0.0.6"), 10*time.Second), "a sixth source is served")
	assert.True(t, closedByPeer(first, 10*time.Second), "the unknown stream that delivered a frame was closed before the member's")

	_, err := member.Write(make([]byte, 90))
	require.NoError(t, err)
	_ = member.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.ReadFull(member, make([]byte, 104))
	require.NoError(t, err, "the member's frame is whole")
	assert.Equal(t, StreamStats{Accepted: 6, Evicted: 3}, l.Stats())
}

// A joiner is not yet known: it still gets a slot when every slot holds a
// known peer's stream, in place of the one idle longest. Once served, it
// is the first to go for a later unknown stream, although a member's
// stream has been idle longer.
func TestStreamEvictionJoinerDisplacesMember(t *testing.T) {
	l, dialFrom := listenEcho(t, StreamConfig{MaxConns: 2, MaxConnsPerSource: 2, Timeout: 20 * time.Second})
	l.SetKnownSource(netip.MustParseAddr("127.0.0.1"), true)
	l.SetKnownSource(netip.MustParseAddr("127.0.0.2"), true)
	var members []net.Conn
	for _, src := range []string{"127.0.0.1", "127.0.0.2"} {
		c := dialFrom(src)
		require.NoError(t, pingEcho(c, 10*time.Second))
		members = append(members, c)
		waitingOnPeer(t, l, len(members)) // in the order dialled
	}
	joiner := dialFrom("127.0.0.3")
	require.NoError(t, pingEcho(joiner, 10*time.Second), "the joiner is served")
	require.True(t, closedByPeer(members[0], 10*time.Second), "the member's stream idle longest was closed")
	waitingOnPeer(t, l, 2)
	require.NoError(t, pingEcho(dialFrom("127.0.0.4"), 10*time.Second), "another unknown source is served")
	assert.True(t, closedByPeer(joiner, 10*time.Second), "the unknown joiner went before the member")
	require.NoError(t, pingEcho(members[1], 10*time.Second), "the other member's stream is kept")
	assert.Equal(t, StreamStats{Accepted: 4, Evicted: 2}, l.Stats())
}

// evictionOrder with the known rule, values by hand: crowding first, then
// unknown before known, then unframed before framed, then idle longest.
func TestStreamEvictionOrderKnown(t *testing.T) {
	conn := func(framed bool, idle int64) *connState {
		st := &connState{}
		st.framed.Store(framed)
		st.idleSince.Store(idle)
		return st
	}
	old, young := conn(false, 100), conn(false, 200)
	framedOld := conn(true, 100)
	unknown, known := standing{}, standing{known: true}
	crowdedKnown := standing{crowding: 5, known: true}
	for _, tc := range []struct {
		name   string
		a, b   *connState
		as, bs standing
		want   bool
	}{
		{"unknown young before known old", young, old, unknown, known, true},
		{"known old after unknown young", old, young, known, unknown, false},
		{"unknown framed before known unframed", framedOld, young, unknown, known, true},
		{"crowded known before uncrowded unknown", young, old, crowdedKnown, unknown, true},
		{"both known: unframed first", young, framedOld, known, known, true},
		{"both known: idle longest first", old, young, known, known, true},
		{"both known: younger not first", young, old, known, known, false},
	} {
		assert.Equal(t, tc.want, evictionOrder(tc.a, tc.b, tc.as, tc.bs), tc.name)
	}
}

// SetKnownSource marks and unmarks an address, an IPv4-mapped one as its
// IPv4 address, and ignores the zero Addr; IsKnownSource reports it.
func TestStreamSetKnownSource(t *testing.T) {
	l, err := ListenStream(StreamConfig{}, func(*Conn) {})
	require.NoError(t, err)
	defer l.Close()
	v4 := netip.MustParseAddr("127.0.0.7")
	l.SetKnownSource(netip.MustParseAddr("::ffff:127.0.0.7"), true)
	assert.True(t, l.IsKnownSource(v4), "marked through its IPv4-mapped form")
	assert.True(t, l.IsKnownSource(netip.MustParseAddr("::ffff:127.0.0.7")))
	assert.False(t, l.IsKnownSource(netip.MustParseAddr("127.0.0.8")))
	l.mu.Lock()
	assert.True(t, l.standing(v4).known, "evictionOrder sees the mark")
	l.mu.Unlock()
	l.SetKnownSource(netip.Addr{}, true)
	l.SetKnownSource(v4, false)
	assert.False(t, l.IsKnownSource(v4), "unmarked")
	l.mu.Lock()
	assert.Empty(t, l.known, "the zero Addr is not kept")
	l.mu.Unlock()
}
