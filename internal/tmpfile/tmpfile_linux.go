package tmpfile

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// createUnnamed opens a file without a name in dir with O_TMPFILE. ok is
// false when it cannot (a file system or kernel without O_TMPFILE, or any
// other error: createRemoved then tries and reports it).
func createUnnamed(dir string) (f *os.File, ok bool) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, false
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed temporary file)")), true
}
