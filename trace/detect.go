package trace

// Format detection: what the Reader sniffs from a file's first bytes to
// tell a binary file, an fdkit trace and the CSV layouts apart, and the
// error that names the file and line when nothing matches.

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// binaryAt returns the offset of the first byte that makes the sniffed
// content not text, a NUL byte or one that is not valid UTF-8 (ignoring a
// character cut at the end of a full window), or -1 when it is text.
func binaryAt(b []byte) int {
	end := len(b) // where a character cut at the end of the window may start
	if len(b) == sniffSize {
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			end = i
		} else {
			end = len(b) - utf8.UTFMax
		}
	}
	for i := 0; i < len(b); {
		if b[i] == 0 {
			return i
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 && i < end {
			return i
		}
		i += n
	}
	return -1
}

// knownBinary names the data that b, the start of a file (or of what its
// gzip or xz stream holds, comp), begins with, when its magic bytes are
// those of a format users give by mistake, and what to do: a compressor
// or an archive fdkit does not read, a second layer of compression, text
// in UTF-16 (user48's F16: all were "binary data"). "" when none is
// recognised.
func knownBinary(b []byte, comp string) (what, do string) {
	switch {
	case len(b) >= 4 && string(b[:3]) == "BZh" && b[3] >= '1' && b[3] <= '9':
		return "bzip2-compressed data", "decompress it first (bunzip2 -k)"
	case bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd-compressed data", "decompress it first (zstd -d)"
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return "a zip archive", "extract the trace first (unzip)"
	case bytes.HasPrefix(b, []byte("7z\xbc\xaf\x27\x1c")):
		return "a 7z archive", "extract the trace first (7z x)"
	case comp != "" && bytes.HasPrefix(b, gzipMagic):
		return "gzip-compressed data inside the " + comp + " stream", "the trace is compressed twice: decompress the outer layer first"
	case comp != "" && bytes.HasPrefix(b, xzMagic):
		return "xz-compressed data inside the " + comp + " stream", "the trace is compressed twice: decompress the outer layer first"
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}), bytes.HasPrefix(b, []byte{0xfe, 0xff}):
		return "UTF-16 text (its byte order mark)", "convert it to UTF-8 first (iconv -f UTF-16 -t UTF-8)"
	}
	return "", ""
}

// ErrUnknownFormat is wrapped by the *ParseError of a Reader that was to
// detect the format (FormatAuto, no Columns) and could not: the error names
// the file, the first non-blank line, what each detectable format wants
// and why the line is none of them. Commands test it with errors.Is to add
// how their flags name a format.
var ErrUnknownFormat = errors.New("format not detected")

// undetected is the error for sniffed content whose format detect could
// not tell: the line it looked at (the first non-blank one) and why that
// line is no format.
func undetected(name string, skipped int, sniff []byte) error {
	pe := &ParseError{File: name, Line: skipped + 1, Want: detectedFormats}
	rest := sniff
	for n := skipped + 1; len(rest) > 0; n++ {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		pe.Line, pe.Got = n, quoteGot(line)
		pe.Err = fmt.Errorf("%w: %s", ErrUnknownFormat, whyNoFormat(line))
		return pe
	}
	pe.Got, pe.Err = "empty input", ErrUnknownFormat
	if skipped > 0 || len(sniff) > 0 {
		pe.Got = "only blank lines"
	}
	return pe
}

// whyNoFormat says why a non-blank line is none of the detected formats.
func whyNoFormat(line []byte) string {
	if sep := bytes.IndexAny(line, ",;\t"); sep >= 0 {
		if _, ok := parseUint(bytes.TrimSpace(line[:sep])); !ok {
			return "the line looks like a CSV header; give the format and the names of its sender, seq, sent and arrival columns"
		}
		return "the line looks like CSV data without a header; CSV needs a header naming its columns"
	}
	n, bad := uintFields(line)
	if bad != nil {
		return fmt.Sprintf("field %d %q is not an unsigned integer, as LIP6 reception wants", n+1, quoteGot(bad))
	}
	if n == 3 {
		return "3 integer fields, LIP6 reception has 5 (a LIP6 emission file without its numseq header is read only when its format is given)"
	}
	return fmt.Sprintf("%d integer fields, LIP6 reception has 5", n)
}

// uintFields counts the unsigned-integer fields that start line and
// returns the first field that is not one (nil when none).
func uintFields(line []byte) (n int, bad []byte) {
	for p := line; ; n++ {
		var f []byte
		f, p = nextField(p)
		if len(f) == 0 {
			return n, nil
		}
		if _, ok := parseUint(f); !ok {
			return n, f
		}
	}
}

// detect guesses the format from the first non-blank line.
func detect(sniff []byte, cols Columns) Format {
	if !cols.isZero() {
		return FormatCSV
	}
	rest := sniff
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		switch {
		case bytes.HasPrefix(line, []byte(fdkitMagic)):
			return FormatFDKit
		case bytes.HasPrefix(line, []byte("numseq")):
			return FormatLIP6Emission
		}
		if n, bad := uintFields(line); bad == nil && n == 5 {
			return FormatLIP6
		}
		return FormatAuto
	}
	return FormatAuto
}
