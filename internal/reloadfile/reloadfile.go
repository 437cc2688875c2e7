// Package reloadfile reads the files a running command reads again when
// told to (on SIGHUP: fdswim's --key-file, --meta-file and
// --encryption-stage-file, fdbeat's --key-file): regular files only, read
// whole up to a bound, and never waited on. A named pipe in place of such a file gives
// its contents once and would block the reloading goroutine in open until
// a writer comes (user37 F7: a key file replaced by a pipe stopped every
// later reload, silently); a device may never end.
package reloadfile

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// KindError is Read's error for a path that is not a regular file (a
// symbolic link to one is followed): Kind says what it is, "a named
// pipe", "a directory", "a socket", "a device" or another file type.
type KindError struct{ Kind string }

func (e *KindError) Error() string { return e.Kind + ", not a regular file" }

// LimitError is Read's error for a file of more than Max bytes.
type LimitError struct{ Max int }

func (e *LimitError) Error() string { return fmt.Sprintf("larger than %d bytes", e.Max) }

// Read returns the contents of the regular file at path, of at most max
// bytes. It opens nothing that is not a regular file, and checks again
// what it opened; it opens without waiting for a named pipe's writer
// (O_NONBLOCK, which changes nothing for a regular file) and reads at
// most max+1 bytes. Errors: *KindError, *LimitError, or the
// *os.PathError of the open or read; none of them names path beyond what
// os puts in a PathError.
func Read(path string, max int) ([]byte, error) {
	// Stat first: opening a device may do something (a terminal, a
	// tape), and opening a Unix socket fails with ENXIO, which does not
	// say what is wrong with the path. A Stat error is left to the
	// open, which says the same.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, &KindError{Kind: kind(st.Mode())}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() { // replaced since the Stat
		return nil, &KindError{Kind: kind(st.Mode())}
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, &LimitError{Max: max}
	}
	return b, nil
}

// kind names the kind of a file that is not a regular file.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a " + m.Type().String() + " file"
}
