package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

func TestParseJoin(t *testing.T) {
	got, err := parseJoin([]string{"localhost:7946", "10.0.0.1:1", "[::1]:65535"})
	require.NoError(t, err)
	assert.Equal(t, []joinTarget{{"localhost", "7946"}, {"10.0.0.1", "1"}, {"::1", "65535"}}, got)
	for _, bad := range []string{"localhost", ":7946", "h:0", "h:x", "h:65536", "h:-1", "[::1"} {
		_, err := parseJoin([]string{bad})
		assert.ErrorContains(t, err, `--join "`+bad+`": want host:port or ip:port`, bad)
	}
	// A host name of 100 KB is refused (a DNS name has at most 253
	// bytes), and the error echoes its first 256 bytes and its length.
	long := strings.Repeat("h", 100_000) + ":7946"
	_, err = parseJoin([]string{long})
	require.Error(t, err)
	assert.Equal(t, `--join "`+strings.Repeat("h", 256)+`"... (100005 bytes in all): want host:port or ip:port: the host is 100000 bytes, at most 253 (a DNS name)`, err.Error())
	_, err = parseJoin([]string{strings.Repeat("h", 100_000)}) // no port either
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 400, "the entry is echoed once, clipped: %.500s", err)
	_, err = parseJoin([]string{strings.Repeat("h", 253) + ":1"})
	assert.NoError(t, err, "the longest DNS name")
	assert.Equal(t, `"`+strings.Repeat("é", 128)+`"... (400 bytes in all)`, quoteArg(strings.Repeat("é", 200)), "cut at a character boundary")
}

