package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// With BlockingDelivery and BlockingMessages, a subscriber with a
// one-slot channel that reads slowly still gets every event and every
// message of a member, and nothing is counted dropped; without them, the
// same subscriber loses some (TestSlowSubscriberDropsEvents).
func TestBlockingDeliveryLosesNothing(t *testing.T) {
	as := group(t, 2, Config{Plain: true, BlockingDelivery: true, BlockingMessages: true})
	msgs, cancelMsgs := as[1].Receive(1)
	defer cancelMsgs()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const n = 20
	for i := range n {
		require.NoError(t, as[0].SendTo(ctx, as[1].Self().ID, []byte{byte(i)}))
	}
	for i := range n {
		select {
		case m := <-msgs:
			assert.Equal(t, []byte{byte(i)}, m.Data)
		case <-ctx.Done():
			t.Fatalf("message %d of %d never came", i, n)
		}
		time.Sleep(5 * time.Millisecond) // slower than the sender
	}
	assert.Zero(t, as[1].Stats().MessagesDropped)

	ev, cancelEv := as[0].Subscribe(1)
	defer cancelEv()
	third := start(t, Config{Plain: true, BlockingDelivery: true})
	require.NoError(t, third.Join(ctx, as[0].Self().Addr))
	require.NoError(t, third.Shutdown())
	var kinds []swim.EventKind
	for len(kinds) == 0 || kinds[len(kinds)-1] != swim.EventDead {
		select {
		case e := <-ev:
			if e.Node.ID == third.Self().ID {
				kinds = append(kinds, e.Kind)
			}
			time.Sleep(20 * time.Millisecond)
		case <-ctx.Done():
			t.Fatalf("events seen: %v", kinds)
		}
	}
	assert.Equal(t, swim.EventJoin, kinds[0], "%v", kinds)
	assert.Zero(t, as[0].Stats().EventsDropped)
}

// With BlockingDelivery and a subscriber that never reads, Leave (Close)
// and cancelling Start's context still stop the agent: once it leaves,
// deliveries stop waiting, so that Close never waits forever.
func TestLeaveFreesBlockedDelivery(t *testing.T) {
	for _, how := range []string{"Close", "cancel"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := Config{Plain: true, BlockingDelivery: true, Protocol: fast(), LeaveTimeout: new(200 * time.Millisecond)}
			a, err := Start(ctx, cfg)
			require.NoError(t, err)
			defer func() { _ = a.Shutdown() }()
			b := start(t, Config{Plain: true})
			_, unsub := a.Subscribe(1) // never read
			defer unsub()
			join(t, b, a)
			require.NoError(t, b.Shutdown()) // suspect, then dead: more events than the buffer
			require.Eventually(t, a.sub.waiting.Load, 10*time.Second, 5*time.Millisecond, "the agent never blocked on the full channel")
			done := make(chan struct{})
			go func() {
				if how == "Close" {
					_ = a.Close()
				} else {
					cancel()
					<-a.Done()
				}
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s did not stop an agent blocked on a subscriber", how)
			}
		})
	}
}

// With BlockingDelivery and a subscriber that stopped reading, a Join
// still returns once its context ends, though the agent is blocked on
// the subscriber and cannot report what the join heard.
func TestJoinReturnsWhileDeliveryBlocked(t *testing.T) {
	as := group(t, 3, Config{Plain: true})
	a, err := Start(context.Background(), Config{Plain: true, BlockingDelivery: true, Protocol: fast(), LeaveTimeout: new(time.Duration)})
	require.NoError(t, err)
	defer func() { _ = a.Shutdown() }()
	_, unsub := a.Subscribe(1) // never read: the view's three join events block the agent
	defer unsub()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Join(ctx, as[0].Self().Addr) }()
	select {
	case err := <-done:
		t.Logf("Join: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Join did not return after its context ended")
	}
}

// A huge buffer asked of Subscribe or Receive is bounded: Go allocates a
// channel's buffer at once, and 2^31 entries ended the process with a
// fatal out-of-memory error.
func TestSubscribeBufferBounded(t *testing.T) {
	a := start(t, Config{})
	ev, cancelEv := a.Subscribe(1 << 31)
	defer cancelEv()
	assert.Equal(t, MaxSubscribeBuffer, cap(ev))
	msgs, cancelMsgs := a.Receive(1 << 31)
	defer cancelMsgs()
	assert.Equal(t, MaxSubscribeBuffer, cap(msgs))
	small, cancelSmall := a.Subscribe(3)
	defer cancelSmall()
	assert.Equal(t, 3, cap(small))
}

