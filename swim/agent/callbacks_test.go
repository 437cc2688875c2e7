package agent

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/swim"
)

// noRTT is an RTT estimator that never gives a timeout (the probe timeout
// stays Config.ProbeTimeout).
type noRTT struct{}

func (noRTT) Observe(time.Duration)          {}
func (noRTT) Timeout() (time.Duration, bool) { return 0, false }

// returnsWithin fails the test when f has not returned within d: a check
// that a call does not hang (it returns at once when it works).
func returnsWithin(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s had not returned after %v", what, d)
	}
}

// A callback may call Members, as memberlist's delegates may: before, the
// call waited for the agent's goroutine, which was running the callback,
// so the agent stopped for good, its Join failed and Shutdown never
// returned (issue 27, user31 F2).
func TestCallbackCallsMembers(t *testing.T) {
	for _, where := range []string{"MergeRemoteState", "LocalState", "AliveFilter", "MergeFilter", "PingComplete", "AckPayload", "ValidAddr",
		"PeerDetector", "RTTEstimator"} {
		t.Run(where, func(t *testing.T) {
			var self atomic.Pointer[Agent]
			var mu sync.Mutex
			var views [][]Member
			reenter := func() {
				if a := self.Load(); a != nil {
					ms := a.Members()
					mu.Lock()
					views = append(views, ms)
					mu.Unlock()
				}
			}
			cfg := Config{Plain: true, Protocol: fast(), LeaveTimeout: new(time.Duration)}
			switch where {
			case "MergeRemoteState":
				cfg.MergeRemoteState = func(swim.Node, []byte, bool) { reenter() }
				cfg.LocalState = func(bool) []byte { return []byte("s") }
			case "LocalState":
				cfg.LocalState = func(bool) []byte { reenter(); return []byte("s") }
			case "AliveFilter":
				cfg.Protocol.AliveFilter = func(swim.Update) error { reenter(); return nil }
			case "MergeFilter":
				cfg.Protocol.MergeFilter = func(swim.Node, []swim.Update) error { reenter(); return nil }
			case "PingComplete":
				cfg.Protocol.PingComplete = func(swim.Node, time.Duration, []byte) { reenter() }
			case "AckPayload":
				cfg.Protocol.AckPayload = func() []byte { reenter(); return nil }
			case "ValidAddr":
				cfg.Protocol.ValidAddr = func(string) error { reenter(); return nil }
			case "PeerDetector":
				cfg.Protocol.PeerDetector = func() (detector.Detector, error) {
					reenter()
					return swim.DefaultPeerDetectorFor(cfg.Protocol.ProbeInterval)()
				}
			case "RTTEstimator":
				cfg.Protocol.RTTEstimator = func() (swim.RTTEstimator, error) {
					reenter()
					return noRTT{}, nil
				}
			}
			a, err := Start(context.Background(), cfg)
			require.NoError(t, err)
			self.Store(a)
			t.Cleanup(func() { _ = a.Shutdown() })
			other := start(t, Config{Plain: true, LocalState: func(bool) []byte { return []byte("o") }})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, a.Join(ctx, other.Self().Addr))
			// The other member joins back, so that every callback runs:
			// its view answers (LocalState), its pings get acks (AckPayload).
			require.NoError(t, other.Join(ctx, a.Self().Addr))
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(views) > 0
			}, 10*time.Second, 5*time.Millisecond, "the callback ran")
			mu.Lock()
			v := views[0]
			mu.Unlock()
			require.NotEmpty(t, v, "Members from the callback")
			assert.True(t, v[0].Self)
			assert.Equal(t, a.Self(), v[0].Node)
			ms, err := a.MembersContext(ctx)
			require.NoError(t, err, "the agent still serves calls")
			assert.Len(t, ms, 2)
			returnsWithin(t, 10*time.Second, "Shutdown", func() { assert.NoError(t, a.Shutdown()) })
		})
	}
}

