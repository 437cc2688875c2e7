//go:build unix

package wire

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A key file that is not a regular file is refused at once, naming what it
// is: a named pipe without a writer would otherwise block the open, and
// with it every later reload on the same goroutine (user37 F7).
func TestReadKeyFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	done := make(chan error, 1)
	go func() { _, err := ReadKeyFile(fifo); done <- err }()
	select {
	case err := <-done:
		require.EqualError(t, err, fifo+": a named pipe, not a regular file: want a file of keys that a reload can read again")
	case <-time.After(5 * time.Second):
		// Unblock the open so the goroutine ends.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("ReadKeyFile blocked on a named pipe without a writer")
	}
	_, err := ReadKeyFile(dir)
	require.EqualError(t, err, dir+": a directory, not a regular file: want a file of keys that a reload can read again")
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := ReadKeyFile("/dev/zero")
		require.EqualError(t, err, "/dev/zero: a device, not a regular file: want a file of keys that a reload can read again")
	}
	// A symbolic link to a regular file is read through.
	real := filepath.Join(dir, "real")
	require.NoError(t, os.WriteFile(real, []byte(strings.Repeat("11", 16)+"\n"), 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(real, link))
	keys, err := ReadKeyFile(link)
	require.NoError(t, err)
	require.Equal(t, [][]byte{mustKey(t, strings.Repeat("11", 16))}, keys)
}