// With BlockingDelivery, the subscriber the agent waits for may, before it
// reads again, call Subscribe or Receive, or cancel another of its
// subscriptions: the call returns while the agent still waits, and the new
// subscription gets what comes later, the cancelled one is closed. These
// calls used to take the lock the blocked delivery held, so the agent and
// its subscriber waited for each other, and the group declared the agent
// dead (user37 F3).
func TestSubscribeFromBlockedSubscriber(t *testing.T) {
	for _, call := range []string{"Subscribe", "Receive", "cancel other"} {
		t.Run(call, func(t *testing.T) {
			a := start(t, Config{Plain: true, BlockingDelivery: true})
			msgs, cancelMsgs := a.Receive(1)
			defer cancelMsgs()
			ev, cancelEv := a.Subscribe(1) // not read until the call below returns
			defer cancelEv()
			b := start(t, Config{Plain: true})
			join(t, b, a)
			c := start(t, Config{Plain: true})
			join(t, c, a)
			require.Eventually(t, a.sub.waiting.Load, 10*time.Second, 5*time.Millisecond, "the agent never waited for the full channel")

			var newEv <-chan swim.Event
			var newMsgs <-chan swim.Message
			cancelNew := func() {}
			returned := make(chan bool, 1) // whether the agent still waited then
			go func() {
				switch call {
				case "Subscribe":
					newEv, cancelNew = a.Subscribe(64)
				case "Receive":
					newMsgs, cancelNew = a.Receive(64)
				case "cancel other":
					cancelMsgs()
				}
				returned <- a.sub.waiting.Load()
			}()
			select {
			case waited := <-returned:
				assert.True(t, waited, "nothing read the full channel, so the agent still waits")
			case <-time.After(10 * time.Second):
				t.Fatalf("%s, called by the subscriber the agent waits for, never returned", call)
			}
			defer cancelNew()
			go func() { // the subscriber reads again, until cancelEv
				for range ev {
				}
			}()

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			switch call {
			case "Subscribe":
				d := start(t, Config{Plain: true})
				join(t, d, a)
				for {
					select {
					case e := <-newEv:
						if e.Kind == swim.EventJoin && e.Node.ID == d.Self().ID {
							return
						}
					case <-ctx.Done():
						t.Fatal("the subscription added during the wait never got d's join")
					}
				}
			case "Receive":
				require.NoError(t, b.SendTo(ctx, a.Self().ID, []byte("later")))
				select {
				case m := <-newMsgs:
					assert.Equal(t, "later", string(m.Data))
				case <-ctx.Done():
					t.Fatal("the subscription added during the wait never got b's message")
				}
			case "cancel other":
				select {
				case _, ok := <-msgs:
					assert.False(t, ok, "the cancelled subscription's channel is closed, and got nothing")
				case <-ctx.Done():
					t.Fatal("the cancelled subscription's channel was never closed")
				}
			}
		})
	}
}

// BlockingDelivery waits for events only: a Receive channel nobody reads
// drops a stranger's flood of messages and the agent goes on probing;
// with BlockingMessages too, a stranger's direct messages (from an agent
// not in the group: FromHeldAddr false) are still dropped, while a
// member's message is waited for (user46 P5, M6: a stranger's 3,900
// messages a second to a member with BlockingDelivery and a slow reader
// had 17,829 of 19,550 inbound datagrams dropped and its probes at 40 %).
// Before, the flood's second message blocked the agent here for good.
func TestBlockingStrangerFlood(t *testing.T) {
	for _, blockMsgs := range []bool{false, true} {
		t.Run(fmt.Sprintf("BlockingMessages=%v", blockMsgs), func(t *testing.T) {
			cfgs := []Config{{Plain: true, BlockingDelivery: true, BlockingMessages: blockMsgs}, {Plain: true}, {Plain: true}}
			as := groupOf(t, cfgs)
			v := as[0]
			msgs, cancelMsgs := v.Receive(1) // not read during the flood
			defer cancelMsgs()
			stranger := start(t, Config{Plain: true})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			probes := v.Stats().Protocol.ProbesStarted
			const n = 200
			for i := range n {
				require.NoError(t, stranger.SendToAddress(ctx, v.Self().Addr, []byte{byte(i)}))
			}
			require.Eventually(t, func() bool { return v.Stats().MessagesDropped >= n/2 }, 5*time.Second, time.Millisecond,
				"a stranger's messages dropped, not waited for")
			require.Eventually(t, func() bool { return v.Stats().Protocol.ProbesStarted >= probes+3 }, 5*time.Second, time.Millisecond,
				"the flooded member probes on")
			assert.False(t, v.sub.waiting.Load())
			first := receiveOne(t, msgs)
			assert.Equal(t, stranger.Self().ID, first.From)
			assert.False(t, first.FromHeldAddr)
			if !blockMsgs {
				return
			}
			dropped := v.Stats().MessagesDropped
			require.NoError(t, as[1].SendTo(ctx, v.Self().ID, []byte("first")))
			require.NoError(t, as[1].SendTo(ctx, v.Self().ID, []byte("second")))
			require.Eventually(t, v.sub.waiting.Load, 5*time.Second, time.Millisecond, "a member's message is waited for")
			assert.Equal(t, []byte("first"), receiveOne(t, msgs).Data)
			m := receiveOne(t, msgs)
			assert.Equal(t, []byte("second"), m.Data)
			assert.True(t, m.FromHeldAddr)
			assert.Equal(t, dropped, v.Stats().MessagesDropped, "a member's messages are not dropped")
		})
	}
}