// The methods that change the state or send fail at once from a callback
// with ErrInCallback, naming the method; Members works there.
func TestCallbackCallsMutators(t *testing.T) {
	var self atomic.Pointer[Agent]
	errs := make(chan map[string]error, 1)
	cfg := Config{Plain: true, Protocol: fast(), LeaveTimeout: new(time.Duration)}
	cfg.Protocol.AliveFilter = func(swim.Update) error {
		a := self.Load()
		if a == nil {
			return nil
		}
		ctx := context.Background()
		got := map[string]error{
			"Join":          a.Join(ctx, "127.0.0.1:9"),
			"SetMeta":       a.SetMeta(ctx, []byte("m")),
			"Broadcast":     a.Broadcast(ctx, "", []byte("b")),
			"SendTo":        a.SendTo(ctx, "x", []byte("d")),
			"SendToAddress": a.SendToAddress(ctx, "127.0.0.1:9", []byte("d")),
			"SendReliable":  a.SendReliable(ctx, "x", []byte("d")),
		}
		select {
		case errs <- got:
		default:
		}
		return nil
	}
	a, err := Start(context.Background(), cfg)
	require.NoError(t, err)
	self.Store(a)
	t.Cleanup(func() { _ = a.Shutdown() })
	other := start(t, Config{Plain: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, a.Join(ctx, other.Self().Addr))
	var got map[string]error
	select {
	case got = <-errs:
	case <-ctx.Done():
		t.Fatal("AliveFilter never ran")
	}
	for method, err := range got {
		assert.ErrorIs(t, err, ErrInCallback, method)
		assert.ErrorContains(t, err, method)
	}
	assert.Len(t, got, 6)
	assert.NoError(t, a.SetMeta(ctx, []byte("m")), "outside the callback")
}

// Close and Shutdown called from a callback start the stop and return
// ErrInCallback at once; the agent stops when the callback returns.
// Before, Close waited for the agent's goroutine, which waited for the
// callback: neither ever returned (user31 F2).
func TestCallbackStopsAgent(t *testing.T) {
	for _, how := range []string{"Close", "Shutdown", "Leave"} {
		t.Run(how, func(t *testing.T) {
			var self atomic.Pointer[Agent]
			returned := make(chan error, 1)
			cfg := Config{Plain: true, Protocol: fast(), LeaveTimeout: new(100 * time.Millisecond)}
			cfg.Protocol.AliveFilter = func(swim.Update) error {
				if a := self.Swap(nil); a != nil {
					switch how {
					case "Close":
						returned <- a.Close()
					case "Shutdown":
						returned <- a.Shutdown()
					case "Leave":
						returned <- a.Leave(context.Background())
					}
				}
				return nil
			}
			a, err := Start(context.Background(), cfg)
			require.NoError(t, err)
			t.Cleanup(func() { _ = a.Shutdown() })
			self.Store(a)
			other := start(t, Config{Plain: true})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = a.Join(ctx, other.Self().Addr) // may end with ErrStopped
			select {
			case err := <-returned:
				assert.ErrorIs(t, err, ErrInCallback)
				assert.ErrorContains(t, err, how)
			case <-ctx.Done():
				t.Fatalf("%s from the callback had not returned", how)
			}
			select {
			case <-a.Done():
			case <-ctx.Done():
				t.Fatal("the agent did not stop after the callback returned")
			}
			assert.NoError(t, a.Shutdown(), "outside a callback it waits, and the agent has stopped")
		})
	}
}

// A callback blocked in an agent method that waits for the agent's
// goroutine cannot happen any more (ErrInCallback), but a call from
// another goroutine waiting for an agent stuck elsewhere must let
// Shutdown return: call stops waiting when Shutdown is called.
func TestCallReturnsOnShutdown(t *testing.T) {
	release := make(chan struct{})
	var blocked atomic.Bool
	cfg := Config{Plain: true, Protocol: fast(), LeaveTimeout: new(time.Duration)}
	cfg.Protocol.AliveFilter = func(swim.Update) error {
		if blocked.CompareAndSwap(false, true) {
			<-release // a callback that blocks, against the rule
		}
		return nil
	}
	a, err := Start(context.Background(), cfg)
	require.NoError(t, err)
	other := start(t, Config{Plain: true})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_ = a.Join(ctx, other.Self().Addr)
	}()
	require.Eventually(t, blocked.Load, 10*time.Second, 5*time.Millisecond)
	metaErr := make(chan error, 1)
	go func() { metaErr <- a.SetMeta(context.Background(), []byte("m")) }()
	shut := make(chan struct{})
	go func() { _ = a.Shutdown(); close(shut) }()
	select {
	case err := <-metaErr:
		assert.ErrorIs(t, err, ErrStopped)
	case <-time.After(10 * time.Second):
		t.Fatal("SetMeta waiting for a stuck agent did not return on Shutdown")
	}
	close(release)
	returnsWithin(t, 10*time.Second, "Shutdown", func() { <-shut })
}

// With BlockingDelivery, a subscriber that calls Members for each event
// it reads (buffer 1) is served while the agent waits for it: before, the
// agent waited for the subscriber and the subscriber for the agent, and
// no event was handled (user31 F2; memberlist's ChannelEventDelegate
// deadlocks so).
func TestBlockingSubscriberCallsMembers(t *testing.T) {
	a := start(t, Config{Plain: true, BlockingDelivery: true})
	ch, cancel := a.Subscribe(1)
	defer cancel()
	var handled atomic.Int64
	var mu sync.Mutex
	var errs []error
	go func() {
		for range ch {
			ctx, c := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := a.MembersContext(ctx)
			c()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			handled.Add(1)
		}
	}()
	others := group(t, 3, Config{Plain: true})
	ctx, c := context.WithTimeout(context.Background(), 10*time.Second)
	defer c()
	require.NoError(t, a.Join(ctx, others[0].Self().Addr))
	require.Eventually(t, func() bool { return handled.Load() >= 3 }, 10*time.Second, 5*time.Millisecond,
		"a join event for each of the 3 others")
	mu.Lock()
	defer mu.Unlock()
	for _, err := range errs {
		assert.False(t, errors.Is(err, context.DeadlineExceeded), "Members from the subscriber waited out its context")
		assert.NoError(t, err)
	}
}
