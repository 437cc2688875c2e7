package agent

import (
	"encoding/binary"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// (atk28b) current members still take a sealed ack that names neither
// member (as members at 606b6d2..db233a9 sealed every answer to a tagged
// ping) for their probe's target (AckSender): such an ack, replayed by an
// outsider from a crashed member X's host while X's prober probes it, as
// in atk28 F2, keeps X alive. Here the acks are sealed by the test as an
// older member sealed them, with the seq of each ping to X read off the
// wire (an older member's ack of the round carries it). X must still be
// declared dead at every live member within 2 s plus 3 times the time
// without acks.
func TestSealedIDlessAcksHideNoCrash(t *testing.T) {
	var base time.Duration
	t.Run("none", func(t *testing.T) { base = idlessSealed(t, false, 10*time.Second) })
	t.Run("ID-less sealed acks", func(t *testing.T) { idlessSealed(t, true, 2*time.Second+3*base) })
}

func idlessSealed(t *testing.T, attack bool, limit time.Duration) time.Duration {
	const n = 6
	tap, wires, as, idx := tappedGroup(t, n)
	kr, err := wire.NewKeyring(testKey)
	require.NoError(t, err)
	sec := &wire.Security{Keyring: kr}
	reader, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: kr}, LocalID: as[n-1].Self().ID}) // X's: pings to X are bound to it
	require.NoError(t, err)
	periodsFrom(t, as...)(2 * n)
	x := n - 1
	xid := as[x].Self().ID
	att, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	defer att.Close()
	wires[x].down.Store(true)
	t0 := time.Now()
	var sent atomic.Int64
	defer outsider(tap, nil, func(s sniffed) {
		k, ok := idx[s.from]
		if !attack || !ok || s.to != x {
			return
		}
		p, err := reader.Decode(s.data)
		if err != nil || p.Kind != swim.MsgPing {
			return
		}
		head := binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano()))
		payload, _, err := wire.MarshalVersion(head, &swim.Packet{Kind: swim.MsgAck, From: swim.Node{ID: "o"}, Ack: swim.Ack{Seq: p.Ping.Seq, NoSenderID: true}}, 1400, 2)
		if err != nil {
			return
		}
		d, err := sec.Seal(nil, payload)
		if err == nil && att.Send(netip.MustParseAddrPort(as[k].Self().Addr), d) == nil {
			sent.Add(1)
		}
	}, nil)()
	took, ok := waitDeadAt(as[:x], xid, t0, limit)
	t.Logf("attack %v: X dead at every live member: %v after %v (limit %v); %d acks sent", attack, ok, took.Round(time.Millisecond), limit.Round(time.Millisecond), sent.Load())
	require.True(t, ok, "X, crashed, declared dead at every live member within %v", limit)
	return took
}
