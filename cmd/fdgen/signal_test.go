package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/internal/outfile"
)

func TestMain(m *testing.M) {
	if os.Getenv("FDGEN_TEST_MAIN") == "1" {
		os.Args = append([]string{"fdgen"}, os.Args[1:]...)
		main()
		return
	}
	os.Exit(m.Run())
}

// SIGINT, SIGTERM or SIGHUP (a closed terminal) after the trace is written
// but before it is renamed into place: exit 130, 143 or 129, a line on stderr, and neither the output nor
// a temporary file left. An earlier file of the same name stays whole.
func TestSignalLeavesNoPartialTrace(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}, {syscall.SIGHUP, 129, "SIGHUP"}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "t.fdk.gz")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "earlier.fdk"), []byte("kept"), 0o644))
			cmd := exec.Command(os.Args[0], "--duration", "20s", "-o", out)
			cmd.Env = append(os.Environ(), "FDGEN_TEST_MAIN=1", outfile.TestPauseEnv+"=commit")
			pipe, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			sc := bufio.NewScanner(pipe)
			var lines []string
			paused := false
			for !paused && sc.Scan() {
				lines = append(lines, sc.Text())
				paused = strings.Contains(sc.Text(), "outfile: paused at commit")
			}
			require.True(t, paused, "fdgen did not pause: %v", lines)
			require.NoError(t, cmd.Process.Signal(c.sig))
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "%v", err)
			assert.Equal(t, c.code, ee.ExitCode())
			assert.Contains(t, strings.Join(lines, "\n"), "fdgen: interrupted by "+c.name+": stopped and removed 1 partial output file(s)")
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, ents, 1, "only the earlier file")
			assert.Equal(t, "earlier.fdk", ents[0].Name())
		})
	}
}

// A failed write (here: a directory where the file would go) leaves no
// temporary file either.
func TestFailedWriteLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "x.fdk"), 0o755))
	err := run([]string{"--duration", "5s", "-o", filepath.Join(dir, "x.fdk")}, nil, nil)
	assert.Error(t, err)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1)
	assert.Equal(t, "x.fdk", ents[0].Name())
}
