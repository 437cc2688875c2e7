package agent

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
)

// What a member writes back on the stream of a join (readAnswer) is
// counted as what an inbound stream carries (serveStream): a view over
// MaxStreamMembers updates and a frame longer than MaxPacketSize in
// StreamOversize, a kind no answer is (a ping) in StreamDecodeErrors, and
// a view within the bounds in StreamJoinAnswers only. (readAnswer counted
// the view over the cap as StreamDecodeErrors, and did not count the
// frame too long.)
func TestJoinAnswerRefusalsCounted(t *testing.T) {
	a := start(t, Config{Plain: true, MaxStreamMembers: 2})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	to := netip.MustParseAddrPort(l.Addr().String())
	seed := swim.Node{ID: "seed", Addr: to.String()}
	frame := func(pk swim.Packet) []byte {
		b, _, err := a.codec.Encode(&pk)
		require.NoError(t, err)
		f, err := transport.AppendFrame(nil, b)
		require.NoError(t, err)
		return f
	}
	view := func(n int) []byte {
		pk := swim.Packet{Kind: swim.MsgSync, From: seed, To: a.Self()}
		for i := range n {
			x := swim.Node{ID: swim.ID(fmt.Sprintf("x%d", i)), Addr: fmt.Sprintf("127.0.0.%d:7946", 10+i)}
			pk.Updates = append(pk.Updates, swim.Update{Kind: swim.UpdateAlive, Node: x, From: x.ID, Incarnation: 1})
		}
		return frame(pk)
	}
	tooLong := binary.BigEndian.AppendUint32(nil, uint32(a.codec.MaxPacketSize()+1))
	for _, tc := range []struct {
		name                        string
		answer                      []byte
		oversize, garbage, answered uint64
	}{
		{"a view within the cap", view(2), 0, 0, 1},
		{"a view over the cap", view(3), 1, 0, 0},
		{"a frame too long", tooLong, 1, 0, 0},
		{"a ping", frame(swim.Packet{Kind: swim.MsgPing, From: seed, To: a.Self(), Ping: swim.Ping{Seq: 1}}), 0, 1, 0},
	} {
		before := a.Stats()
		done := make(chan error, 1)
		go func() {
			c, err := l.Accept()
			if err != nil {
				done <- err
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := transport.ReadFrame(c, 1<<16); err != nil {
				done <- err
				return
			}
			_, err = c.Write(tc.answer)
			done <- err
		}()
		join := swim.Packet{Kind: swim.MsgJoin, From: a.Self(), To: swim.Node{Addr: seed.Addr},
			Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: a.Self(), From: a.Self().ID, Incarnation: 1}}}
		require.NoError(t, a.writeView(context.Background(), to, []swim.Packet{join}, false), tc.name)
		require.NoError(t, <-done, tc.name)
		st := a.Stats()
		assert.Equal(t, tc.oversize, st.StreamOversize-before.StreamOversize, "%s: StreamOversize", tc.name)
		assert.Equal(t, tc.garbage, st.StreamDecodeErrors-before.StreamDecodeErrors, "%s: StreamDecodeErrors", tc.name)
		assert.Equal(t, tc.answered, st.StreamJoinAnswers-before.StreamJoinAnswers, "%s: StreamJoinAnswers", tc.name)
	}
}
