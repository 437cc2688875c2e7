package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// checkTempDir fails unless the system's temporary directory ($TMPDIR,
// else /tmp; os.TempDir) is a directory fdreplay can create entries in.
// --out needed it for the PDF plots, which are now drawn through a
// directory in the staging directory (writePDFs): without this check a
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
// the process takes as its temporary directory while the PDF plots are
// drawn (writePDFs).
const privateTempName = ".tmp"

// writePDFs runs jobs, which draw the PDF plots into the staging directory
// of --out (out), on every core (inParallel), with the process's temporary
// directory ($TMPDIR; TMP on Windows, where os.TempDir reads it first)
// pointed at a new directory privateTempName inside staging; it points it
// back and removes that directory after. The PDF backend (gonum's vgpdf)
// creates a gofpdf-makefont-* directory in os.TempDir the first time the
// process embeds a font, and removes it by defer, which a fatal signal
// skips: the signal handler exits the process. Inside the staging
// directory such a directory goes with the staging directory, which the
// handler removes (and the next run removes after SIGKILL), so nothing is
// left in $TMPDIR. The backend takes no directory, so the variable is the
// only lever: writePDFs is called when every other job of the write phase
// has ended, so that nothing else of the run takes a temporary file while
// it is changed.
func writePDFs(out, staging string, jobs []func() error) error {
	dir := filepath.Join(staging, privateTempName)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("--out %s: %w", out, err)
	}
	name := "TMPDIR"
	if runtime.GOOS == "windows" {
		name = "TMP"
	}
	old, had := os.LookupEnv(name)
	if err := os.Setenv(name, dir); err != nil {
		_ = os.Remove(dir)
		return fmt.Errorf("--out %s: %w", out, err)
	}
	err := inParallel(jobs)
	// Pointed back before Commit, which moves everything in the staging
	// directory.
	var rerr error
	if had {
		rerr = os.Setenv(name, old)
	} else {
		rerr = os.Unsetenv(name)
	}
	if rerr := errors.Join(rerr, os.RemoveAll(dir)); rerr != nil && err == nil {
		err = fmt.Errorf("--out %s: %w", out, rerr)
	}
	return err
}
