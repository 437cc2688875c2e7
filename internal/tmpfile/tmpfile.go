// Package tmpfile creates temporary files that have no name in the file
// system, so that whatever ends the process (a signal, a crash, SIGKILL)
// leaves nothing behind in the temporary directory: trace.Spool's spools
// and the qos package's spill files.
//
// On Linux a file is opened with O_TMPFILE (open(2)) and is never linked.
// Elsewhere, and on Linux where the file system refuses O_TMPFILE, it is
// created with os.CreateTemp and removed at once: a process killed between
// the two leaves the file behind, and on systems that cannot remove an
// open file (Windows) it stays linked until the caller removes it.
package tmpfile

import (
	"os"
)

// Create creates a temporary file in dir (os.TempDir() when dir is empty)
// for reading and writing. name is the file's path when it is still linked
// (the caller removes it after closing f), else empty; pattern is the
// name's pattern for os.CreateTemp when a file has to be linked first. The
// error is os.CreateTemp's, naming dir.
func Create(dir, pattern string) (f *os.File, name string, err error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if f, ok := createUnnamed(dir); ok {
		return f, "", nil
	}
	return createRemoved(dir, pattern)
}

// createRemoved creates a named file and removes it at once.
func createRemoved(dir, pattern string) (*os.File, string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, "", err
	}
	if os.Remove(f.Name()) != nil {
		return f, f.Name(), nil
	}
	return f, "", nil
}
