package wire

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fdkit/fdkit/internal/reloadfile"
)

// maxKeyFile bounds the size of a key file ReadKeyFile accepts: a few
// thousand keys, far more than a rotation needs.
const maxKeyFile = 1 << 20

// ReadKeyFile reads the keys of a key file, the format of fdswim's and
// fdbeat's --key-file: one key per line in hex as ParseKey takes it (32, 48
// or 64 hex digits), blank lines and lines starting with # skipped; the first
// key is the primary. Errors name the file and line; a file with no key, or
// larger than 1 MiB, is an error.
//
// The file must be a regular file (a symbolic link to one is followed): a
// named pipe, a device, a socket or a directory is refused at once with an
// error naming what it is. The open does not wait for a named pipe's
// writer, so a key file replaced by a pipe cannot block a reload (fdswim
// and fdbeat reload on SIGHUP, one file after another on one goroutine).
func ReadKeyFile(path string) ([][]byte, error) {
	b, err := reloadfile.Read(path, maxKeyFile)
	switch {
	case errors.As(err, new(*reloadfile.KindError)):
		return nil, fmt.Errorf("%s: %w: want a file of keys that a reload can read again", path, err)
	case errors.As(err, new(*reloadfile.LimitError)):
		return nil, fmt.Errorf("%s: %w: not a key file", path, err)
	case err != nil:
		return nil, err
	}
	var keys [][]byte
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := ParseKey(line)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: %w", path, errNoKey)
	}
	return keys, nil
}

var errNoKey = errors.New("no key in the file")

// ReloadFile replaces k's keys with those of the key file at path (see
// ReadKeyFile) and returns how many it now holds. On any error k keeps the
// keys it had, so a broken file during a rotation never leaves a member
// without keys.
func (k *Keyring) ReloadFile(path string) (int, error) {
	keys, err := ReadKeyFile(path)
	if err != nil {
		return 0, err
	}
	if err := k.Replace(keys); err != nil {
		return 0, err
	}
	return len(keys), nil
}
