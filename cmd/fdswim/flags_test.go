package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// sim flags refuse invalid values with the flag's name instead of running
// with a default: --trials -1 ran 30 trials, --alpha -3 reported α = 5.
func TestSimFlagsRefuseInvalidValues(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--trials", "-1"}, `"--trials" flag: want a count from 1 to 100000`},
		{[]string{"--trials", "0"}, `"--trials" flag`},
		{[]string{"--trials", "100000000"}, `"--trials" flag`},
		{[]string{"--alpha", "-3"}, `"--alpha" flag: want a multiplier from 1 to 1000`},
		{[]string{"--alpha", "0"}, `"--alpha" flag`},
		{[]string{"--beta", "-1"}, `"--beta" flag`},
		{[]string{"--pause", "0"}, `"--pause" flag: want a positive duration`},
		{[]string{"--pause", "-6s"}, `"--pause" flag`},
		{[]string{"--duration", "-1m"}, `"--duration" flag`},
		{[]string{"--duration", "1000h"}, `"--duration" flag: want a positive duration up to 24h0m0s`},
		{[]string{"--every", "0"}, `"--every" flag`},
		{[]string{"--pause", "6s", "--every", "5s"}, "--every 5s: must be longer than the pause D = 6s"},
		{[]string{"--every", "10s"}, "--every 10s: must be longer than the pause D = 12s"},
		{[]string{"--sizes", "1"}, "--sizes 1: each group size must be from 2 to 10000"},
		{[]string{"--sizes", "8,100000000"}, "--sizes 100000000: each group size must be from 2 to 10000"},
		{[]string{"--sizes", "8,16,8"}, "--sizes 8: given twice (each size is run once)"},
		{[]string{"--sizes", "abc"}, `invalid argument "abc" for "--sizes" flag: want comma-separated group sizes, each an integer from 2 to 10000, got "abc"`},
		{[]string{"--sizes", "8,,16"}, `"--sizes" flag: want comma-separated group sizes, each an integer from 2 to 10000, got ""`},
		{[]string{"--sizes", "99999999999999999999"}, `"--sizes" flag: want comma-separated group sizes`},
		{[]string{"--counts", "x"}, `"--counts" flag: want comma-separated numbers of paused members, each an integer from 0 to 128, got "x"`},
		{[]string{"--counts", "-1"}, "--counts -1: each count must be from 0 to 128"},
		{[]string{"--counts", "200"}, "--counts 200"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		args := append([]string{"sim", "--quick"}, c.args...)
		code := run(context.Background(), append(args, "lifeguard"), &out, &errb)
		assert.Equal(t, 1, code, "%v", c.args)
		assert.Contains(t, errb.String(), c.want, "%v", c.args)
		assert.NotContains(t, out.String(), "Lifeguard", "%v: nothing ran", c.args)
	}
}

// Invalid agent flag values are refused, not taken as defaults (0 →
// swim's or wire's default).
func TestAgentFlagsRefuseInvalidValues(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--probe-interval", "0"}, `"--probe-interval" flag: want a positive duration`},
		{[]string{"--probe-timeout", "0"}, `"--probe-timeout" flag`},
		{[]string{"--max-packet-size", "0"}, `"--max-packet-size" flag: want a size in bytes from 128 to 65507`},
		{[]string{"--max-packet-size", "100000"}, `"--max-packet-size" flag`},
		{[]string{"--gossip-fanout", "-1"}, `"--gossip-fanout" flag: want a count from 0 (off) to 1024`},
		{[]string{"--gossip-interval", "-1s"}, `"--gossip-interval" flag: want a duration from 0 (off) to 1m`},
		{[]string{"--gossip-interval", "2m"}, `"--gossip-interval" flag`},
		{[]string{"--leave-timeout", "-1s"}, `"--leave-timeout" flag`},
		{[]string{"--join-timeout", "-1s"}, `"--join-timeout" flag`},
		{[]string{"--stream-timeout", "0"}, `"--stream-timeout" flag: want a duration from 1ms to 1h`},
		{[]string{"--max-stream-conns", "0"}, `"--max-stream-conns" flag: want a count from 1 to 65536`},
		{[]string{"--no-stream", "--stream-bind", "127.0.0.1:0"}, "--stream-bind names a TCP listener but --no-stream"},
		{[]string{"--stream-bind", "nonsense"}, `--stream-bind "nonsense": want ip:port`},
		// Errors name the flag, not the agent.Config or swim.Config field.
		{[]string{"--bind", "nonsense"}, `--bind "nonsense": want ip:port`},
		{[]string{"--advertise", "host"}, `--advertise "host": want ip:port`},
		{[]string{"--probe-timeout", "5s"}, "--probe-timeout 5s exceeds --probe-interval 1s"},
		// An empty value (an unset shell variable) is not the flag's absence.
		{[]string{"--join", ""}, "--join: empty value"},
		{[]string{"--identity-file", ""}, "--identity-file: empty value"},
		{[]string{"--key-file", ""}, "--key-file: empty value"},
		{[]string{"--meta-file", ""}, "--meta-file: empty value"},
		// --suspicion sets the detector mode's per-peer detector: in the
		// other modes, given or taken from --preset, it would be ignored.
		{[]string{"--mode", "swim", "--suspicion", "chen"}, "--suspicion chooses the per-peer detector of --mode detector; --mode swim has none"},
		{[]string{"--preset", "memberlist-lan", "--suspicion", "chen"}, "--mode lifeguard (set by --preset memberlist-lan) has none"},
	}
	for _, c := range cases {
		var out, errb strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := runAgent(ctx, append([]string{"--plain", "--bind", "127.0.0.1:0"}, c.args...), &out, &errb)
		cancel()
		if assert.Error(t, err, "%v", c.args) {
			assert.Contains(t, err.Error(), c.want, "%v", c.args)
		}
		assert.NotContains(t, out.String(), "agent id=", "%v", c.args)
	}
}

// A simulation stopped by SIGINT or SIGTERM (the cause main gives the
// context) says so and exits 130 or 143, as shells expect; "context
// canceled" and status 1 remain for a cancellation without a signal.
func TestSimSignalExitCode(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		msg  string
	}{{syscall.SIGINT, 130, "fdswim sim: interrupted by SIGINT: stopped"}, {syscall.SIGTERM, 143, "fdswim sim: interrupted by SIGTERM: stopped"}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(50*time.Millisecond, func() { cancel(signalCause{c.sig}) })
		var out, errb bytes.Buffer
		code := run(ctx, []string{"sim", "--quick", "lifeguard"}, &out, &errb)
		assert.Equal(t, c.code, code)
		assert.Equal(t, c.msg+"\n", errb.String())
	}
}

// --no-stream and --no-stream-ping reach the agent's configuration.
func TestAgentStreamSwitchFlags(t *testing.T) {
	f := agentFlags{logLevel: "warn", mode: "detector", plain: true, noStreamPing: true, streamTimeout: time.Second, maxStreamConns: 8}
	cfg, err := f.config(io.Discard)
	assert.NoError(t, err)
	assert.True(t, cfg.DisableStreamProbes)
	assert.False(t, cfg.DisableStream)
	assert.Equal(t, time.Second, cfg.StreamTimeout)
	assert.Equal(t, 8, cfg.MaxStreamConns)
	f = agentFlags{logLevel: "warn", mode: "detector", plain: true, noStream: true}
	cfg, err = f.config(io.Discard)
	assert.NoError(t, err)
	assert.True(t, cfg.DisableStream)
}
