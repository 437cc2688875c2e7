package tmpfile

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On Linux the file never had a name: the kernel shows an O_TMPFILE file
// as "DIR/#inode (deleted)", a file created and then unlinked under its
// own name. A file system without O_TMPFILE skips.
func TestCreateNeverLinked(t *testing.T) {
	dir := t.TempDir()
	probe, ok := createUnnamed(dir)
	if !ok {
		t.Skipf("%s: no O_TMPFILE on this file system", dir)
	}
	require.NoError(t, probe.Close())
	f, _, err := Create(dir, "t-*")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, namedOnce(t, f, "t-"))
}

// namedOnce reports whether the kernel's name of f (/proc/self/fd) shows
// it was created under a name starting with prefix.
func namedOnce(t *testing.T, f *os.File, prefix string) bool {
	t.Helper()
	link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	require.NoError(t, err)
	return strings.Contains(link, "/"+prefix)
}
