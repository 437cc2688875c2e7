package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Flags refuse NaN, infinities and out-of-range values with the flag's name
// before anything runs, never as a silent default: --loss-burst Inf is not
// "no loss", --phi-window 0 is not phi's default window, and --phi-window
// 100000000 fails before it asks for gigabytes per sender.
func TestFlagsRefuseInvalidValues(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"send", "--loss", "0.1", "--loss-burst", "Inf", "127.0.0.1:1"}, `"--loss-burst" flag: not a finite number`},
		{[]string{"send", "--loss-burst", "0.5", "127.0.0.1:1"}, "--loss-burst 0.5: want 0 (independent losses) or a mean burst length ≥ 1"},
		{[]string{"send", "--loss", "NaN", "127.0.0.1:1"}, `"--loss" flag: not a finite number`},
		{[]string{"send", "--loss", "1", "127.0.0.1:1"}, `"--loss" flag: want a fraction in [0, 1)`},
		{[]string{"send", "--interval", "0", "127.0.0.1:1"}, `"--interval" flag: want a positive duration`},
		{[]string{"send", "--delay", "-5ms", "127.0.0.1:1"}, `"--delay" flag`},
		{[]string{"send", "--duration", "-1s", "127.0.0.1:1"}, `"--duration" flag`},
		{[]string{"recv", "--phi-window", "0"}, `"--phi-window" flag: want a size from 1 to 100000`},
		{[]string{"recv", "--phi-window", "100000000"}, `"--phi-window" flag`},
		{[]string{"recv", "--phi-min-std", "-1ms"}, `"--phi-min-std" flag`},
		{[]string{"recv", "--interval", "0"}, `"--interval" flag`},
		{[]string{"recv", "--refresh", "-1s"}, `"--refresh" flag`},
		{[]string{"recv", "--phi", "Inf"}, "--phi +Inf: every threshold must be finite and positive"},
		{[]string{"recv", "--phi", "NaN"}, "--phi NaN: every threshold must be finite and positive"},
		{[]string{"recv", "--timeouts", "0s"}, "--timeouts 0s: every timeout must be positive"},
		// An empty key (--key "$KEY", KEY unset) is refused, never taken as
		// "no key": unsigned heartbeats, no authentication.
		{[]string{"send", "--key", "", "127.0.0.1:1"}, "--key: empty"},
		{[]string{"recv", "--key", ""}, "--key: empty"},
		{[]string{"send", "--key-file", "", "127.0.0.1:1"}, "--key-file: empty"},
		{[]string{"recv", "--key-file="}, "--key-file: empty"},
		{[]string{"recv", "--out", ""}, "recv: --out: empty value"},
		{[]string{"send", "--key", "00", "127.0.0.1:1"}, "--key #1: 2 hex digits; want 32, 48 or 64 (an HMAC-SHA256 key of 16, 24 or 32 bytes)"},
		{[]string{"recv", "--listen", ""}, "recv: --listen: empty value"},
		// The error names the flag and the value.
		{[]string{"send", "--name", "a b", "127.0.0.1:1"}, `--name "a b": sender name must be`},
		// A sweep is not one setting (spec.Parse says so).
		{[]string{"recv", "--detector", "chen alpha=1ms..2ms"}, "is a sweep"},
	}
	for _, c := range cases {
		var o, e syncBuffer
		assert.Equal(t, 1, run(context.Background(), c.args, &o, &e), "%v", c.args)
		assert.Contains(t, e.String(), c.want, "%v", c.args)
		assert.Empty(t, o.String(), "%v", c.args)
		assert.False(t, strings.Contains(e.String(), "listening"), "%v: nothing started", c.args)
	}
}
