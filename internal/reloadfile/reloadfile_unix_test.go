//go:build unix

package reloadfile

import (
	"errors"
	"net"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Read refuses a named pipe without a writer at once, not waiting in
// open, and names a Unix socket, whose open fails (ENXIO).
func TestReadNotRegularUnix(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err := Read(fifo, 4) // no writer: without O_NONBLOCK this blocks
	assert.EqualError(t, err, "a named pipe, not a regular file")
	assert.True(t, errors.As(err, new(*KindError)))

	// A Unix socket's open fails (ENXIO); the error still says what it is.
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	_, err = Read(sock, 4)
	assert.EqualError(t, err, "a socket, not a regular file")
}
