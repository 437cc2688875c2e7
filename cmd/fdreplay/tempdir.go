package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// checkTempDir fails unless the system's temporary directory ($TMPDIR,
// else /tmp; os.TempDir) is a directory fdreplay can create entries in.
// --out needed it for the PDF plots, which are now drawn through a
// directory in the staging directory (privateTempDir): without this check a
// missing or read-only $TMPDIR failed the run only after the whole replay,
// at the first PDF (user44's F5, session 22); the replay's temporary files
// still go there. A directory is created and removed
// to find out, as the backend does.
func checkTempDir(flag string) error {
	dir := os.TempDir()
	d, err := os.MkdirTemp(dir, "fdreplay-check-*")
	if err != nil {
		return fmt.Errorf("%s: the temporary directory %s ($TMPDIR) is not a writable directory (%w): fdreplay's temporary files go there; set TMPDIR to one", flag, dir, err)
	}
	if err := os.Remove(d); err != nil {
		return fmt.Errorf("%s: the temporary directory %s ($TMPDIR): %w", flag, dir, err)
	}
	return nil
}

// privateTempName is the directory inside --out's staging directory that
// the write phase takes as the process's temporary directory.
const privateTempName = ".tmp"

// privateTempDir points the process's temporary directory ($TMPDIR; TMP on
// Windows, where os.TempDir reads it first) at a new directory privateTempName
// inside staging for the write phase, and returns the function that points
// it back and removes that directory. The PDF backend (gonum's vgpdf)
// creates a gofpdf-makefont-* directory in the temporary directory for each
// PDF and removes it by defer, which a fatal signal skips: the signal
// handler exits the process. Inside the staging directory such a directory
// goes with the staging directory, which the handler removes (and the next
// run removes after SIGKILL), so nothing is left in $TMPDIR. Nothing else
// of the run takes a temporary file in the write phase.
func privateTempDir(staging string) (restore func() error, err error) {
	dir := filepath.Join(staging, privateTempName)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	name := "TMPDIR"
	if runtime.GOOS == "windows" {
		name = "TMP"
	}
	old, had := os.LookupEnv(name)
	if err := os.Setenv(name, dir); err != nil {
		_ = os.Remove(dir)
		return nil, err
	}
	return func() error {
		if had {
			_ = os.Setenv(name, old)
		} else {
			_ = os.Unsetenv(name)
		}
		return os.RemoveAll(dir)
	}, nil
}
