package outfile

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// Staged files are invisible in the destination until Commit, which moves
// them all in (replacing older versions) and removes the stale paths.
func TestCommit(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.csv"), []byte("old"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stale.png"), []byte("old"), 0o644))
	s, err := New(dir, "cmd")
	require.NoError(t, err)
	require.NoError(t, s.Write("a.csv", writeString("new a")))
	require.NoError(t, s.Write("b.json", writeString("new b")))
	got, err := os.ReadFile(filepath.Join(dir, "a.csv"))
	require.NoError(t, err)
	assert.Equal(t, "old", string(got), "not moved in before Commit")
	assert.NotContains(t, names(t, dir), "b.json")

	files, err := s.Commit([]string{filepath.Join(dir, "stale.png"), filepath.Join(dir, "never-was.png")})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.json")}, files)
	assert.Equal(t, []string{"a.csv", "b.json"}, names(t, dir), "stale file and staging directory gone")
	got, err = os.ReadFile(filepath.Join(dir, "a.csv"))
	require.NoError(t, err)
	assert.Equal(t, "new a", string(got))
	s.Abort() // harmless after Commit
	assert.Equal(t, []string{"a.csv", "b.json"}, names(t, dir))
	_, err = s.Commit(nil)
	assert.Error(t, err, "a second commit")
}

// Abort removes everything staged; a leftover of a killed run is removed by
// the next New for the same command.
func TestAbortAndLeftovers(t *testing.T) {
	dir := t.TempDir()
	s, err := New(dir, "cmd")
	require.NoError(t, err)
	require.NoError(t, s.Write("a.csv", writeString("x")))
	s.Abort()
	assert.Empty(t, names(t, dir))

	// A process that has ended: its staging is a leftover.
	done := exec.Command("true")
	require.NoError(t, done.Run())
	killed := filepath.Join(dir, fmt.Sprintf(".partial-cmd-%d-123", done.Process.Pid))
	require.NoError(t, os.MkdirAll(killed, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(killed, "half.csv"), []byte("a,b\n1,"), 0o644))
	nameless := filepath.Join(dir, ".partial-cmd-xyz")
	require.NoError(t, os.MkdirAll(nameless, 0o755))
	// A running process (the parent of this test): another run writing to
	// the same directory, whose staging must stay.
	running := filepath.Join(dir, fmt.Sprintf(".partial-cmd-%d-456", os.Getppid()))
	require.NoError(t, os.MkdirAll(running, 0o755))
	other := filepath.Join(dir, ".partial-othercmd-1-1")
	require.NoError(t, os.MkdirAll(other, 0o755))
	s, err = New(dir, "cmd")
	require.NoError(t, err)
	defer s.Abort()
	assert.NoDirExists(t, killed)
	assert.NoDirExists(t, nameless)
	assert.DirExists(t, running, "a live run's staging is left alone")
	assert.DirExists(t, other, "another command's staging is not ours to remove")
	assert.Contains(t, filepath.Base(s.Dir()), fmt.Sprintf(".partial-cmd-%d-", os.Getpid()))
}

func TestCreateRefusesPaths(t *testing.T) {
	s, err := New(t.TempDir(), "cmd")
	require.NoError(t, err)
	defer s.Abort()
	for _, n := range []string{"", "../x", "sub/x", ".partial-x", "."} {
		_, err := s.Create(n)
		assert.Error(t, err, "%q", n)
	}
}

// After a signal every live staging is gone and no Commit can move files
// in any more.
func TestAbortAll(t *testing.T) {
	defer func() { mu.Lock(); interrupted = false; mu.Unlock() }()
	dir := t.TempDir()
	s1, err := New(dir, "a")
	require.NoError(t, err)
	s2, err := New(dir, "b")
	require.NoError(t, err)
	require.NoError(t, s1.Write("x", writeString("1")))
	require.NoError(t, s2.Write("y", writeString("2")))
	require.NoError(t, s2.Write("z", writeString("3")))
	assert.Equal(t, 3, abortAll())
	assert.Empty(t, names(t, dir))
	_, err = s1.Commit(nil)
	assert.ErrorIs(t, err, ErrInterrupted)
	_, err = New(dir, "c")
	assert.ErrorIs(t, err, ErrInterrupted)
}

// A signal runs the functions registered with OnInterrupt, after the
// stagings are gone; an unregistered one does not run.
func TestOnInterrupt(t *testing.T) {
	defer func() { mu.Lock(); interrupted = false; mu.Unlock() }()
	dir := t.TempDir()
	s, err := New(dir, "a")
	require.NoError(t, err)
	var ran []string
	removeA := OnInterrupt(func() { ran = append(ran, fmt.Sprintf("a: %d left", len(names(t, dir)))) })
	defer removeA()
	removeB := OnInterrupt(func() { ran = append(ran, "b") })
	removeB()
	require.NoError(t, s.Write("x", writeString("1")))
	assert.Equal(t, 1, abortAll())
	assert.Equal(t, []string{"a: 0 left"}, ran)
}

func TestExitCode(t *testing.T) {
	assert.Equal(t, 130, ExitCode(syscall.SIGINT))
	assert.Equal(t, 143, ExitCode(syscall.SIGTERM))
}