func TestResolveJoin(t *testing.T) {
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "both":
			return []netip.Addr{netip.MustParseAddr("::1"), netip.MustParseAddr("::ffff:127.0.0.2"), netip.MustParseAddr("127.0.0.3")}, nil
		case "six":
			return []netip.Addr{netip.MustParseAddr("::1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	v4 := netip.MustParseAddr("127.0.0.1")
	ts, err := parseJoin([]string{"both:1", "10.1.1.1:2", "six:3", "missing:4"})
	require.NoError(t, err)
	got, err := resolveJoin(context.Background(), lookup, ts, v4)
	require.NoError(t, err) // missing:4 is skipped while others resolve
	// IPv4 self: both's IPv4 addresses (the mapped one unmapped); six has
	// none, so it counts as a name that does not resolve (an IPv4 member
	// neither reaches nor is answered from IPv6).
	assert.Equal(t, []string{"127.0.0.2:1", "127.0.0.3:1", "10.1.1.1:2"}, got)
	_, err = resolveJoin(context.Background(), lookup, ts[2:3], v4)
	assert.EqualError(t, err, `join address "six:3": "six" resolved only to IPv6 addresses [::1], and this member is at IPv4 address 127.0.0.1`)
	got, err = resolveJoin(context.Background(), lookup, ts[:1], netip.MustParseAddr("::1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"[::1]:1"}, got)
	_, err = resolveJoin(context.Background(), lookup, ts[3:], v4)
	assert.ErrorContains(t, err, "missing:4")
}

// fastBackoff keeps the tests of --join retries short.
var fastBackoff = joinBackoff{first: 20 * time.Millisecond, max: 80 * time.Millisecond}

// fastEnv is runAgent's environment with fastBackoff.
var fastEnv = agentEnv{http: defaultHTTPLimits, join: fastBackoff}

// joinWithRetry retries after unanswered attempts and failed lookups with
// a growing wait, stops at once on other errors, and names the flags when
// the deadline passes.
func TestJoinWithRetry(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	v4 := netip.MustParseAddr("127.0.0.1")
	ts, _ := parseJoin([]string{"seed:7946"})
	var waits []time.Duration
	var calls []string
	lookups := 0
	lookup := func(context.Context, string) ([]netip.Addr, error) {
		if lookups++; lookups == 1 {
			return nil, &net.DNSError{Err: "no such host", Name: "seed", IsNotFound: true}
		}
		return []netip.Addr{v4}, nil
	}
	join := func(ctx context.Context, addrs ...string) error {
		calls = append(calls, strings.Join(addrs, ","))
		dl, _ := ctx.Deadline()
		waits = append(waits, time.Until(dl))
		if len(calls) < 3 {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	require.NoError(t, joinWithRetry(context.Background(), log, join, lookup, ts, v4, time.Minute, fastBackoff))
	assert.Equal(t, 4, lookups, "a lookup at every attempt")
	assert.Equal(t, []string{"127.0.0.1:7946", "127.0.0.1:7946", "127.0.0.1:7946"}, calls)
	// Attempt waits: 20 ms (lookup failed), then 40, 80, 80 ms ±20 %; the
	// last two are capped at fastBackoff.max.
	require.Len(t, waits, 3)
	assert.LessOrEqual(t, waits[0], time.Duration(1.2*float64(2*fastBackoff.first)))
	for _, w := range waits {
		assert.LessOrEqual(t, w, time.Duration(1.2*float64(fastBackoff.max)))
	}

	// A refusal is not retried.
	refused := errors.New("agent: join refused: ID held")
	n := 0
	err := joinWithRetry(context.Background(), log, func(context.Context, ...string) error { n++; return refused },
		lookup, ts, v4, time.Minute, fastBackoff)
	assert.Equal(t, refused, err)
	assert.Equal(t, 1, n)

	// A refusal for an ID conflict is retried (the holder may be this
	// member's crashed process, not yet declared dead), each attempt
	// lasting its wait, until it is admitted or the deadline passes.
	held := &agent.ConflictError{ID: "c", Holder: swim.Node{ID: "c", Addr: "127.0.0.1:7000"}}
	n = 0
	err = joinWithRetry(context.Background(), log, func(context.Context, ...string) error {
		if n++; n < 3 {
			return held
		}
		return nil
	}, lookup, ts, v4, time.Minute, fastBackoff)
	assert.NoError(t, err)
	assert.Equal(t, 3, n)
	n = 0
	start := time.Now()
	err = joinWithRetry(context.Background(), log, func(context.Context, ...string) error { n++; return held },
		lookup, ts, v4, 300*time.Millisecond, fastBackoff)
	assert.EqualError(t, err, `join refused: ID "c" is held by the live member at 127.0.0.1:7000 for all of --join-timeout 300ms (attempts: `+
		strconv.Itoa(n)+`): start this member with another ID, or, if that is this member's previous process, give a --join-timeout longer than `+
		`the others take to declare it dead (plus their --dead-reclaim-time)`)
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "retried until the deadline")
	assert.Less(t, n, 20, "each attempt lasts its wait, no busy loop")

	// Nobody answers: the error names --join and --join-timeout.
	err = joinWithRetry(context.Background(), log, func(ctx context.Context, _ ...string) error { <-ctx.Done(); return ctx.Err() },
		lookup, ts, v4, 300*time.Millisecond, fastBackoff)
	assert.ErrorContains(t, err, "--join seed:7946: no member answered within --join-timeout 300ms")
	// A member refused the join for a dead or left holder of the ID, and
	// datagrams failed authentication: the error says both, with the
	// flags that decide them, not "no member answered".
	refusal := &swim.JoinRefusal{By: swim.Node{ID: "s", Addr: "127.0.0.1:7001"}, Held: swim.Node{ID: "c", Addr: "127.0.0.1:7002"}, Incarnation: 4}
	bad := netip.MustParseAddrPort("127.0.0.1:7003")
	n = 0
	err = joinWithRetry(context.Background(), log, func(ctx context.Context, addrs ...string) error {
		<-ctx.Done()
		if n++; n == 1 {
			return &agent.JoinError{Addrs: addrs, Err: ctx.Err(), Refusal: refusal, AuthFailures: 2, AuthFrom: bad}
		}
		return &agent.JoinError{Addrs: addrs, Err: ctx.Err(), AuthFailures: 1, AuthFrom: bad}
	}, lookup, ts, v4, 300*time.Millisecond, fastBackoff)
	assert.EqualError(t, err, `--join seed:7946: join refused within --join-timeout 300ms (attempts: `+strconv.Itoa(n)+`): `+
		`the member at 127.0.0.1:7001 holds ID "c" as dead at 127.0.0.1:7002 (incarnation 4): members give a dead or left member's ID `+
		`to a new address only once it has been down for their --dead-reclaim-time and, when they sign updates, only to the `+
		`--identity-file key bound to the ID (until the entry is forgotten): wait and retry, lower --dead-reclaim-time on the members, `+
		`start this member with its previous --identity-file, or with another --id; `+strconv.Itoa(n+1)+` datagrams that failed `+
		`authentication arrived during the join, the last from 127.0.0.1:7003: the members may use another key (--key-file) or none (--plain)`)
	assert.Greater(t, n, 1, "retried")
	// Authentication failures alone are added to the usual message.
	err = joinWithRetry(context.Background(), log, func(ctx context.Context, addrs ...string) error {
		<-ctx.Done()
		return &agent.JoinError{Addrs: addrs, Err: ctx.Err(), AuthFailures: 1, AuthFrom: bad}
	}, lookup, ts, v4, 300*time.Millisecond, fastBackoff)
	assert.ErrorContains(t, err, "--join seed:7946: no member answered within --join-timeout 300ms")
	assert.ErrorContains(t, err, "datagrams that failed authentication arrived during the join, the last from 127.0.0.1:7003")
	// A name that never resolves says so.
	never := func(context.Context, string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "no such host", Name: "seed", IsNotFound: true}
	}
	err = joinWithRetry(context.Background(), log, join, never, ts, v4, 200*time.Millisecond, fastBackoff)
	assert.ErrorContains(t, err, "--join seed:7946: no address found")
	assert.ErrorContains(t, err, "no such host")
	assert.ErrorContains(t, err, "--join-timeout 200ms")
}

// A lookup that fails at once (a resolver's cached "no such host") still
// lasts its attempt's wait, so that fdswim agent --join
// nosuchhost.invalid:7946 never turns into a busy loop of lookups and
// warnings bounded only by the resolver's speed (a lookup again at once
// gave 8 attempts in 5 ms).
func TestJoinLookupFailureBacksOff(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	v4 := netip.MustParseAddr("127.0.0.1")
	ts, _ := parseJoin([]string{"seed:7946"})
	lookups := 0
	never := func(context.Context, string) ([]netip.Addr, error) {
		lookups++
		return nil, &net.DNSError{Err: "no such host", Name: "seed", IsNotFound: true}
	}
	join := func(context.Context, ...string) error { t.Fatal("join without an address"); return nil }
	start := time.Now()
	err := joinWithRetry(context.Background(), log, join, never, ts, v4, 300*time.Millisecond, fastBackoff)
	assert.ErrorContains(t, err, "no address found")
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "retried until the deadline")
	// Waits of 20, 40, 80, 80... ms ±20 %: at most 6 attempts in 300 ms.
	assert.LessOrEqual(t, lookups, 6, "each failed lookup lasts its attempt's wait")
	assert.ErrorContains(t, err, "(attempts: "+strconv.Itoa(lookups)+";")
}

// Over loopback: a member started with --join localhost:PORT before any
// member listens there keeps retrying and joins once the seed is up.
func TestJoinByNameRetries(t *testing.T) {
	port := freePort(t)
	_, p, _ := net.SplitHostPort(port)
	var out, errb syncBuf
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runAgentEnv(ctx, []string{"--plain", "--id", "late", "--bind", "127.0.0.1:0", "--join", "localhost:" + p,
			"--join-timeout", "60s", "--leave-timeout", "0s", "--log-level", "warn"}, &out, &errb, fastEnv)
	}()
	// The joiner has failed at least once before the seed starts.
	require.Eventually(t, func() bool { return strings.Contains(errb.String(), "join attempt failed") }, 20*time.Second, 10*time.Millisecond, errb.String())
	// The port was picked before it is bound: another socket may take it
	// meanwhile, so a seed refused with "address already in use" is
	// started again on the same port a few times.
	var sdone chan error
	for attempt := 1; ; attempt++ {
		var sout, serr syncBuf
		sdone = make(chan error, 1)
		go func() {
			sdone <- runAgentEnv(ctx, []string{"--plain", "--id", "seed", "--bind", port, "--leave-timeout", "0s"}, &sout, &serr, fastEnv)
		}()
		joined := func() bool { return strings.Contains(out.String(), "joined via=localhost:"+p) }
		var seedErr error
		for deadline := time.Now().Add(30 * time.Second); !joined() && seedErr == nil && time.Now().Before(deadline); {
			select {
			case seedErr = <-sdone:
			case <-time.After(20 * time.Millisecond):
			}
		}
		if seedErr != nil && strings.Contains(seedErr.Error(), "address already in use") && attempt < 5 {
			t.Logf("seed on %s, attempt %d: %v", port, attempt, seedErr)
			time.Sleep(time.Duration(attempt) * 300 * time.Millisecond)
			continue
		}
		require.NoError(t, seedErr)
		require.True(t, joined(), "%s\n%s", out.String(), errb.String())
		break
	}
	cancel()
	require.NoError(t, <-done)
	require.NoError(t, <-sdone)
}

// Over loopback: a member that left, restarted on another port while the
// seed's --dead-reclaim-time keeps its ID, is told that the seed refused
// it and which flags decide it, not "no member answered".
func TestJoinRefusedForLeftHolder(t *testing.T) {
	seedAddr := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sout, serr syncBuf
	sdone := make(chan error, 1)
	go func() {
		sdone <- runAgentEnv(ctx, []string{"--plain", "--id", "seed", "--bind", seedAddr, "--dead-reclaim-time", "10m",
			"--probe-interval", period, "--probe-timeout", probeTO, "--leave-timeout", "0s"}, &sout, &serr, fastEnv)
	}()
	var cout, cerr syncBuf
	cctx, ccancel := context.WithCancel(ctx)
	cdone := make(chan error, 1)
	go func() {
		cdone <- runAgentEnv(cctx, []string{"--plain", "--id", "c", "--bind", "127.0.0.1:0", "--join", seedAddr, "--join-timeout", "20s",
			"--probe-interval", period, "--probe-timeout", probeTO, "--leave-timeout", "300ms"}, &cout, &cerr, fastEnv)
	}()
	require.Eventually(t, func() bool { return strings.Contains(cout.String(), "joined via="+seedAddr) }, 20*time.Second, 10*time.Millisecond,
		"%s\n%s\n%s", cout.String(), cerr.String(), serr.String())
	ccancel() // c leaves
	require.NoError(t, <-cdone)
	require.Eventually(t, func() bool { return strings.Contains(sout.String(), "event kind=leave id=c") }, 10*time.Second, 10*time.Millisecond)

	var out, errb syncBuf
	err := runAgentEnv(ctx, []string{"--plain", "--id", "c", "--bind", "127.0.0.1:0", "--join", seedAddr, "--join-timeout", "1s",
		"--probe-interval", period, "--probe-timeout", probeTO, "--leave-timeout", "0s"}, &out, &errb, fastEnv)
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), "--join "+seedAddr+": join refused within --join-timeout 1s")
	assert.Contains(t, err.Error(), `: the member at `+seedAddr+` holds ID "c" as left at 127.0.0.1:`)
	assert.Contains(t, err.Error(), "for their --dead-reclaim-time")
	assert.NotContains(t, err.Error(), "no member answered")
	cancel()
	require.NoError(t, <-sdone)
}

// joinList names at most 8 targets and counts the rest, so that a --join
// of thousands of addresses does not make one log line of 80 KB (usr30).
func TestJoinListShortened(t *testing.T) {
	var ts []joinTarget
	for i := range 10 {
		ts = append(ts, joinTarget{host: "10.0.0.1", port: strconv.Itoa(7000 + i)})
	}
	assert.Equal(t, "10.0.0.1:7000,10.0.0.1:7001", joinList(ts[:2]))
	assert.Equal(t, "10.0.0.1:7000,10.0.0.1:7001,10.0.0.1:7002,10.0.0.1:7003,10.0.0.1:7004,10.0.0.1:7005,10.0.0.1:7006,10.0.0.1:7007 and 2 more", joinList(ts))
}
