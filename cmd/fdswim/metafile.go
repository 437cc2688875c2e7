package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/fdkit/fdkit/internal/reloadfile"
	"github.com/fdkit/fdkit/swim"
)

// maxMetaFile bounds what is read of a --meta-file: metadata is at most
// swim.MaxMetaLen bytes once encoded, so a larger file, comments
// included, is not a metadata file (and is not read whole into memory).
const maxMetaFile = 64 << 10

// readMetaFile reads a --meta-file (parseMetaFile), which must be a
// regular file (a symbolic link to one is followed): SIGHUP reads it again.
// Errors start with "--meta-file PATH" and say what was expected.
func readMetaFile(path string) ([]byte, error) {
	b, err := reloadfile.Read(path, maxMetaFile)
	switch {
	case errors.As(err, new(*reloadfile.KindError)):
		// A pipe (--meta-file <(cmd) is one) gives its contents once, and
		// SIGHUP would read it again as empty, no metadata.
		return nil, fmt.Errorf("--meta-file %s: %w: want a file that SIGHUP can read again (--meta gives fixed metadata)", path, err)
	case errors.As(err, new(*reloadfile.LimitError)):
		return nil, fmt.Errorf("--meta-file %s: %w: want key=value lines encoding to at most %d bytes", path, err, swim.MaxMetaLen)
	case err != nil:
		return nil, fmt.Errorf("--meta-file %s: %w", path, unwrapPath(err))
	}
	return parseMetaFile(path, b)
}

// unwrapPath drops an *os.PathError's path, which the messages above give
// once already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// parseMetaFile turns the contents of a --meta-file into metadata bytes,
// encoded as --meta encodes its pairs (URL query form sorted by key,
// url.Values.Encode): one key=value per line, the first '=' separating
// them; spaces around the line, the key and the value are dropped; blank
// lines and lines starting with '#' are skipped, as is a UTF-8 byte
// order mark at the start of the file; an empty file is no
// metadata (nil). Errors name the file, the line and what was expected: a
// line without '=', an empty key, a key given twice, and the line where
// the encoding passes swim.MaxMetaLen bytes.
func parseMetaFile(path string, data []byte) ([]byte, error) {
	v := url.Values{}
	first := map[string]int{} // key -> line it was given on
	size := 0                 // length of v.Encode() so far
	// A UTF-8 byte order mark (some Windows editors start text files
	// with one) is not part of the first key.
	text := strings.TrimPrefix(string(data), "\ufeff")
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, val, ok := strings.Cut(line, "=")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		switch {
		case !ok:
			return nil, fmt.Errorf("--meta-file %s line %d: %q: want key=value (or a blank line, or a # comment)", path, n, clip(line))
		case k == "":
			return nil, fmt.Errorf("--meta-file %s line %d: %q: want a key before '='", path, n, clip(line))
		case v.Has(k):
			return nil, fmt.Errorf("--meta-file %s line %d: key %q given twice (first on line %d): want each key once", path, n, clip(k), first[k])
		}
		v.Set(k, val)
		first[k] = n
		if size > 0 {
			size++ // '&'
		}
		size += len(url.QueryEscape(k)) + 1 + len(url.QueryEscape(val))
		if size > swim.MaxMetaLen {
			return nil, fmt.Errorf("--meta-file %s line %d: metadata reaches %d bytes once encoded here: want at most %d in all", path, n, size, swim.MaxMetaLen)
		}
	}
	if len(v) == 0 {
		return nil, nil
	}
	return []byte(v.Encode()), nil
}

// clip shortens what an error quotes from a hostile file to 64 bytes.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
