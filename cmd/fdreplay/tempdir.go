package main

import (
	"fmt"
	"os"
)

// checkTempDir fails unless the system's temporary directory ($TMPDIR,
// else /tmp; os.TempDir) is a directory fdreplay can create entries in.
// --out needs it: the PDF plots are drawn through it (the PDF backend
// writes its font data there), and without this check a missing or
// read-only $TMPDIR failed the run only after the whole replay, at the
// first PDF (user44's F5, session 22). A directory is created and removed
// to find out, as the backend does.
func checkTempDir(flag string) error {
	dir := os.TempDir()
	d, err := os.MkdirTemp(dir, "fdreplay-check-*")
	if err != nil {
		return fmt.Errorf("%s: the temporary directory %s ($TMPDIR) is not a writable directory (%w): the PDF plots are drawn through it; set TMPDIR to one", flag, dir, err)
	}
	if err := os.Remove(d); err != nil {
		return fmt.Errorf("%s: the temporary directory %s ($TMPDIR): %w", flag, dir, err)
	}
	return nil
}
