package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"slices"
)

// xzErrors passes an xz decompressor's data through and says, for its
// errors, what was expected in the words of the gzip path: the library's
// own texts ("writeMatch: distance out of range", a bare "unexpected
// EOF") name neither the fault nor what to do (user44's F17).
type xzErrors struct {
	r    io.Reader    // the decompressor
	raw  *errRecorder // the compressed input under it
	tail *xzTail      // what the decompressor read of it
}

func (x *xzErrors) Read(p []byte) (int, error) {
	n, err := x.r.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	tail := x.tail.last()
	return n, &xzError{want: xzWant(err, x.raw.err, tail), err: err, at: x.tail.n, appended: notStreamAfterFooter(tail)}
}

// xzWant says what an error of the xz decompressor shows was expected,
// given the error of the compressed input, if any, and the last bytes the
// decompressor read (xzTail); "" when the error is the input's own (a read
// error of the file) and says enough.
func xzWant(err, rawErr error, tail []byte) string {
	switch {
	case rawErr != nil && errors.Is(err, rawErr):
		return ""
	case errors.Is(err, io.ErrUnexpectedEOF):
		// Cut inside a stream, or fewer bytes than a stream header
		// after the last one: the two cannot be told apart.
		return "a complete xz stream: the file ends inside one (cut short, or a few bytes that are no xz stream appended to it)"
	case notStreamAfterFooter(tail):
		// Only a stream after the first is read past its header here:
		// the first one's header was checked when the Reader opened.
		return "only xz streams (and their zero padding) in the file: the bytes after the last complete stream are not one (data appended to the file?)"
	}
	return "intact xz data: the compressed data is damaged (a changed or lost byte), so it cannot be decompressed"
}

// xzError is an xz decompressor's error with what was expected and the
// bytes of the compressed file it had read (at); it unwraps to the
// decompressor's error.
type xzError struct {
	want     string
	err      error
	at       uint64
	appended bool // the bytes after the last complete stream are no stream
}

func (e *xzError) Error() string { return e.err.Error() }
func (e *xzError) Unwrap() error { return e.err }

// errRecorder remembers the last error other than io.EOF that reading
// through it returned.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// xzTail passes the compressed input to the xz decompressor and keeps the
// last xzTailLen bytes it read. The decompressor reads no byte before it
// needs it (one at a time inside a block, a stream header's 12 bytes when
// it looks for the next stream), so on an error they end where it
// stopped.
type xzTail struct {
	r   io.Reader
	buf [xzTailLen]byte
	n   uint64 // bytes read in all
}

// xzTailLen bounds the bytes xzTail keeps: a stream footer (12 bytes), up
// to 100 bytes of stream padding and a stream header (12); a power of 2.
const xzTailLen = 128

func (t *xzTail) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	b := p[:n]
	if len(b) > xzTailLen {
		t.n += uint64(len(b) - xzTailLen)
		b = b[len(b)-xzTailLen:]
	}
	for _, c := range b {
		t.buf[t.n%xzTailLen] = c
		t.n++
	}
	return n, err
}

// last returns the bytes kept, oldest first.
func (t *xzTail) last() []byte {
	if t.n <= xzTailLen {
		return slices.Clone(t.buf[:t.n])
	}
	i := t.n % xzTailLen
	return append(slices.Clone(t.buf[i:]), t.buf[:i]...)
}

// xzFooterLen is the length of an xz stream footer: CRC32 (4 bytes, little
// endian) of the next 6, Backward Size (4), Stream Flags (2), and the magic
// "YZ" (The .xz File Format 1.2.1, section 2.1.2).
const xzFooterLen = 12

// notStreamAfterFooter reports whether tail, the last bytes the xz
// decompressor read before an error, end with a complete stream (its
// footer), then stream padding (groups of 4 zero bytes), then 1 to 12
// bytes that do not start as a stream header does (xzMagic): the
// decompressor looked for another stream after the last and found other
// data.
func notStreamAfterFooter(tail []byte) bool {
	for c := 1; c <= 12 && c+xzFooterLen <= len(tail); c++ {
		head := tail[len(tail)-c:]
		if bytes.HasPrefix(xzMagic, head[:min(c, len(xzMagic))]) || c >= 4 && allZero(head[:4]) {
			continue // the start of a header, or padding
		}
		for end := len(tail) - c; end >= xzFooterLen; end -= 4 {
			f := tail[end-xzFooterLen : end]
			if bytes.Equal(f[10:], []byte("YZ")) && binary.LittleEndian.Uint32(f) == crc32.ChecksumIEEE(f[4:10]) {
				return true
			}
			if end-4 < 0 || !allZero(tail[end-4:end]) {
				break
			}
		}
	}
	return false
}

// allZero reports whether b holds only zero bytes.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
