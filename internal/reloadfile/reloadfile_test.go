package reloadfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Read takes a regular file up to its bound, refuses one byte more and a
// directory, and passes a missing file's *os.PathError through (named
// pipes and sockets: TestReadNotRegularUnix).
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

	_, err = Read(filepath.Join(dir, "missing"), 4)
	assert.True(t, errors.Is(err, os.ErrNotExist))
	assert.True(t, errors.As(err, new(*os.PathError)))
}
