package tmpfile

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file written and read back through f; the directory holds nothing
// while it is open, nor after it is closed.
func TestCreateReadsBackAndLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, name, err := Create(dir, "t-*")
	require.NoError(t, err)
	assert.Empty(t, name, "removed or never linked on this system")
	_, err = f.WriteString("hello")
	require.NoError(t, err)
	_, err = f.Seek(0, io.SeekStart)
	require.NoError(t, err)
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, ents)
	require.NoError(t, f.Close())
}

// The fallback (created, then removed) leaves nothing either.
func TestCreateRemoved(t *testing.T) {
	dir := t.TempDir()
	f, name, err := createRemoved(dir, "t-*")
	require.NoError(t, err)
	defer f.Close()
	assert.Empty(t, name)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, ents)
}

// A directory that does not exist is os.CreateTemp's error, naming it.
func TestCreateMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	_, _, err := Create(dir, "t-*")
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), dir)
}
