package trace

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A spool never has a name in the directory (O_TMPFILE), so that a fatal
// signal right after it is created leaves nothing in $TMPDIR; see qos's
// TestSpillNeverLinked.
func TestSpoolNeverLinked(t *testing.T) {
	s, err := NewSpool(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	assert.Empty(t, s.name)
	link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(s.f.Fd())))
	require.NoError(t, err)
	assert.NotContains(t, link, "fdkit-spool-", "the spool was linked under a name")
}
