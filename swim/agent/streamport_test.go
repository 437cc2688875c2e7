package agent

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// A stream proves the host it comes from, not the port its sender claims
// (issue 27, user40 F1). A process on 127.0.0.1 opens one stream per
// member, twice, and writes one view frame per ghost, each From a ghost
// at another port of 127.0.0.1 (a UDP socket of the test's, read only to
// observe) with its own Alive: before, the first frame added the ghost
// and the second, from a held sender stepped as source-checked, verified
// it, and the ghosts drew round pings, gossip, ping-reqs and join
// announcements (20 of 20, 3.5× the frames' bytes in 3 s at n = 8).
// Now each ghost gets only its challenge and ledger-paid probe pings,
// all with an odd nonce, and no more than twice the frames' bytes.
func TestStreamFramesDoNotVerifyAtClaimedPort(t *testing.T) {
	const n, k = 4, 8
	as := group(t, n, Config{Plain: true, Protocol: fast()})
	periodsFrom(t, as...)(2)
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	vs := make([]*victim, k)
	gs := make([]swim.Node, k)
	for i := range vs {
		vs[i] = newVictim(t, codec)
		gs[i] = swim.Node{ID: swim.ID(fmt.Sprintf("portghost%d", i)), Addr: vs[i].LocalAddr().String()}
	}
	written := 0
	for range 2 {
		for _, a := range as {
			c, err := transport.DialStream(t.Context(), netip.MustParseAddrPort(a.Self().Addr), transport.StreamConfig{Timeout: 5 * time.Second})
			require.NoError(t, err)
			for _, g := range gs {
				frame, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgSync, From: g, To: a.Self(),
					Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: g, From: g.ID, Incarnation: 1}}})
				require.NoError(t, err)
				require.NoError(t, c.WriteFrame(frame))
				written += len(frame) + 4
			}
			require.NoError(t, c.Close())
		}
	}
	require.Eventually(t, func() bool {
		for _, a := range as {
			held := 0
			for _, m := range a.Members() {
				for _, g := range gs {
					if m.Node == g && m.State == swim.StateAlive {
						held++
					}
				}
			}
			if held < k {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "every member holds every ghost")
	// A verified ghost is probed in its turn, within a round of n-1+k
	// members; wait three such rounds.
	periodsFrom(t, as...)(3 * (n - 1 + k))
	got, challenges := 0, 0
	for i, v := range vs {
		for len(v.Packets()) > 0 {
			p := <-v.Packets()
			got += len(p.Data)
			pk, err := codec.Decode(p.Data)
			require.NoError(t, err)
			require.Equal(t, swim.MsgPing, pk.Kind, "ghost %s got what only verified members get", gs[i].ID)
			require.Equal(t, uint32(1), pk.Ping.Seq&1, "ghost %s got a round's probe number", gs[i].ID)
			assert.Empty(t, pk.Updates, "a ping to a ghost is bare")
			challenges++
		}
	}
	t.Logf("frames %d B over %d streams; ghosts' sockets %d B in %d pings", written, 2*n, got, challenges)
	assert.Positive(t, challenges, "the frames drew the usual challenges")
	assert.LessOrEqual(t, got, 2*written, "what the ghosts drew is paid by the frames' bytes")
}
