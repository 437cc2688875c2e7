package agent

import (
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
func TestForgedAcksFromOtherHostHideNoCrash(t *testing.T) {
	for _, noID := range []bool{false, true} {
		t.Run(map[bool]string{false: "named", true: "without ID"}[noID], func(t *testing.T) { forgedAcksFromOtherHost(t, noID) })
	}
}

func forgedAcksFromOtherHost(t *testing.T, noID bool) {
	const n, width = 8, 6
	as := group(t, n, Config{Plain: true, Protocol: fast()})
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	att := newAttackerOn(t, codec, "insider", "127.0.0.2")
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
						sendPk(m.Self(), swim.Packet{Kind: swim.MsgAck, From: r, Ack: swim.Ack{Seq: (cur + d - width/2) << 1, NoSenderID: noID}})
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
