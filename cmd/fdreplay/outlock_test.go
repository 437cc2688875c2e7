package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Only the directories this run's own mkdir made are its to remove. Run B
// makes base/a/b between this run's (A's) look at what is missing and its
// mkdir of base/a/b: A made base/a only, and when it fails and unlocks it
// leaves base/a/b, which B is about to lock (a race of rvM's item 7: A used
// to list both, found missing before its os.MkdirAll, and removed B's).
func TestMkdirOwnRace(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b")
	var calls []string
	raced := func(d string, perm os.FileMode) error {
		calls = append(calls, d)
		if d == dir {
			require.NoError(t, os.Mkdir(d, perm)) // run B
		}
		return os.Mkdir(d, perm)
	}
	created, err := mkdirOwn(dir, raced)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(base, "a"), dir}, calls, "parents first")
	assert.Equal(t, []string{filepath.Join(base, "a")}, created)
	l, err := lockOut(dir, created)
	require.NoError(t, err)
	l.release() // A fails
	assert.DirExists(t, dir, "B's directory stays")

	// Nothing missing: nothing made, no mkdir.
	calls = nil
	created, err = mkdirOwn(dir, raced)
	require.NoError(t, err)
	assert.Empty(t, created)
	assert.Empty(t, calls)

	// All missing and made by this run: all listed, deepest first, and
	// removed by unlock.
	dir = filepath.Join(base, "c", "d", "e")
	created, err = mkdirOwn(dir, os.Mkdir)
	require.NoError(t, err)
	assert.Equal(t, []string{dir, filepath.Join(base, "c", "d"), filepath.Join(base, "c")}, created)
	l, err = lockOut(dir, created)
	require.NoError(t, err)
	l.release()
	assert.NoDirExists(t, filepath.Join(base, "c"))

	// A file in the way, as the directory or a parent, is no directory.
	file := filepath.Join(base, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, d := range []string{file, filepath.Join(file, "g")} {
		_, err = mkdirOwn(d, os.Mkdir)
		assert.ErrorIs(t, err, syscall.ENOTDIR, d)
	}
}

// A directory that goes again between its mkdir and the lock (the run that
// made it failed and removed it) is made again, and the lock taken: the
// first mkdir of dir reports success and makes nothing.
func TestLockNewOutDirGone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a")
	n := 0
	gone := func(d string, perm os.FileMode) error {
		if n++; n == 1 {
			return nil
		}
		return os.Mkdir(d, perm)
	}
	l, err := lockNewOut(dir, gone)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.FileExists(t, filepath.Join(dir, lockName))
	l.release()
	assert.NoDirExists(t, dir, "made by this run on the second try")

	// A directory that never appears is reported after a few tries.
	n = 0
	_, err = lockNewOut(dir, func(string, os.FileMode) error { n++; return nil })
	assert.ErrorContains(t, err, "--out "+dir+": cannot write there: no such file or directory")
	assert.Equal(t, 10, n)
}

// The holder named in the refusal: the PID the lock file holds, else
// another run (one that has not written its PID yet, or a file gone).
func TestHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), lockName)
	assert.Equal(t, "another fdreplay run", holder(path), "no file")
	for content, want := range map[string]string{
		"":        "another fdreplay run",
		"4242\n":  "fdreplay (pid 4242)",
		"4242":    "another fdreplay run",
		"0\n":     "another fdreplay run",
		"notes\n": "another fdreplay run",
	} {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		assert.Equal(t, want, holder(path), "%q", content)
	}
}
