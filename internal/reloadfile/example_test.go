package reloadfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fdkit/fdkit/internal/reloadfile"
)

// A command reading its --stage-file again on SIGHUP: a regular file is
// read whole, a directory in its place is refused with what it is, and
// the caller adds the flag and what it wanted.
func Example() {
	dir, _ := os.MkdirTemp("", "reload")
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "stage")
	_ = os.WriteFile(p, []byte("sealed\n"), 0o600)

	b, err := reloadfile.Read(p, 1<<10)
	fmt.Printf("%q %v\n", b, err)

	_, err = reloadfile.Read(dir, 1<<10)
	if errors.As(err, new(*reloadfile.KindError)) {
		fmt.Printf("--stage-file DIR: %v: want a file that SIGHUP can read again\n", err)
	}
	// Output:
	// "sealed\n" <nil>
	// --stage-file DIR: a directory, not a regular file: want a file that SIGHUP can read again
}
