package agent

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A name that resolves only to addresses of the other family, or a literal
// address of it, fails at once with an error naming both families: before,
// the name's records were all kept, every send failed, and Join waited out
// its context saying only "context deadline exceeded" (issue 27, user31
// F8, F10).
func TestJoinOtherFamilyFailsFast(t *testing.T) {
	only4 := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("::ffff:127.0.0.1")}, nil // as a resolver may give it
	}
	only6 := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("::1")}, nil
	}
	ctx := context.Background()
	_, err := ResolveAddrs(ctx, only4, []string{"localhost:7946"}, netip.MustParseAddr("::1"))
	assert.EqualError(t, err, `join address "localhost:7946": "localhost" resolved only to IPv4 addresses [127.0.0.1], and this member is at IPv6 address ::1`)
	_, err = ResolveAddrs(ctx, only6, []string{"localhost:7946"}, netip.MustParseAddr("127.0.0.1"))
	assert.ErrorContains(t, err, `resolved only to IPv6 addresses [::1], and this member is at IPv4 address 127.0.0.1`)
	_, err = ResolveAddrs(ctx, nil, []string{"[fe80::1%lo]:7946"}, netip.MustParseAddr("127.0.0.1"))
	assert.EqualError(t, err, `join address "[fe80::1%lo]:7946": an IPv6 address, and this member is at IPv4 address 127.0.0.1: `+
		`a member of one family neither reaches nor is answered from the other`)
	_, err = ResolveAddrs(ctx, nil, []string{"127.0.0.1:7946"}, netip.MustParseAddr("::1"))
	assert.ErrorContains(t, err, `an IPv4 address, and this member is at IPv6 address ::1`)
	// Another name of the right family still joins; no family keeps all.
	got, err := ResolveAddrs(ctx, func(_ context.Context, h string) ([]netip.Addr, error) {
		if h == "v6" {
			return only6(ctx, h)
		}
		return only4(ctx, h)
	}, []string{"v4:1", "v6:1"}, netip.MustParseAddr("127.0.0.1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"127.0.0.1:1"}, got)
	got, err = ResolveAddrs(ctx, only6, []string{"v6:1", "127.0.0.1:2"}, netip.Addr{})
	require.NoError(t, err)
	assert.Equal(t, []string{"[::1]:1", "127.0.0.1:2"}, got)

	// Through Join: at once, no JoinError (nothing was waited for).
	a := start(t, Config{Plain: true, Resolve: only6})
	jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = a.Join(jctx, "localhost:7946")
	require.Error(t, err)
	var je *JoinError
	assert.False(t, errors.As(err, &je), "waited for an answer: %v", err)
	assert.ErrorContains(t, err, "resolved only to IPv6 addresses")
	assert.NoError(t, jctx.Err(), "Join waited out its context")
}

// A Resolve that ignores its context does not keep Join past it: before,
// Join waited as long as the resolver (user31 F8).
func TestJoinResolveIgnoringContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stuck := func(context.Context, string) ([]netip.Addr, error) {
		<-release
		return nil, errors.New("released")
	}
	a := start(t, Config{Plain: true, Resolve: stuck})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- a.Join(ctx, "stuck.test:7946") }()
	select {
	case err := <-errc:
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "resolving")
	case <-time.After(30 * time.Second):
		t.Fatal("Join waited for a resolver that ignores its context")
	}
}
