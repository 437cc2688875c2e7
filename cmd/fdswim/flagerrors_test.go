package main

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim/agent"
)

// agentErr runs `fdswim agent --plain` with args and returns its error,
// which must come before the member starts.
func agentErr(t *testing.T, args ...string) error {
	t.Helper()
	var out, errb strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := runAgent(ctx, append([]string{"--plain"}, args...), &out, &errb)
	require.Error(t, err, "%v", args)
	assert.NotContains(t, out.String(), "agent id=", "%v: the member started", args)
	return err
}

// usr27 F6: the errors of `fdswim agent` name its flags and the values
// the user gave, not agent.Config's fields: the stream listener's port
// taken (it said "(set StreamBind, or DisableStream)"), --bind 0.0.0.0
// without --advertise (it said `advertised address "[::]:17970" ... set
// Advertise`), a probe timeout from --preset or the flag's default over
// a given --probe-interval (it said "--probe-timeout 500ms exceeds" of a
// flag not given), an --id over 255 bytes (it said "Self.ID or
// Self.Addr longer than 255 bytes"), a --max-packet-size the protocol
// cannot use (it said "MaxPacketSize 200 is too small").
func TestAgentErrorsNameFlags(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	taken := ln.Addr().String()
	_, takenPort, _ := net.SplitHostPort(taken)
	other, err := agent.Start(context.Background(), agent.Config{Plain: true})
	require.NoError(t, err)
	defer other.Close()
	both := other.Self().Addr
	_, bothPort, _ := net.SplitHostPort(both)
	long := strings.Repeat("x", 300)
	for _, c := range []struct {
		args        []string
		want, tail  string // the whole error, or its start and end
		field, from string // the agent.ConfigError wrapped, if any
	}{
		{args: []string{"--bind", taken},
			want: "--bind " + taken + " (the default of --stream-bind): stream listener: the TCP port " + takenPort + " is in use (the UDP port is free): transport: listen tcp " + taken + ": ",
			tail: ": give --stream-bind, or --no-stream", field: "StreamBind", from: "Bind"},
		// usr28 F4: an agent's port (UDP and TCP) said so, and --bind
		// the flag to change; it blamed the stream listener and advised
		// --stream-bind or --no-stream.
		{args: []string{"--bind", both},
			want: "--bind " + both + ": the port " + bothPort + " is in use, both UDP and TCP (another member running there?): use another port: transport: listen udp " + both + ": ",
			tail: "address already in use", field: "Bind"},
		{args: []string{"--bind", "127.0.0.1:0", "--stream-bind", taken},
			want: "--stream-bind " + taken + ": stream listener: transport: listen tcp " + taken + ": ",
			tail: ": give --stream-bind, or --no-stream", field: "StreamBind"},
		{args: []string{"--bind", "0.0.0.0:0"},
			want:  "--bind 0.0.0.0:0 (the default of --advertise): names no host or port: not an address the other members can send to: give --advertise",
			field: "Advertise", from: "Bind"},
		{args: []string{"--bind", "[::]:0"}, // skipped on a host without IPv6
			want:  "--bind [::]:0 (the default of --advertise): names no host or port: not an address the other members can send to: give --advertise",
			field: "Advertise", from: "Bind"},
		{args: []string{"--bind", "127.0.0.1:0", "--id", long},
			want:  `--id "` + long[:32] + `"… (300 bytes): longer than 255 bytes (swim.MaxIDLen)`,
			field: "ID"},
		{args: []string{"--bind", "127.0.0.1:0", "--id", "a\tb"},
			want:  `--id "a\tb": byte 1 is the control character U+0009`,
			field: "ID"},
		{args: []string{"--bind", "127.0.0.1:0", "--max-packet-size", "200"},
			want:  "--max-packet-size 200: too small: the protocol needs 256 bytes of payload, so at least 257 with this envelope",
			field: "MaxPacketSize"},
		{args: []string{"--bind", "127.0.0.1:0", "--preset", "memberlist-lan", "--probe-interval", "200ms"},
			want: "--preset memberlist-lan's probe timeout 500ms exceeds --probe-interval 200ms: a probe must end within its protocol period; give --probe-timeout 200ms or less"},
		{args: []string{"--bind", "127.0.0.1:0", "--preset", "memberlist-wan", "--probe-timeout", "6s"},
			want: "--probe-timeout 6s exceeds --preset memberlist-wan's probe interval 5s: a probe must end within its protocol period; give --probe-interval 6s or more, or a shorter --probe-timeout"},
		{args: []string{"--bind", "127.0.0.1:0", "--probe-interval", "200ms"},
			want: "the default --probe-timeout 500ms exceeds --probe-interval 200ms: a probe must end within its protocol period; give --probe-timeout 200ms or less"},
		{args: []string{"--bind", "127.0.0.1:0", "--probe-timeout", "2s"},
			want: "--probe-timeout 2s exceeds the default --probe-interval 1s: a probe must end within its protocol period; give --probe-interval 2s or more, or a shorter --probe-timeout"},
		{args: []string{"--bind", "127.0.0.1:0", "--probe-interval", "1s", "--probe-timeout", "2s"},
			want: "--probe-timeout 2s exceeds --probe-interval 1s: a probe must end within its protocol period"},
	} {
		if c.args[1] == "[::]:0" && !hasIPv6() {
			continue
		}
		err := agentErr(t, c.args...)
		if c.tail == "" {
			assert.EqualError(t, err, c.want, "%v", c.args)
		} else {
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "%v: %v", c.args, err)
			assert.True(t, strings.HasSuffix(err.Error(), c.tail), "%v: %v", c.args, err)
		}
		for _, goName := range []string{"StreamBind", "DisableStream", "Advertise", "Self.ID", "MaxPacketSize", "ProbeTimeout", "[::]:0 ("} {
			if goName == "[::]:0 (" && c.args[1] == "[::]:0" {
				continue
			}
			assert.NotContains(t, err.Error(), goName, "%v", c.args)
		}
		var ce *agent.ConfigError
		if assert.Equal(t, c.field != "", errors.As(err, &ce), "%v: wraps the agent's ConfigError", c.args) && ce != nil {
			assert.Equal(t, c.field, ce.Field, "%v", c.args)
			assert.Equal(t, c.from, ce.From, "%v", c.args)
		}
	}
}

