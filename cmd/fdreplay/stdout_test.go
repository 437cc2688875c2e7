package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errFull = errors.New("no space left on device")

// fullWriter takes room bytes, then refuses every write with errFull, as
// a full disk does.
type fullWriter struct{ room int }

func (f *fullWriter) Write(p []byte) (int, error) {
	if len(p) <= f.room {
		f.room -= len(p)
		return len(p), nil
	}
	n := f.room
	f.room = 0
	return n, errFull
}

// TestStdoutFullIsAnError: the table and its header go to stdout through
// unchecked prints; a stdout that refuses them (fdreplay > /dev/full)
// must end the run with exit 1 and the error, not exit 0 with nothing
// written. It is so whether the first write fails or a later one.
func TestStdoutFullIsAnError(t *testing.T) {
	args := []string{"--no-progress", "-d", "fixed"}
	code, out, errOut := runCmd(args...)
	require.Equal(t, 0, code, errOut)
	require.NotEmpty(t, out)
	// Room for none of it, for half, for all but its last byte.
	for _, room := range []int{0, len(out) / 2, len(out) - 1} {
		var errb bytes.Buffer
		code := run(withStdin(strings.NewReader("")), args, &fullWriter{room: room}, &errb)
		assert.Equal(t, 1, code, "room %d: %s", room, errb.String())
		assert.Equal(t, "fdreplay: writing to stdout: no space left on device\n", errb.String(), "room %d", room)
	}
}

// TestStdoutFullWithSweepSaysItOnce: the CSV of --sweep checks its writes
// itself and returns the failed write; it is said once, in the table's
// words (user48's F8: "qos: writing CSV: ..." for the sweep, "writing to
// stdout: ..." for the table), whichever write fails first.
func TestStdoutFullWithSweepSaysItOnce(t *testing.T) {
	args := []string{"--no-progress", "-d", "fixed", "--sweep", "--points", "3"}
	code, out, errOut := runCmd(args...)
	require.Equal(t, 0, code, errOut)
	csvAt := strings.Index(out, "curves (CSV")
	require.Positive(t, csvAt)
	for _, room := range []int{0, csvAt, csvAt + 100, len(out) - 1} {
		var errb bytes.Buffer
		code := run(withStdin(strings.NewReader("")), args, &fullWriter{room: room}, &errb)
		assert.Equal(t, 1, code, "room %d: %s", room, errb.String())
		assert.Equal(t, "fdreplay: writing to stdout: no space left on device\n", errb.String(), "room %d", room)
	}
}
