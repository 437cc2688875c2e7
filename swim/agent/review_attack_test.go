package agent

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sending plain while refusing plain cuts a member off from every member
// in the same stage: turning encryption on runs AcceptPlain before
// SendPlain's end, and turning it off AcceptPlain before SendPlain's
// start. Start and the setters refuse the stage where SendPlain is on and
// AcceptPlain off, naming both.
func TestSendPlainNeedsAcceptPlain(t *testing.T) {
	_, err := Start(context.Background(), Config{Keys: [][]byte{testKey}, SendPlain: true})
	require.Error(t, err)
	assert.ErrorContains(t, err, "SendPlain")
	assert.ErrorContains(t, err, "AcceptPlain")

	a := start(t, Config{AcceptPlain: true, SendPlain: true})
	err = a.SetAcceptPlain(false)
	require.Error(t, err, "refusing plain while sending plain")
	assert.ErrorContains(t, err, "SetSendPlain(false)")
	assert.True(t, a.sec.AcceptPlain(), "a refused SetAcceptPlain changed the setting")
	require.NoError(t, a.SetSendPlain(false))
	require.NoError(t, a.SetAcceptPlain(false))
	err = a.SetSendPlain(true)
	require.Error(t, err, "sending plain while refusing plain")
	assert.ErrorContains(t, err, "SetAcceptPlain(true)")
	assert.False(t, a.sec.SendPlain())
	require.NoError(t, a.SetAcceptPlain(true), "turning encryption off, first stage")
	require.NoError(t, a.SetSendPlain(true), "turning encryption off, second stage")

	plain := start(t, Config{Plain: true})
	assert.ErrorIs(t, plain.SetSendPlain(true), ErrNoKeys)
	assert.ErrorIs(t, plain.SetAcceptPlain(false), ErrNoKeys)
}

// With BlockingDelivery and a subscriber that never reads, Leave (Close)
// and cancelling Start's context still stop the agent: once it leaves,
// deliveries no longer wait. Without that, Close waited forever.
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
			require.Eventually(t, func() bool {
				c, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
				defer stop()
				_, err := a.MembersContext(c)
				return err != nil
			}, 10*time.Second, 50*time.Millisecond, "the agent never blocked on the full channel")
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

// A join address that resolves only to this member itself is an error at
// once, not a wait for the context; a name resolving to hundreds of
// copies of one address sends one join, not hundreds.
func TestJoinAddressesSelfAndDuplicates(t *testing.T) {
	seed := start(t, Config{})
	var me netip.AddrPort
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "me.test" {
			return []netip.Addr{me.Addr()}, nil
		}
		out := make([]netip.Addr, 300)
		for i := range out {
			out[i] = netip.MustParseAddr("127.0.0.1")
		}
		return out, nil
	}
	a := start(t, Config{Resolve: resolve})
	me = netip.MustParseAddrPort(a.Self().Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t0 := time.Now()
	err := a.Join(ctx, "me.test:"+port(a))
	require.Error(t, err)
	assert.ErrorContains(t, err, "own address")
	assert.Less(t, time.Since(t0), time.Second, "Join waited instead of failing")

	out, err := ResolveAddrs(ctx, resolve, []string{"many.test:" + port(seed), seed.Self().Addr}, me.Addr())
	require.NoError(t, err)
	assert.Equal(t, []string{seed.Self().Addr}, out)
}

// A MaxReliableSize whose frames exceed MaxStreamBytes could never be
// sent nor received: Start refuses it, naming both fields.
func TestMaxReliableSizeOverStreamBudget(t *testing.T) {
	_, err := Start(context.Background(), Config{Plain: true, MaxReliableSize: 16 << 20})
	require.Error(t, err)
	assert.ErrorContains(t, err, "MaxReliableSize")
	assert.ErrorContains(t, err, "MaxStreamBytes")
	_, err = Start(context.Background(), Config{Plain: true, MaxReliableSize: 1 << 20, MaxStreamBytes: 1 << 20})
	require.Error(t, err)
	assert.ErrorContains(t, err, "MaxReliableSize")
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
