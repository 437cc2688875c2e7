package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

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
