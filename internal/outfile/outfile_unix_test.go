//go:build unix

package outfile

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A destination that exists and is not a regular file is refused, when the
// file is created and again at Commit, and stays what it was, so that
// "fdgen -o /dev/full" run as root never replaces the device with a
// regular file holding the trace; a FIFO here stands for the device.
func TestRefusesNonRegularDestination(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))

	s, err := New(dir, "test")
	require.NoError(t, err)
	defer s.Abort()
	_, err = s.Create("pipe")
	require.Error(t, err)
	// No "or -" here (user48's F13: fdreplay's --report, which refuses
	// "-", offered it): a command that takes "-" says so itself.
	assert.EqualError(t, err, fifo+" is a FIFO: the output is written to a temporary file and renamed onto its name, which would replace it; give a regular file's name")
	assert.ErrorIs(t, err, ErrNotRegular)
	assert.ErrorIs(t, CheckReplaceable(fifo), ErrNotRegular)
	_, err = s.Create("sub")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a directory")

	// Made a FIFO between Create and Commit: Commit refuses it too.
	require.NoError(t, s.Write("late", func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "late"), 0o644))
	_, err = s.Commit(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a FIFO")
	for _, n := range []string{"pipe", "late"} {
		fi, err := os.Lstat(filepath.Join(dir, n))
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&os.ModeNamedPipe, "%s is still a FIFO", n)
	}
}
