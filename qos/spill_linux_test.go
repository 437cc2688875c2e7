package qos

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A spill file never has a name in the directory, so that a fatal signal
// right after it is created leaves nothing in $TMPDIR: the kernel shows a
// file created with O_TMPFILE as "DIR/#inode (deleted)", one created as
// fdkit-qos-N and unlinked as "DIR/fdkit-qos-N (deleted)" (user44's F4,
// session 22: once in six SIGHUPs a 0-byte fdkit-qos-N stayed).
func TestSpillNeverLinked(t *testing.T) {
	f, name, err := createSpill(t.TempDir())
	require.NoError(t, err)
	defer f.Close()
	assert.Empty(t, name)
	link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	require.NoError(t, err)
	assert.NotContains(t, link, "fdkit-qos-", "the spill file was linked under a name")
}
