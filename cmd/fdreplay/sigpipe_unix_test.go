//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stdout a pipe whose reader is gone (fdreplay --out d | head -c 10): the
// failed write is reported and the --out files are still written, exit 1;
// SIGPIPE killed the run (status 141) and left the staging directory and
// the lock file in d.
func TestClosedStdoutPipeKeepsOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	require.NoError(t, r.Close())
	cmd := exec.Command(os.Args[0], "--no-progress", "-d", "chen,fixed", "--out", dir)
	cmd.Env = append(os.Environ(), "FDREPLAY_TEST_MAIN=1")
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errb
	err = cmd.Run()
	require.NoError(t, w.Close())
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%v", err)
	assert.Equal(t, 1, ee.ExitCode(), "%s", errb.String())
	assert.Contains(t, errb.String(), "fdreplay: writing to stdout: write /dev/stdout: broken pipe")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.Contains(t, names, "table.csv")
	assert.Contains(t, names, "index.html")
	for _, n := range names {
		assert.NotRegexp(t, `^\.partial-|^\.fdreplay-lock$`, n)
	}
}
