package reloadfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Read takes a regular file up to its bound, refuses one byte more, a
// directory and a named pipe without a writer (at once, not waiting in
// open), and passes a missing file's *os.PathError through.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("abcd"), 0o600))
	b, err := Read(p, 4)
	require.NoError(t, err)
	assert.Equal(t, "abcd", string(b))

	_, err = Read(p, 3)
	assert.EqualError(t, err, "larger than 3 bytes")
	assert.True(t, errors.As(err, new(*LimitError)))

	_, err = Read(dir, 4)
	assert.EqualError(t, err, "a directory, not a regular file")

	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err = Read(fifo, 4) // no writer: without O_NONBLOCK this blocks
	assert.EqualError(t, err, "a named pipe, not a regular file")
	assert.True(t, errors.As(err, new(*KindError)))

	// A Unix socket's open fails (ENXIO); the error still says what it is.
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	_, err = Read(sock, 4)
	assert.EqualError(t, err, "a socket, not a regular file")

	_, err = Read(filepath.Join(dir, "missing"), 4)
	assert.True(t, errors.Is(err, os.ErrNotExist))
	assert.True(t, errors.As(err, new(*os.PathError)))
}
