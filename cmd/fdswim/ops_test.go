package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --push-pull sets swim.Config.PushPullInterval: 0 turns anti-entropy off;
// left out with --preset, the preset's interval stays.
func TestAgentPushPullFlag(t *testing.T) {
	for _, d := range []time.Duration{0, 5 * time.Second, time.Minute} {
		f := agentFlags{logLevel: "warn", mode: "detector", plain: true, pushPull: d}
		cfg, err := f.config(io.Discard)
		require.NoError(t, err)
		require.NotNil(t, cfg.Protocol.PushPullInterval)
		assert.Equal(t, d, *cfg.Protocol.PushPullInterval)
	}
	p, ok := swimPreset("memberlist-wan")
	require.True(t, ok)
	f := agentFlags{logLevel: "warn", mode: "lifeguard", plain: true, pushPull: 5 * time.Second, preset: &p}
	cfg, err := f.config(io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 60*time.Second, *cfg.Protocol.PushPullInterval, "the preset's, --push-pull not given")
	f.pushPullSet = true
	cfg, err = f.config(io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, *cfg.Protocol.PushPullInterval, "--push-pull given overrides the preset")
	var out, errb strings.Builder
	err = runAgent(context.Background(), []string{"--plain", "--push-pull", "NaN"}, &out, &errb)
	assert.ErrorContains(t, err, `"--push-pull"`)
	// Shorter than a protocol period: an exchange due at every tick (with
	// --push-pull 1ns two agents made 157,592 exchanges in 5 s, a full core
	// each). Refused, naming both flags.
	for _, d := range []time.Duration{time.Nanosecond, 999 * time.Millisecond} {
		f := agentFlags{logLevel: "warn", mode: "detector", plain: true, probeInterval: time.Second, pushPull: d}
		_, err := f.config(io.Discard)
		assert.EqualError(t, err, "--push-pull "+d.String()+": want 0 (off) or at least one protocol period (--probe-interval 1s), or 30s when that is longer")
	}
	f = agentFlags{logLevel: "warn", mode: "detector", plain: true, probeInterval: time.Hour, probeTimeout: time.Second, pushPull: 30 * time.Second}
	_, err = f.config(io.Discard)
	assert.NoError(t, err, "the default --push-pull under a 1h --probe-interval")
}

// Every stdout line is a slog line with a timestamp; a key reload is logged
// on stdout, a failed one on stderr.
func TestAgentOutputTimestampedAndReloadLogged(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(keys, []byte(testKeyHex+"\n"), 0o600))
	var out, errb syncBuf
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runAgent(ctx, []string{"--key-file", keys, "--bind", "127.0.0.1:0", "--leave-timeout", "0s"}, &out, &errb)
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), " msg=agent ") }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, os.WriteFile(keys, []byte("not hex\n"), 0o600))
	hupSelf(t)
	require.Eventually(t, func() bool { return strings.Contains(errb.String(), `msg="key reload failed; keys unchanged"`) }, 5*time.Second, 10*time.Millisecond)
	assert.Contains(t, errb.String(), "level=ERROR")
	assert.Contains(t, errb.String(), "key_file="+keys)
	require.NoError(t, os.WriteFile(keys, []byte(testKeyHex+"\n"+testKeyHex[:32]+"\n"), 0o600))
	hupSelf(t)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), `msg="keys reloaded" key_file=`+keys+` count=2`) }, 5*time.Second, 10*time.Millisecond, out.String())
	cancel()
	require.NoError(t, <-done)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.GreaterOrEqual(t, len(lines), 3) // agent, keys reloaded, stopped
	for _, l := range lines {
		ts, ok := strings.CutPrefix(l, "time=")
		require.True(t, ok, l)
		_, err := time.Parse(time.RFC3339Nano, strings.Fields(ts)[0])
		require.NoError(t, err, l)
		assert.Contains(t, l, " level=INFO msg=", l)
	}
	assert.Contains(t, lines[len(lines)-1], "msg=stopped")
}
