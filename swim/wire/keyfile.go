package wire

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxKeyFile bounds the size of a key file ReadKeyFile accepts: a few
// thousand keys, far more than a rotation needs.
const maxKeyFile = 1 << 20

// ReadKeyFile reads the keys of a key file, the format of fdswim's and
// fdbeat's --key-file: one key per line in hex as ParseKey takes it (32, 48
// or 64 hex digits), blank lines and lines starting with # skipped; the first
// key is the primary. Errors name the file and line; a file with no key, or
// larger than 1 MiB, is an error.
func ReadKeyFile(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("%s: larger than %d bytes: not a key file", path, maxKeyFile)
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
