package main

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim/transport"
)

// The start-up warning for an advertised IP the bound socket does not
// receive: a specific --bind must be the advertised IP; a wildcard --bind
// takes any advertised IP of this host.
func TestAdvertiseWarning(t *testing.T) {
	local := func(ip netip.Addr) bool { return ip.IsLoopback() } // this "host": 127/8 and ::1
	for _, c := range []struct {
		bind, advertise string
		warn            string // "" for none
	}{
		{"127.0.0.1:7946", "", ""},
		{"127.0.0.1:7946", "127.0.0.1:7946", ""},
		{"127.0.0.1:7946", "127.0.0.1:8000", ""}, // a port mapping: the IP is the socket's
		{"[::ffff:127.0.0.1]:7946", "127.0.0.1:7946", ""},
		{"0.0.0.0:7946", "127.0.0.2:7946", ""},
		{"[::]:7946", "[::1]:7946", ""},
		{"127.0.0.1:7946", "127.0.0.2:7946", "--advertise 127.0.0.2:7946 is not the address --bind 127.0.0.1:7946 listens on: " +
			"the other members send to 127.0.0.2, and answer a join only when it comes from there, but this agent receives on 127.0.0.1 " +
			"and sends from it; unless a NAT or port mapping forwards 127.0.0.2 here, --bind the advertised address (or 0.0.0.0 with its port)"},
		{"10.0.0.5:7946", "203.0.113.7:7946", "--advertise 203.0.113.7:7946 is not the address --bind 10.0.0.5:7946 listens on"},
		{"0.0.0.0:7946", "203.0.113.7:7946", "--advertise 203.0.113.7:7946 is not an address of this host, which --bind 0.0.0.0:7946 " +
			"listens on: the other members send to 203.0.113.7 and answer a join only when it comes from there, so this agent is reached " +
			"only if a NAT or port mapping forwards 203.0.113.7 here and translates its packets to it"},
		{"not an address", "127.0.0.2:7946", ""}, // the agent's own checks
	} {
		got := advertiseWarning(c.bind, c.advertise, local)
		if c.warn == "" {
			assert.Empty(t, got, "--bind %s --advertise %s", c.bind, c.advertise)
		} else {
			assert.True(t, strings.HasPrefix(got, c.warn), "--bind %s --advertise %s: %s", c.bind, c.advertise, got)
		}
	}
}

// fdswim agent --bind 127.0.0.1:P --advertise 127.0.0.2:P warns at start,
// in one log line naming both flags; with --advertise 127.0.0.1:P it does
// not. Started silently, only a join time-out would tell.
func TestAgentWarnsAdvertiseNotBound(t *testing.T) {
	if !transport.IsLocal(netip.MustParseAddr("127.0.0.2")) {
		t.Skip("127.0.0.2 is not an address of this host")
	}
	for _, adv := range []string{"127.0.0.2", "127.0.0.1"} {
		port := freePort(t)
		_, p, _ := net.SplitHostPort(port)
		var out, errb syncBuf
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- runAgent(ctx, []string{"--plain", "--bind", port, "--advertise", adv + ":" + p, "--leave-timeout", "0s"}, &out, &errb)
		}()
		require.Eventually(t, func() bool { return strings.Contains(out.String(), "msg=agent ") }, 10*time.Second, 10*time.Millisecond,
			"%s\n%s", out.String(), errb.String())
		cancel()
		require.NoError(t, <-done)
		if adv == "127.0.0.1" {
			assert.NotContains(t, errb.String(), "--advertise", "advertising the bound address")
			continue
		}
		var lines []string
		for _, l := range strings.Split(errb.String(), "\n") {
			if strings.Contains(l, "--advertise") {
				lines = append(lines, l)
			}
		}
		require.Len(t, lines, 1, "%s", errb.String())
		assert.Contains(t, lines[0], "level=WARN")
		assert.Contains(t, lines[0], "--advertise 127.0.0.2:"+p+" is not the address --bind "+port+" listens on")
	}
}
