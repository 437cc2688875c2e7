package agent

import (
	"context"
	"fmt"
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

// A hostile seed answers each stream join of agent 0 (a group of 4) with
// a join from itself, then k joins from fresh IDs claiming another port
// of its host (a victim's, UDP and TCP) and k from fresh IDs claiming
// its own address (issue 27, user42 F1 and F2). The stream proves only
// the seed's host, so the joiner must take only the member dialled
// (its address, and the first ID seen there) at its word. Before, each
// ghost's join was answered with the joiner's view at the victim's port,
// 11–12× the seed's bytes (docs/experiments.md, “SWIM: stream joins
// answered on their stream”), and every ghost was admitted as its own
// word past the unverified quota. The group then runs 6 periods: the
// victim must have received at most twice the seed's bytes, no ghost
// may be held, and the dropped frames are counted.
func TestAnswerStreamSpeaksOnlyForTheSeed(t *testing.T) {
	const n, k = 4, 2
	as := group(t, n, Config{Plain: true, Protocol: fast()})
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	v := newPortVictim(t, codec)
	joiner := as[0]
	var wrote atomic.Int64
	seedAddr, streams := hostileSeedAt(t, codec, func(c *transport.Conn, seedAddr string, s int64) {
		seed := swim.Node{ID: "hostile-seed", Addr: seedAddr}
		nodes := []swim.Node{seed}
		for i := range k {
			nodes = append(nodes,
				swim.Node{ID: swim.ID(fmt.Sprintf("ghost-victim-%d-%d", s, i)), Addr: v.LocalAddr().String()},
				swim.Node{ID: swim.ID(fmt.Sprintf("ghost-seed-%d-%d", s, i)), Addr: seed.Addr})
		}
		for _, g := range nodes {
			b, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgJoin, From: g, To: joiner.Self(),
				Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: g, From: g.ID}}})
			if err != nil {
				t.Errorf("encode: %v", err)
				return
			}
			if c.WriteFrame(b) != nil {
				return
			}
			wrote.Add(int64(len(b)))
		}
	})

	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_ = joiner.Join(ctx, seedAddr) // never answered with a view
	periodsFrom(t, as...)(6)
	v.readUntilQuiet()
	got := v.got + int(v.tcpBytes.Load())
	st := joiner.Stats()
	t.Logf("seed: %d streams, %d B; victim %d B over UDP, %d B over %d TCP connections: %.2f×; StreamAnswersForeign %d",
		streams.Load(), wrote.Load(), v.got, v.tcpBytes.Load(), v.tcpConns.Load(), float64(got)/float64(wrote.Load()), st.StreamAnswersForeign)
	require.Positive(t, streams.Load(), "the joiner resent its join over a stream")
	assert.LessOrEqual(t, got, 2*int(wrote.Load()), "the victim's bytes against the seed's")
	var ghosts []string
	for _, m := range joiner.Members() {
		if strings.HasPrefix(string(m.Node.ID), "ghost-") {
			ghosts = append(ghosts, fmt.Sprintf("%s at %s (%v)", m.Node.ID, m.Node.Addr, m.State))
		}
	}
	assert.Empty(t, ghosts, "ghosts held by the joiner")
	assert.Eventually(t, func() bool { return joiner.Stats().StreamAnswersForeign >= uint64(2*k*streams.Load()) },
		10*time.Second, 10*time.Millisecond, "every ghost's frame dropped and counted")
	assert.Equal(t, uint64(2*k*streams.Load()), joiner.Stats().StreamAnswersForeign, "no frame but the ghosts' dropped")
}

// hostileSeedAt listens for streams on 127.0.0.1 and runs answer on each
// one whose first frame is a join, with the listener's address and the
// stream's number (from 1); it returns the address and the count of
// such streams. The listener closes when t ends.
func hostileSeedAt(t *testing.T, codec *wire.Codec, answer func(c *transport.Conn, seedAddr string, s int64)) (string, *atomic.Int64) {
	t.Helper()
	var streams atomic.Int64
	var addr atomic.Value
	l, err := transport.ListenStream(transport.StreamConfig{Bind: "127.0.0.1:0", Timeout: 5 * time.Second,
		MaxConns: 64, MaxConnsPerSource: 64, MaxFrame: 1 << 20}, func(c *transport.Conn) {
		if b, err := c.ReadFrame(); err != nil {
			return
		} else if pk, err := codec.Decode(b); err != nil || pk.Kind != swim.MsgJoin {
			return
		}
		answer(c, addr.Load().(string), streams.Add(1))
	})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	seedAddr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), l.LocalAddr().Port()).String()
	addr.Store(seedAddr)
	return seedAddr, &streams
}
