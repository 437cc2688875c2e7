package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Flags refuse NaN, infinities and out-of-range values with the flag's name
// (--loss-burst Inf must not give 0 % loss), never fall back to a default
// (--interval 0 must not mean 100ms), and refuse a trace too large for
// memory with the limit in the message.
func TestFlagsRefuseInvalidValues(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--loss", "0.1", "--loss-burst", "Inf"}, `"--loss-burst" flag: not a finite number`},
		{[]string{"--loss", "0.1", "--loss-burst", "NaN"}, `"--loss-burst" flag: not a finite number`},
		{[]string{"--loss", "0.1", "--loss-burst", "0.5"}, `"--loss-burst" flag: want a finite mean burst length ≥ 1`},
		{[]string{"--loss-burst", "4"}, "--loss-burst 4 needs --loss"},
		{[]string{"--loss", "NaN"}, `"--loss" flag: not a finite number`},
		{[]string{"--loss", "1.5"}, `"--loss" flag: want a fraction in [0, 1]`},
		{[]string{"--loss", "-0.1"}, `"--loss" flag`},
		{[]string{"--delay-alpha", "Inf"}, `"--delay-alpha" flag`},
		{[]string{"--delay-alpha", "1"}, `"--delay-alpha" flag: want a finite shape > 1`},
		{[]string{"--receiver-start", "2562047h", "--duration", "2h"}, "--receiver-start 2562047h0m0s + --duration 2h0m0s + --delay-base and --delay-mean 0s (× 1 + --drift-ppm 0/10^6): the last arrivals overflow"},
		{[]string{"--jitter", "101ms"}, "--jitter 101ms is larger than --interval 100ms: send instants are truncated to ±interval/2 so that sends stay ordered; want --jitter at most --interval"},
		{[]string{"--interval", "1s", "--jitter", "2s"}, "--jitter 2s is larger than --interval 1s"},
		{[]string{"--drift-ppm", "NaN"}, `"--drift-ppm" flag`},
		{[]string{"--drift-ppm", "1e6"}, `"--drift-ppm" flag`},
		{[]string{"--interval", "0"}, `"--interval" flag: want a positive duration`},
		{[]string{"--duration", "0"}, `"--duration" flag: want a positive duration`},
		{[]string{"--jitter", "-1ms"}, `"--jitter" flag: want a duration ≥ 0`},
		{[]string{"--delay-sd", "-1ms"}, `"--delay-sd" flag`},
		{[]string{"--senders", "0"}, `"--senders" flag: want a count from 1 to 100000`},
		{[]string{"--senders", "100001"}, `"--senders" flag: want a count from 1 to 100000 (the streams are generated side by side, about 1.3 KB each)`},
		{[]string{"--senders", "1000", "--interval", "1ms", "--duration", "1h"}, "= 3600000000 heartbeats: at most 100000000"},
		{[]string{"--interval", "1ns", "--duration", "1h"}, "heartbeats: at most 100000000"},
		{[]string{"--delay", "pareto"}, "--delay pareto needs --delay-alpha > 1"},
		{[]string{"--delay", "lognormal", "--delay-sd", "5ms"}, "--delay lognormal needs a positive --delay-mean"},
		{[]string{"--pause", "10s:0s"}, `--pause "10s:0s": want AT ≥ 0 and LENGTH > 0`},
		{[]string{"--outage", "-1s:2s"}, `--outage "-1s:2s": want AT ≥ 0`},
		{[]string{"--outage", "1s:0"}, `--outage "1s:0": want AT ≥ 0 and LENGTH > 0 (for a network that never comes back, use --crash: nothing is received after it either)`},
		{[]string{"--pause", "1s:0"}, `--pause "1s:0": want AT ≥ 0 and LENGTH > 0 (for a sender that never resumes, use --crash)`},
		// An empty id given explicitly is not replaced by the default "p".
		{[]string{"--sender", ""}, `--sender "": want a sender id (omit the flag for "p")`},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		err := run(c.args, &out, &errOut)
		if assert.Error(t, err, "%v", c.args) {
			assert.Contains(t, err.Error(), c.want, "%v", c.args)
		}
		assert.Zero(t, out.Len(), "%v: no trace written", c.args)
	}
}

// The help names every checked flag with its type.
func TestHelpShowsCheckedFlags(t *testing.T) {
	var errOut bytes.Buffer
	_ = run([]string{"-h"}, &bytes.Buffer{}, &errOut)
	for _, f := range []string{"--loss-burst float", "--interval duration", "--senders int"} {
		assert.True(t, strings.Contains(errOut.String(), f), f)
	}
}