// hasIPv6 says whether this host can listen on [::].
func hasIPv6() bool {
	l, err := net.Listen("tcp", "[::]:0")
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// startError translates the agent.ConfigError of a field the flags set,
// and leaves any other error as it is: a field no flag sets (Transport),
// a default taken from one (From "Transport"), an error of another kind.
func TestStartErrorLeavesOthers(t *testing.T) {
	for _, err := range []error{
		&agent.ConfigError{Field: "Advertise", Value: "0.0.0.0:7946", From: "Transport", Err: errors.New("names no host or port")},
		&agent.ConfigError{Field: "Keys", Value: "x", Err: errors.New("no")},
		errors.New("agent: something else"),
	} {
		assert.Same(t, err, startError(err))
	}
	in := &agent.ConfigError{Field: "StreamBind", Value: "127.0.0.1:1", Err: errors.New("in use"), Or: []string{"DisableStream", "Transport"}}
	out := startError(in)
	assert.EqualError(t, out, "--stream-bind 127.0.0.1:1: in use: give --stream-bind, or --no-stream")
	var ce *agent.ConfigError
	require.ErrorAs(t, out, &ce)
	assert.Same(t, in, ce)
}

// A flag's value shows as given when it is short and printable, else
// quoted, and cut with its length when long (agent.ConfigError's
// QuotedValue).
func TestFlagValue(t *testing.T) {
	for v, want := range map[string]string{
		"127.0.0.1:7946":        "127.0.0.1:7946",
		"[::]:7946":             "[::]:7946",
		"node-1":                "node-1",
		"":                      `""`,
		"a b":                   `"a b"`,
		"a\nb":                  `"a\nb"`,
		strings.Repeat("y", 40): strings.Repeat("y", 40),
		strings.Repeat("y", 41): `"` + strings.Repeat("y", 32) + `"… (41 bytes)`,
	} {
		assert.Equal(t, want, (&agent.ConfigError{Value: v}).QuotedValue(), "%q", v)
	}
}
