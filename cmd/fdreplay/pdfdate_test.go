package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSourceDate(t *testing.T) {
	for _, c := range []struct {
		v    string
		want time.Time
		ok   bool
	}{
		{"0", time.Unix(0, 0).UTC(), true},
		{"1764950400", time.Date(2025, 12, 5, 16, 0, 0, 0, time.UTC), true},
		{"253402300799", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), true},
		{"253402300800", time.Time{}, false},
		{"-1", time.Time{}, false},
		{"", time.Time{}, false},
		{"1.5", time.Time{}, false},
		{"2025-12-05", time.Time{}, false},
	} {
		got, err := sourceDate(c.v)
		if !c.ok {
			assert.EqualError(t, err, `SOURCE_DATE_EPOCH="`+c.v+`": want the seconds since 1970-01-01 UTC, a decimal integer from 0 to 253402300799`, c.v)
			continue
		}
		require.NoError(t, err, c.v)
		assert.Equal(t, c.want, got, c.v)
	}
}

// With SOURCE_DATE_EPOCH two runs write identical PDFs, dated by it
// (user48's F12: every PDF differed by its CreationDate and ModDate); a
// malformed value is refused before the run.
func TestSourceDateEpochFixesPDFs(t *testing.T) {
	dir := t.TempDir()
	run := func(out, epoch string) (int, string) {
		cmd := exec.Command(os.Args[0], "--no-progress", "-d", "fixed", "--points", "3", "--out", filepath.Join(dir, out))
		cmd.Env = append(os.Environ(), "FDREPLAY_TEST_MAIN=1", "SOURCE_DATE_EPOCH="+epoch)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), errb.String()
		}
		require.NoError(t, err)
		return 0, errb.String()
	}
	for _, out := range []string{"a", "b"} {
		code, errOut := run(out, "1764950400")
		require.Equal(t, 0, code, errOut)
	}
	a, err := os.ReadFile(filepath.Join(dir, "a", "p-mr-td.pdf"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "b", "p-mr-td.pdf"))
	require.NoError(t, err)
	assert.Contains(t, string(a), "/CreationDate (D:20251205160000)")
	assert.True(t, bytes.Equal(a, b), "the two runs' PDFs differ")

	code, errOut := run("c", "yesterday")
	assert.Equal(t, 2, code)
	assert.Equal(t, "fdreplay: SOURCE_DATE_EPOCH=\"yesterday\": want the seconds since 1970-01-01 UTC, a decimal integer from 0 to 253402300799\n", errOut)
	assert.NoDirExists(t, filepath.Join(dir, "c"))
}
