//go:build !linux

package tmpfile

import "os"

// createUnnamed is Linux's O_TMPFILE; elsewhere every file is created
// with a name first.
func createUnnamed(string) (*os.File, bool) { return nil, false }
