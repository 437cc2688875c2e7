package agent

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// countEvents drains ch and counts its events about id by kind.
func countEvents(ch <-chan swim.Event, id swim.ID) map[swim.EventKind]int {
	n := map[swim.EventKind]int{}
	for {
		select {
		case e := <-ch:
			if e.Node.ID == id {
				n[e.Kind]++
			}
		default:
			return n
		}
	}
}

// TestStrangerDeadFloodNoDeath (issue 27, user46 M3): a stranger (its own
// socket, not a member, no spoofing) sends Dead(v, v's current
// incarnation) to the other members of a signed plain group every 100 ms
// for 2 s. Each Dead is hearsay at its receiver (swim: hearsay), a
// suspicion that v refutes: no member's application sees v die. A real
// crash of another member 0.5 s into the flood is still declared by every
// member. Before, each member emitted 43-48 EventDead and as many
// EventJoin for v in 5 s (signing does not cover Dead).
func TestStrangerDeadFloodNoDeath(t *testing.T) {
	const n = 5
	cfgs := make([]Config, n)
	for i := range cfgs {
		cfgs[i] = Config{Plain: true, Protocol: fast()}
		cfgs[i].Protocol.SigningKey = signingKey(i + 1)
	}
	as := groupOf(t, cfgs)
	v, crashed := as[0], as[n-1]
	evs := make([]<-chan swim.Event, n-1)
	for i, a := range as[:n-1] {
		evs[i], _ = a.Subscribe(4096)
	}
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	stranger := newAttacker(t, codec, "stranger")

	var declared sync.Map // ID -> time after the crash
	t0 := time.Now()
	var crashAt time.Time
	forged := 0
	for k := 0; time.Since(t0) < 2*time.Second; k++ {
		inc := v.Members()[0].Incarnation
		for _, a := range as[1:] {
			stranger.send(t, a.Self(), swim.Packet{Kind: swim.MsgGossip,
				Updates: []swim.Update{{Kind: swim.UpdateDead, Node: v.Self(), Incarnation: inc, From: stranger.self.ID}}})
			forged++
		}
		if k == 5 {
			crashAt = time.Now()
			require.NoError(t, crashed.Shutdown())
		}
		if !crashAt.IsZero() {
			for _, a := range as[:n-1] {
				if m, ok := member(a, crashed.Self().ID); ok && m.State == swim.StateDead {
					declared.LoadOrStore(a.Self().ID, time.Since(crashAt))
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.Eventually(t, func() bool {
		all := true
		for _, a := range as[:n-1] {
			if m, ok := member(a, crashed.Self().ID); ok && m.State == swim.StateDead {
				declared.LoadOrStore(a.Self().ID, time.Since(crashAt))
			} else {
				all = false
			}
		}
		return all
	}, 10*time.Second, 5*time.Millisecond, "the crash declared by every member")
	require.Eventually(t, func() bool {
		for _, a := range as[1 : n-1] {
			if m, ok := member(a, v.Self().ID); !ok || m.State != swim.StateAlive {
				return false
			}
		}
		return true
	}, 5*time.Second, 10*time.Millisecond, "v alive at every member once the flood stops")
	var times []time.Duration
	for _, a := range as[:n-1] {
		d, _ := declared.Load(a.Self().ID)
		times = append(times, d.(time.Duration).Round(time.Millisecond))
	}
	suspicions := 0
	for i, a := range as[1 : n-1] {
		c := countEvents(evs[i+1], v.Self().ID)
		t.Logf("%s: events about v: %v; AccusationsUnvouched %d", a.Self().ID, c, a.Stats().Protocol.AccusationsUnvouched)
		assert.Zero(t, c[swim.EventDead], "%s: v declared dead on a stranger's word", a.Self().ID)
		assert.Zero(t, c[swim.EventJoin], "%s: v rejoined", a.Self().ID)
		suspicions += c[swim.EventSuspect]
	}
	t.Logf("%d forged declarations; v refuted %d times; the crash declared after %v (v, then the others)", forged, v.Stats().Protocol.Refutations, times)
	assert.Positive(t, suspicions, "the flood reached the members")
}

// TestStrangerBroadcastFloodKeepsOwn (issue 27, user46 M1): while a
// stranger floods as[1] with MsgGossip datagrams each carrying 45
// application broadcasts from ever new origins (about 11,000 a second),
// as[1] broadcasts 20 writes 100 ms apart. Every other member receives
// all 20: a stranger's broadcasts are not relayed (from made-up
// origins, not even delivered: BroadcastsUnvouched), and as[1]'s own are
// never dropped for relayed ones. The insider
// variant: the flooder joins first (a member held alive at its address,
// acking pings), so as[1] relays its broadcasts, and its own still go
// first. Before, the four others got 0-6 of the 20 (user46's four runs).
func TestStrangerBroadcastFloodKeepsOwn(t *testing.T) {
	for _, insider := range []bool{false, true} {
		t.Run(fmt.Sprintf("insider=%v", insider), func(t *testing.T) {
			if insider && testing.Short() {
				t.Skip("3.5 s; TestLiveOriginsBeforeMadeUp (swim) covers the order")
			}
			const n, writes = 5, 20
			as := group(t, n, Config{Plain: true, Protocol: fast()})
			src := as[1]
			recv := make([]<-chan swim.Message, n)
			for i, a := range as {
				recv[i], _ = a.Receive(16384)
			}
			codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
			require.NoError(t, err)
			flooder := newAttacker(t, codec, "flooder")
			if insider {
				flooder.send(t, src.Self(), swim.Packet{Kind: swim.MsgJoin, Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: flooder.self, From: flooder.self.ID}}})
				require.Eventually(t, func() bool {
					flooder.answer(t)
					m, ok := member(src, flooder.self.ID)
					return ok && m.State == swim.StateAlive
				}, 5*time.Second, 5*time.Millisecond, "the flooder is a member at as[1]")
			}
			stop := make(chan struct{})
			done := make(chan struct{})
			var mu sync.Mutex
			sent := 0
			go func() {
				defer close(done)
				k := uint64(0)
				for {
					select {
					case <-stop:
						return
					default:
					}
					var bs []swim.Broadcast
					for range 45 {
						k++
						bs = append(bs, swim.Broadcast{Origin: swim.ID(fmt.Sprintf("o%d", k%5000)), Seq: k, Data: []byte("forged")})
					}
					mu.Lock()
					if _, err := flooder.write(src.Self(), swim.Packet{Kind: swim.MsgGossip, Broadcasts: bs}); err == nil {
						sent++
					}
					for len(flooder.Packets()) > 0 { // ack as[1]'s pings: an insider stays alive
						p := <-flooder.Packets()
						if pk, err := codec.Decode(p.Data); err == nil && pk.Kind == swim.MsgPing {
							_, _ = flooder.write(pk.From, swim.Packet{Kind: swim.MsgAck, Ack: swim.Ack{Seq: pk.Ping.Seq}})
						}
					}
					mu.Unlock()
					time.Sleep(4 * time.Millisecond)
				}
			}()
			time.Sleep(300 * time.Millisecond)
			for i := range writes {
				require.NoError(t, src.Broadcast(t.Context(), fmt.Sprintf("k%d", i), fmt.Appendf(nil, "genuine-%d", i)))
				time.Sleep(100 * time.Millisecond)
			}
			got := make([]map[string]bool, n)
			forged := make([]int, n)
			complete := func() bool {
				all := true
				for i := range as {
					if i == 1 {
						continue
					}
					if got[i] == nil {
						got[i] = map[string]bool{}
					}
				drain:
					for {
						select {
						case m := <-recv[i]:
							if m.From == src.Self().ID {
								got[i][string(m.Data)] = true
							} else {
								forged[i]++
							}
						default:
							break drain
						}
					}
					all = all && len(got[i]) == writes
				}
				return all
			}
			ok := assert.Eventually(t, complete, 5*time.Second, 20*time.Millisecond, "every write everywhere")
			close(stop)
			<-done
			ps := src.Stats().Protocol
			for i, a := range as {
				if i != 1 {
					t.Logf("%s: %d of %d writes, %d forged", a.Self().ID, len(got[i]), writes, forged[i])
				}
			}
			mu.Lock()
			t.Logf("%d flood datagrams; as[1]: received %d, dropped %d (own %d), unrelayed %d", sent, ps.BroadcastsReceived, ps.BroadcastsDropped, ps.BroadcastsOwnDropped, ps.BroadcastsUnrelayed)
			mu.Unlock()
			assert.Zero(t, ps.BroadcastsOwnDropped)
			if !ok {
				return
			}
			if insider {
				assert.Positive(t, ps.BroadcastsDropped, "the insider's broadcasts were relayed and filled the queue")
			} else {
				assert.Positive(t, ps.BroadcastsUnvouched, "the stranger's broadcasts from made-up origins were dropped, not delivered")
				assert.Zero(t, ps.BroadcastsDropped)
			}
		})
	}
}
