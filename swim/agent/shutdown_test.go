package agent

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// Shutdown stops a member without a leave: the others suspect it and
// declare it dead, and never see it leave.
func TestShutdownIsAFailure(t *testing.T) {
	as := group(t, 3, Config{Plain: true})
	ev, cancel := as[0].Subscribe(0)
	defer cancel()
	victim := as[2].Self().ID
	require.NoError(t, as[2].Shutdown())
	<-as[2].Done()
	assert.NoError(t, as[2].Err())
	require.NoError(t, as[2].Shutdown(), "a second Shutdown does no harm")
	suspected := false
	deadline := time.After(15 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.Node.ID != victim {
				continue
			}
			switch e.Kind {
			case swim.EventLeave:
				t.Fatal("Shutdown announced a leave")
			case swim.EventSuspect:
				suspected = true
			case swim.EventDead:
				assert.True(t, suspected, "declared dead without a suspicion first")
				return
			}
		case <-deadline:
			t.Fatal("shut-down member not declared dead within 15 s")
		}
	}
}

// Shutdown frees an agent blocked on a subscriber that stopped reading
// (Config.BlockingDelivery).
func TestShutdownFreesBlockedDelivery(t *testing.T) {
	as := group(t, 2, Config{Plain: true, BlockingDelivery: true})
	_, cancel := as[0].Subscribe(1) // never read
	defer cancel()
	require.NoError(t, as[1].Shutdown()) // suspect, then dead: two events for a buffer of one
	require.Eventually(t, as[0].sub.waiting.Load, 10*time.Second, 5*time.Millisecond, "the agent never blocked on the full channel")
	done := make(chan struct{})
	go func() { _ = as[0].Shutdown(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not free the blocked delivery")
	}
}

// The local health multiplier rises by one when this member refutes a
// suspicion of itself (Lifeguard), and stays there while no probe runs
// (a member alone probes nobody, so nothing lowers it). The pause guard
// is off: a loaded machine's late tick would raise it too. The suspicion
// comes from a member held alive at the address it sends from (an
// accusation from anyone else is refuted uncharged: swim,
// chargeRefutation), which leaves in the same packet, so that the member
// is alone again.
func TestLocalHealthMultiplierRisesOnRefutation(t *testing.T) {
	cfg := Config{Plain: true, Protocol: fast()}
	cfg.Protocol.PauseGuard = new(time.Duration(0))
	a := start(t, cfg)
	assert.Equal(t, 0, a.LocalHealthMultiplier())
	px := newPlainPeer(t)
	x := swim.Node{ID: "x", Addr: px.addr()}
	px.send(t, a, &swim.Packet{Kind: swim.MsgSync, From: x, To: a.Self(),
		Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: x, From: "x"}}})
	require.Eventually(t, func() bool { return len(a.Members()) == 2 }, 3*time.Second, 10*time.Millisecond)
	px.send(t, a, &swim.Packet{Kind: swim.MsgSync, From: x, To: a.Self(),
		Updates: []swim.Update{{Kind: swim.UpdateSuspect, Node: a.Self(), From: "x"}, {Kind: swim.UpdateDead, Node: x, From: "x"}}})
	require.Eventually(t, func() bool { return a.LocalHealthMultiplier() == 1 }, 3*time.Second, 10*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // three protocol periods
	assert.Equal(t, 1, a.LocalHealthMultiplier())
	p := start(t, Config{Plain: true, Protocol: swim.Config{Mode: swim.ModeSWIM, ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond}})
	newPlainPeer(t).send(t, p, &swim.Packet{Kind: swim.MsgSync, From: swim.Node{ID: "x", Addr: "127.0.0.1:9"}, To: p.Self(),
		Updates: []swim.Update{{Kind: swim.UpdateSuspect, Node: p.Self(), From: "x"}}})
	require.Eventually(t, func() bool { return p.Stats().Protocol.Refutations > 0 }, 3*time.Second, 10*time.Millisecond)
	assert.Equal(t, 0, p.LocalHealthMultiplier(), "plain SWIM has no local health")
}

// Shutdown and Leave called at once, and Shutdown twice, all return once
// the agent stopped.
func TestShutdownConcurrentWithLeave(t *testing.T) {
	for range 5 {
		a := start(t, Config{Plain: true})
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					assert.NoError(t, a.Shutdown())
				} else {
					assert.NoError(t, a.Leave(context.Background()))
				}
			}()
		}
		wg.Wait()
		<-a.Done()
	}
}
