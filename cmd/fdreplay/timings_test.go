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

// runMain runs fdreplay (this test binary, through main) with args and the
// extra environment env, returning its stdout, stderr and exit code.
func runMain(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "FDREPLAY_TEST_MAIN=1"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), errb.String(), code
}

// FDREPLAY_CPUPROFILE set to a file: the run is the same (its stdout too)
// and the file holds a profile (gzip's magic bytes, as runtime/pprof
// writes it).
func TestCPUProfileEnvWritesProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	plainOut, _, plainCode := runMain(t, nil, "--no-progress", "-d", "fixed,chen")
	require.Equal(t, 0, plainCode)
	out, stderr, code := runMain(t, []string{cpuProfileEnv + "=" + path}, "--no-progress", "-d", "fixed,chen")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, plainOut, out)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(b), 2)
	assert.Equal(t, []byte{0x1f, 0x8b}, b[:2], "not a gzip-compressed profile")
}

// A profile file that cannot be created stops fdreplay before the run,
// with exit code 2 and a message naming the variable and the file.
func TestCPUProfileEnvUncreatable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "cpu.pprof")
	out, stderr, code := runMain(t, []string{cpuProfileEnv + "=" + path}, "--no-progress", "-d", "fixed")
	assert.Equal(t, 2, code)
	assert.Empty(t, out, "the run started")
	assert.Contains(t, stderr, cpuProfileEnv)
	assert.Contains(t, stderr, path)
}

// A profile name that exists is refused before the run, with exit code 2,
// and the file is left as it was: an input trace named as the profile was
// overwritten with it (user41), as was the index.html of an earlier --out.
func TestCPUProfileEnvRefusesExisting(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.csv")
	content := []byte("sender,seq,arrival\n")
	require.NoError(t, os.WriteFile(trace, content, 0o644))
	for _, path := range []string{trace, os.DevNull} {
		out, stderr, code := runMain(t, []string{cpuProfileEnv + "=" + path}, "--no-progress", "-d", "fixed")
		assert.Equal(t, 2, code, stderr)
		assert.Empty(t, out, "the run started")
		assert.Contains(t, stderr, cpuProfileEnv+"="+path)
		assert.Contains(t, stderr, "exists")
	}
	b, err := os.ReadFile(trace)
	require.NoError(t, err)
	assert.Equal(t, content, b, "the existing file was changed")
}

// The profile is staged beside its name and renamed onto it at the end:
// the directory holds the profile and nothing else afterwards.
func TestCPUProfileEnvLeavesOnlyTheProfile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cpu.pprof")
	_, stderr, code := runMain(t, []string{cpuProfileEnv + "=" + path}, "--no-progress", "-d", "fixed")
	require.Equal(t, 0, code, stderr)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"cpu.pprof"}, names)
}
