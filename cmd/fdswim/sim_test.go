package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSimSubcommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"sim", "--quick", "restart", "partition"}, &out, &errb)
	assert.Equal(t, 0, code, errb.String())
	s := out.String()
	assert.Contains(t, s, "Crash and restart of one member of 32")
	assert.Contains(t, s, "Partition of 32 members into two halves")
	assert.Contains(t, s, "swim+lifeguard+detector")

	out.Reset()
	assert.Equal(t, 0, run(context.Background(), []string{"sim", "--list"}, &out, &errb))
	assert.True(t, strings.HasPrefix(out.String(), "load"))

	errb.Reset()
	assert.Equal(t, 1, run(context.Background(), []string{"sim", "nosuch"}, &out, &errb))
	assert.Contains(t, errb.String(), `unknown scenario "nosuch"`)
	assert.Equal(t, 2, run(context.Background(), []string{"frobnicate"}, &out, &errb))
	assert.Equal(t, 2, run(context.Background(), nil, &out, &errb))
}

// Ctrl-C (a cancelled context) stops a running scenario instead of being
// ignored until it ends: the command reports the interruption and fails.
func TestSimInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	code := run(ctx, []string{"sim", "--quick", "lifeguard"}, &out, &errb)
	assert.Equal(t, 1, code)
	assert.Contains(t, errb.String(), "context canceled")
	assert.NotContains(t, out.String(), "Lifeguard interval experiment", "the interrupted scenario's table is not printed")
}
