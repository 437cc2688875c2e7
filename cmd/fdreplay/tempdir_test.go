package main

import (
	"bytes"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A missing $TMPDIR, or one that is a file, stops --out at the start with
// one line naming it, before the replay and before DIR is created
// (user44's F5: it failed after the whole replay, in the PDF backend,
// after raw log lines of the library).
func TestOutNeedsWritableTempDir(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "afile")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, c := range []struct{ tmp, want string }{
		{filepath.Join(base, "gone"), "stat " + filepath.Join(base, "gone") + ": no such file or directory"},
		{file, "not a directory"},
	} {
		out := filepath.Join(base, "out")
		stdout, stderr, code := runMain(t, []string{"TMPDIR=" + c.tmp}, "--no-progress", "-d", "chen", "--out", out)
		assert.Equal(t, 1, code)
		assert.Empty(t, stdout)
		assert.Regexp(t, `^fdreplay: --out: the temporary directory `+c.tmp+` \(\$TMPDIR\) is not a writable directory \([^\n]*`+c.want+`\): fdreplay's temporary files go there; set TMPDIR to one\n$`, stderr)
		assert.NoDirExists(t, out)
	}
	// Without --out nothing needs it: the table prints.
	_, _, code := runMain(t, []string{"TMPDIR=" + filepath.Join(base, "gone")}, "--no-progress", "-d", "chen")
	assert.Equal(t, 0, code)
}

// Lines a library prints through the standard log package read as
// fdreplay's: its prefix, no date and time.
func TestLibraryLogRouted(t *testing.T) {
	w, flags, prefix := log.Writer(), log.Flags(), log.Prefix()
	t.Cleanup(func() { log.SetOutput(w); log.SetFlags(flags); log.SetPrefix(prefix) })
	var b bytes.Buffer
	routeLibraryLog(&b)
	log.Printf("vgpdf: could not generate font data")
	assert.Equal(t, "fdreplay: vgpdf: could not generate font data\n", b.String())
}
