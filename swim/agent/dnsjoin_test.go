package agent

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func port(a *Agent) string { return strconv.Itoa(int(netip.MustParseAddrPort(a.Self().Addr).Port())) }

// Join through "localhost", resolved by the system resolver.
func TestJoinThroughLocalhost(t *testing.T) {
	seed := start(t, Config{})
	joiner := start(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, joiner.Join(ctx, "localhost:"+port(seed)))
	require.Eventually(t, func() bool { return alive(seed) == 2 && alive(joiner) == 2 }, 5*time.Second, 10*time.Millisecond)
}

// A name with A and AAAA records: an IPv4 member joins through the A
// record, an IPv6 member through the AAAA one; neither sends to the other
// family (no send error counted).
func TestJoinThroughNameBothFamilies(t *testing.T) {
	if c, err := net.ListenPacket("udp6", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback here (%v): the AAAA half cannot run", err)
	} else {
		c.Close()
	}
	both := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host != "seed.test" {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return []netip.Addr{netip.MustParseAddr("::1"), netip.MustParseAddr("127.0.0.1")}, nil
	}
	for _, bind := range []string{"127.0.0.1:0", "[::1]:0"} {
		seed := start(t, Config{Bind: bind})
		joiner := start(t, Config{Bind: bind, Resolve: both})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		require.NoError(t, joiner.Join(ctx, "seed.test:"+port(seed)), bind)
		cancel()
		require.Eventually(t, func() bool { return alive(seed) == 2 }, 5*time.Second, 10*time.Millisecond, bind)
		assert.Zero(t, joiner.Stats().SendErrors, "%s: a join sent to the other family", bind)
	}
}

// A name that does not resolve fails the Join at once, naming the address
// and the resolver's error; with another address that resolves, the Join
// goes on and succeeds.
func TestJoinNameThatFails(t *testing.T) {
	failing := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "gone.test":
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		case "empty.test":
			return nil, nil
		case "localhost":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, errors.New("unexpected name " + host)
	}
	seed := start(t, Config{})
	joiner := start(t, Config{Resolve: failing})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := joiner.Join(ctx, "gone.test:7946", "empty.test:7946")
	require.Error(t, err)
	assert.ErrorContains(t, err, `join address "gone.test:7946": resolving "gone.test": lookup gone.test: no such host`)
	assert.ErrorContains(t, err, `join address "empty.test:7946": resolving "empty.test": no address`)
	var dnsErr *net.DNSError
	assert.ErrorAs(t, err, &dnsErr)
	require.NoError(t, joiner.Join(ctx, "gone.test:7946", "localhost:"+port(seed)))

	// The system resolver: a name under .invalid (RFC 6761) never resolves.
	sys := start(t, Config{})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	err = sys.Join(ctx2, "no-such-member.invalid:7946")
	require.Error(t, err)
	assert.ErrorContains(t, err, `resolving "no-such-member.invalid"`)
}

// A name resolving to thousands of addresses adds at most maxResolved
// joins.
func TestJoinNameResolvedAddressesBounded(t *testing.T) {
	many := func(context.Context, string) ([]netip.Addr, error) {
		out := make([]netip.Addr, 5000)
		for i := range out {
			out[i] = netip.AddrFrom4([4]byte{127, 1, byte(i >> 8), byte(i)})
		}
		return out, nil
	}
	a := start(t, Config{Resolve: many})
	got, err := a.resolve(context.Background(), []string{"many.test:9", "127.0.0.1:9"})
	require.NoError(t, err)
	assert.Len(t, got, maxResolved+1)
	assert.Equal(t, "127.1.0.0:9", got[0])
	assert.Equal(t, "127.0.0.1:9", got[maxResolved])
}

// A join address no member can be at fails the Join at once, naming it,
// whether given literally or as a name resolving only to such addresses:
// nothing could answer, so waiting out the context would only hide the
// mistake (and a multicast or broadcast join reaches every host there).
func TestJoinAddressNoMemberCanBeAt(t *testing.T) {
	bad := func(_ context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("0.0.0.0"), netip.MustParseAddr("224.0.0.1")}, nil
	}
	joiner := start(t, Config{Resolve: bad})
	for addr, want := range map[string]string{
		"1.2.3.4:0":             "names no host or port",
		"0.0.0.0:7946":          "names no host or port",
		"[::]:7946":             "names no host or port",
		"[::ffff:0.0.0.0]:7946": "names no host or port",
		"224.0.0.1:7946":        "a multicast address",
		"[ff02::1]:7946":        "a multicast address",
		"255.255.255.255:7946":  "the broadcast address",
		"bad.test:7946":         `"bad.test" resolved to 224.0.0.1: a multicast address`,
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := joiner.Join(ctx, addr)
		cancel()
		require.Error(t, err, addr)
		var je *JoinError
		assert.False(t, errors.As(err, &je), "%s: waited for an answer: %v", addr, err)
		assert.ErrorContains(t, err, want, addr)
	}
	assert.Zero(t, joiner.Stats().PacketsSent, "a join went out")
}
