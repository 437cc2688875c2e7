package agent

import (
	"bytes"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// An insider on another host (127.0.0.2 here; the group on 127.0.0.1)
// learns the group's round from the probes it receives (a probe's number
// is twice its round) and, once a member R is shut down, sends the others
// acks in R's name with the numbers of the current rounds, every 10 ms.
// Such an ack comes from another host than R is held at, so the agent
// steps it with StepFromOtherSource, and it answers no probe (swim: onAck,
// Stats.AcksFromOtherHost): R is declared dead at every other member as
// without the forgery. Before, these acks kept R alive at every member for
// as long as they came (issue 27, user38 F1: 60 s and more). The same
// holds for forged acks that leave out their sender's ID
// (swim.Ack.NoSenderID): the agent takes R's ID from the probe ping the
// number matches, then finds the ack came from another host than R's.
//
// The same holds when the insider writes its own address into the acks as
// their sender's (format 1 writes a sender's address in acks, and a
// format-2 decoder reads one wherever it is): the datagram comes from the
// address the ack claims, so the agent passes it to Step, but the claimed
// address is not the one held for R, and such an ack is not R's (atk28:
// found against 3d628db and 32d0225, R stayed alive at every member for
// the 20 s; swim's TestAckClaimingAnotherAddressAnswersNothing).
func TestForgedAcksFromOtherHostHideNoCrash(t *testing.T) {
	for _, noID := range []bool{false, true} {
		for _, own := range []bool{false, true} {
			name := map[bool]string{false: "named", true: "without ID"}[noID] + map[bool]string{false: "", true: ", own address"}[own]
			t.Run(name, func(t *testing.T) { forgedAcksFromOtherHost(t, noID, own) })
		}
	}
}

// ownAddrAck is the plain datagram of a format-2 ack from addr, without
// its sender's ID, with number seq: as codec writes one, with the
// sender's address spliced in (no encoder writes one in an ack); nil if
// the codec wrote something else. Any goroutine may call it.
func ownAddrAck(codec *wire.Codec, to swim.Node, addr string, seq uint32) []byte {
	data, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgAck, To: to, Ack: swim.Ack{Seq: seq, NoSenderID: true}})
	head := []byte{2, byte(swim.MsgAck), 0, 0}
	i := bytes.Index(data, head)
	if err != nil || i < 0 {
		return nil
	}
	out := append(slices.Clone(data[:i+3]), byte(len(addr)))
	out = append(out, addr...)
	return append(out, data[i+4:]...)
}

func forgedAcksFromOtherHost(t *testing.T, noID, own bool) {
	const n, width = 8, 6
	as := group(t, n, Config{Plain: true, Protocol: fast()})
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	att := newAttackerOn(t, codec, "insider", "127.0.0.2")
	v1, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}, Version: 1}) // writes the sender's address
	require.NoError(t, err)
	al := swim.Update{Kind: swim.UpdateAlive, Node: att.self, From: att.self.ID, Incarnation: 1}
	for _, m := range as {
		att.send(t, m.Self(), swim.Packet{Kind: swim.MsgGossip, Updates: []swim.Update{al}})
	}
	var round atomic.Uint32
	var lastAt atomic.Int64
	var mu sync.Mutex // att.UDP sends from two goroutines
	var sent atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(stop); wg.Wait() })
	sendPk := func(to swim.Node, pk swim.Packet) {
		mu.Lock()
		if n, err := att.write(to, pk); err == nil {
			sent.Add(int64(n))
		}
		mu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case p := <-att.Packets():
				pk, err := codec.Decode(p.Data)
				if err != nil || pk.Kind != swim.MsgPing {
					continue
				}
				if pk.Ping.Seq&1 == 0 && pk.Ping.Seq>>1 > round.Load() {
					round.Store(pk.Ping.Seq >> 1)
					lastAt.Store(time.Now().UnixNano())
				}
				sendPk(pk.From, swim.Packet{Kind: swim.MsgAck, Ack: swim.Ack{Seq: pk.Ping.Seq}})
			}
		}
	}()
	require.Eventually(t, func() bool { return round.Load() > 0 }, 30*time.Second, 10*time.Millisecond)
	periodsFrom(t, as...)(2 * n)
	victim := as[n-1]
	r := victim.Self()
	t0 := time.Now()
	require.NoError(t, victim.Shutdown())
	{
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				// the round last heard, plus the periods since
				cur := round.Load() + uint32(time.Since(time.Unix(0, lastAt.Load()))/(100*time.Millisecond))
				for _, m := range as[:n-1] {
					for d := uint32(0); d < width; d++ {
						seq := (cur + d - width/2) << 1
						switch {
						case own && noID:
							mu.Lock()
							if data := ownAddrAck(codec, m.Self(), att.self.Addr, seq); data != nil && att.Send(netip.MustParseAddrPort(m.Self().Addr), data) == nil {
								sent.Add(int64(len(data)))
							}
							mu.Unlock()
						case own:
							data, dst, err := encodeTo(v1, m.Self(), swim.Packet{Kind: swim.MsgAck, From: swim.Node{ID: r.ID, Addr: att.self.Addr}, Ack: swim.Ack{Seq: seq}})
							if err == nil {
								mu.Lock()
								if att.Send(dst, data) == nil {
									sent.Add(int64(len(data)))
								}
								mu.Unlock()
							}
						default:
							sendPk(m.Self(), swim.Packet{Kind: swim.MsgAck, From: r, Ack: swim.Ack{Seq: seq, NoSenderID: noID}})
						}
					}
				}
			}
		}()
	}
	dead := func() bool {
		for _, a := range as[:n-1] {
			if !slices.ContainsFunc(a.Members(), func(m Member) bool { return m.Node.ID == r.ID && m.State == swim.StateDead }) {
				return false
			}
		}
		return true
	}
	require.Eventually(t, dead, 20*time.Second, 5*time.Millisecond, "R declared dead at every other member")
	forged := 0
	for _, a := range as[:n-1] {
		forged += a.Stats().Protocol.AcksFromOtherHost
	}
	t.Logf("R dead at all others after %v; acks from another host ignored: %d; the insider sent %d B",
		time.Since(t0).Round(time.Millisecond), forged, sent.Load())
	assert.Positive(t, forged, "the forged acks arrived and were ignored")
}
