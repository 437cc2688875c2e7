//go:build unix

package main

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --report naming a FIFO is refused before the replay, with or without
// --force, and offers no "-", which --report refuses (user48's F13: with
// --force it was refused after the replay, "or - for standard output").
func TestReportRefusesFIFOFirst(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, args := range [][]string{
		{"--no-progress", "-d", "fixed", "--report", fifo},
		{"--no-progress", "-d", "fixed", "--report", fifo, "--force"},
	} {
		code, out, errOut := runCmd(args...)
		assert.Equal(t, 1, code, "%v", args)
		assert.Empty(t, out, "%v: nothing replayed", args)
		assert.Equal(t, "fdreplay: --report "+fifo+": "+fifo+" is a FIFO: the output is written to a temporary file and renamed onto its name, which would replace it; give a regular file's name\n", errOut, "%v", args)
	}
}
