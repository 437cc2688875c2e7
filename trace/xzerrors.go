package trace

import (
	"errors"
	"io"
)

// xzErrors passes an xz decompressor's data through and says, for its
// errors, what was expected in the words of the gzip path: the library's
// own texts ("writeMatch: distance out of range", a bare "unexpected
// EOF") name neither the fault nor what to do (user44's F17).
type xzErrors struct {
	r   io.Reader    // the decompressor
	raw *errRecorder // the compressed input under it
}

func (x *xzErrors) Read(p []byte) (int, error) {
	n, err := x.r.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	return n, &xzError{want: xzWant(err, x.raw.err), err: err}
}

// xzWant says what an error of the xz decompressor shows was expected,
// given the error of the compressed input, if any; "" when the error is
// the input's own (a read error of the file) and says enough.
func xzWant(err, rawErr error) string {
	switch {
	case rawErr != nil && errors.Is(err, rawErr):
		return ""
	case errors.Is(err, io.ErrUnexpectedEOF):
		// Cut inside a stream, or fewer bytes than a stream header
		// after the last one: the two cannot be told apart.
		return "a complete xz stream: the file ends inside one (cut short, or a few bytes that are no xz stream appended to it)"
	case err.Error() == "xz: invalid header magic bytes":
		// Only a stream after the first is read past its header here:
		// the first one's header was checked when the Reader opened.
		return "only xz streams (and their zero padding) in the file: the bytes after the last complete stream are not one (data appended to the file?)"
	}
	return "intact xz data: the compressed data is damaged (a changed or lost byte), so it cannot be decompressed"
}

// xzError is an xz decompressor's error with what was expected; it
// unwraps to the decompressor's error.
type xzError struct {
	want string
	err  error
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
