package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ulikunitz/xz"
)

const (
	fdkitMagic   = "#fdkit-trace"
	fdkitVersion = 1
	fdkitColumns = "sender seq sent arrival"
)

// Header is the header of an fdkit trace file.
type Header struct {
	// Version is the format version; the Writer writes 1.
	Version int
	// Interval is the nominal heartbeat interval Δ; 0 when unknown.
	Interval time.Duration
	// Meta holds further key=value pairs of the header line (for example
	// preset and seed of a generated trace). Keys are lower-case letters,
	// digits, '-' and '_'; values are non-empty and hold no blanks.
	Meta map[string]string
	// Comments are the comment lines after the header line, without the
	// leading "#" and one following space.
	Comments []string
}

// Compression selects how a Writer compresses its output.
type Compression int

// Compressions.
const (
	NoCompression Compression = iota
	Gzip
	XZ
)

// CompressionFor returns the compression a trace file named path is
// conventionally written with: Gzip for a ".gz" suffix, XZ for ".xz",
// NoCompression otherwise. (Readers detect compression from the content.)
func CompressionFor(path string) Compression {
	switch {
	case strings.HasSuffix(path, ".gz"):
		return Gzip
	case strings.HasSuffix(path, ".xz"):
		return XZ
	}
	return NoCompression
}

// Writer writes records in fdkit format (version 1, nanoseconds). Close
// flushes and finishes the compressed stream; it does not close the
// underlying io.Writer.
type Writer struct {
	bw  *bufio.Writer
	zc  io.WriteCloser
	out io.Writer   // the underlying writer
	c   Compression // of zc
	// dirty: bytes were written since NewWriter or the last Flush.
	dirty bool
	buf   []byte
	err   error
}

// NewWriter writes the header h to w and returns a Writer for the records.
// h.Version 0 means 1; any other version than 1 is an error, as are a
// negative interval, malformed Meta keys or values, and values or comments
// that the Reader would not accept as text (a NUL byte, invalid UTF-8).
func NewWriter(w io.Writer, h Header, c Compression) (*Writer, error) {
	if h.Version != 0 && h.Version != fdkitVersion {
		return nil, fmt.Errorf("trace: cannot write fdkit format version %d (only %d)", h.Version, fdkitVersion)
	}
	if h.Interval < 0 {
		return nil, fmt.Errorf("trace: negative interval %v", h.Interval)
	}
	for k, v := range h.Meta {
		if !validKey(k) || k == "version" || k == "interval" || k == "unit" {
			return nil, fmt.Errorf("trace: invalid header key %q (want [a-z0-9_-]+, not version, interval or unit)", k)
		}
		if v == "" || strings.ContainsAny(v, " \t\r\n") || !isText(v) {
			return nil, fmt.Errorf("trace: header value %q for key %q is empty, holds blanks, a NUL byte or invalid UTF-8", v, k)
		}
	}
	for _, cm := range h.Comments {
		if strings.ContainsAny(cm, "\r\n") || !isText(cm) {
			return nil, fmt.Errorf("trace: comment %q holds a line break, a NUL byte or invalid UTF-8", cm)
		}
	}
	wr := &Writer{out: w, c: c, dirty: true}
	switch c {
	case NoCompression:
		wr.bw = bufio.NewWriterSize(w, 64<<10)
	case Gzip:
		zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
		wr.zc = zw
		wr.bw = bufio.NewWriterSize(zw, 64<<10)
	case XZ:
		zw, err := xz.NewWriter(w)
		if err != nil {
			return nil, err
		}
		wr.zc = zw
		wr.bw = bufio.NewWriterSize(zw, 64<<10)
	default:
		return nil, fmt.Errorf("trace: unknown compression %d", c)
	}
	fmt.Fprintf(wr.bw, "%s version=%d interval=%s unit=ns", fdkitMagic, fdkitVersion, h.Interval)
	for _, k := range slices.Sorted(maps.Keys(h.Meta)) {
		fmt.Fprintf(wr.bw, " %s=%s", k, h.Meta[k])
	}
	wr.bw.WriteByte('\n')
	for _, cm := range h.Comments {
		wr.bw.WriteString("# ")
		wr.bw.WriteString(cm)
		wr.bw.WriteByte('\n')
	}
	wr.bw.WriteString(fdkitColumns + "\n")
	return wr, nil
}

// isText reports whether s can appear in a file the Reader accepts as text:
// valid UTF-8 without NUL bytes (see binaryAt).
func isText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

func validKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range []byte(k) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Write writes one record. A sender id holding blanks or line breaks,
// starting with '#', equal to "-", or holding a NUL byte or invalid UTF-8
// (which the Reader would reject as binary data) is an error.
func (w *Writer) Write(r Record) error {
	if w.err != nil {
		return w.err
	}
	b := w.buf[:0]
	switch {
	case r.Sender == "":
		b = append(b, '-')
	case r.Sender == "-" || strings.ContainsAny(r.Sender, " \t\r\n") || strings.HasPrefix(r.Sender, "#") || !isText(r.Sender):
		return fmt.Errorf("trace: sender id %q cannot be written (blanks, line breaks, a leading '#', \"-\", a NUL byte or invalid UTF-8)", r.Sender)
	default:
		b = append(b, r.Sender...)
	}
	b = append(b, ' ')
	if r.HasSeq {
		b = strconv.AppendUint(b, r.Seq, 10)
	} else {
		b = append(b, '-')
	}
	b = append(b, ' ')
	if r.HasSent {
		b = strconv.AppendInt(b, int64(r.Sent), 10)
	} else {
		b = append(b, '-')
	}
	b = append(b, ' ')
	if r.HasArrival {
		b = strconv.AppendInt(b, int64(r.Arrival), 10)
	} else {
		b = append(b, '-')
	}
	b = append(b, '\n')
	w.buf = b
	w.dirty = true
	_, w.err = w.bw.Write(b)
	return w.err
}

// Flush hands every record written so far to the underlying writer in a
// form a Reader can read back if nothing more is ever written, so that a
// process killed after Flush loses no record written before it. Without
// compression it empties the buffer; gzip gets a sync flush (the deflate
// stream is byte-aligned, not ended: a lenient Reader reads every record
// before the missing gzip trailer, see ReaderConfig.Lenient); xz, which has no
// sync flush, ends its stream and starts a new one (a Reader reads the
// concatenated streams as one; each costs a few dozen bytes, so call Flush
// about once a second, not after every record). Flush does nothing when no
// record was written since the last one.
func (w *Writer) Flush() error {
	if w.err != nil || !w.dirty {
		return w.err
	}
	w.dirty = false
	if w.err = w.bw.Flush(); w.err != nil {
		return w.err
	}
	switch w.c {
	case Gzip:
		w.err = w.zc.(*gzip.Writer).Flush()
	case XZ:
		if w.err = w.zc.Close(); w.err == nil {
			var zw *xz.Writer
			zw, w.err = xz.NewWriter(w.out)
			w.zc = zw
			w.bw.Reset(zw)
		}
	}
	return w.err
}

// Close flushes buffered records and ends the compressed stream.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	w.err = w.bw.Flush()
	if w.zc != nil {
		if err := w.zc.Close(); err != nil && w.err == nil {
			w.err = err
		}
	}
	if w.err != nil {
		return w.err
	}
	w.err = fmt.Errorf("trace: writer closed")
	return nil
}

// readFDKitHeader reads the header line, comments and column line.
func (r *Reader) readFDKitHeader() error {
	if err := r.skipBlankLines(); err != nil {
		return err
	}
	line, err := r.readLine()
	if err == io.EOF {
		return &ParseError{File: r.name, Line: r.line + 1, Want: "fdkit header line \"" + fdkitMagic + " version=1 ...\"", Got: ""}
	}
	if err != nil {
		return err
	}
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(line, " \t"), []byte(fdkitMagic))
	if !ok || (len(rest) > 0 && !isBlank(rest[0])) {
		return r.fieldErr("", "fdkit header line \""+fdkitMagic+" version=1 ...\"", line)
	}
	h := Header{}
	var haveInterval, haveUnit bool
	given := map[string][]byte{} // the header's values by key
	r.unit, r.headerLine = 0, r.line
	for {
		var kv []byte
		kv, rest = nextField(rest)
		if len(kv) == 0 {
			break
		}
		k, v, ok := bytes.Cut(kv, []byte{'='})
		if !ok || len(k) == 0 || len(v) == 0 {
			return r.fieldErr("header", "key=value", kv)
		}
		// A key given twice is ambiguous: which value the writer meant is
		// unknown, and "the last wins" silently read a 10× wrong interval
		// or unit (user48's F2).
		if prev, dup := given[string(k)]; dup {
			return &ParseError{File: r.name, Line: r.line, Field: quoteGot(k), Want: "each key once in the header line",
				Err: fmt.Errorf("given twice (%q, %q)", quoteGot(prev), quoteGot(v))}
		}
		given[string(k)] = v
		switch string(k) {
		case "version":
			n, ok := parseUint(v)
			if !ok || n != fdkitVersion {
				return r.fieldErr("version", "1", v)
			}
			h.Version = int(n)
		case "interval":
			d, err := time.ParseDuration(string(v))
			if err != nil || d < 0 {
				return r.fieldErr("interval", "a non-negative Go duration such as 100ms", v)
			}
			h.Interval, haveInterval = d, true
		case "unit":
			u, err := ParseUnit(string(v))
			if err != nil {
				return r.fieldErr("unit", "ns, us, ms or s", v)
			}
			r.unit, haveUnit = int64(u), true
		default:
			if !validKey(string(k)) {
				return r.fieldErr("header", "key of [a-z0-9_-]", k)
			}
			// What NewWriter refuses is refused here too, so that every
			// header read can be written back: blanks and line feeds cannot
			// reach a value, a carriage return inside one can.
			if bytes.IndexByte(v, '\r') >= 0 || !isText(string(v)) {
				return r.fieldErr(string(k), "a header value without carriage returns, NUL bytes or invalid UTF-8", v)
			}
			if h.Meta == nil {
				h.Meta = make(map[string]string)
			}
			h.Meta[string(k)] = string(v)
		}
	}
	switch {
	case h.Version == 0:
		return r.fieldErr("version", "version=1 in the header line", line)
	case !haveInterval:
		return r.fieldErr("interval", "interval=<duration> in the header line", line)
	case !haveUnit:
		return r.fieldErr("unit", "unit=<ns|us|ms|s> in the header line", line)
	}
	for {
		line, err := r.readLine()
		if err == io.EOF {
			return &ParseError{File: r.name, Line: r.line + 1, Want: "column line \"" + fdkitColumns + "\"", Got: ""}
		}
		if err != nil {
			return err
		}
		if c, ok := bytes.CutPrefix(line, []byte{'#'}); ok {
			c, _ = bytes.CutPrefix(c, []byte{' '})
			h.Comments = append(h.Comments, string(c))
			continue
		}
		if string(bytes.TrimSpace(line)) != fdkitColumns {
			return r.fieldErr("", "column line \""+fdkitColumns+"\"", line)
		}
		break
	}
	r.header = h
	return nil
}

// repeatedFDKitHeader reports whether line, read among the records, is
// part of a repeated header to skip: the header line of a trace with the
// same version, interval and unit (its other keys may differ), its comment
// lines and its column line, which is what concatenating the rotated files
// of one recording gives (user48's F37: "cat h1.fdk h2.fdk" was refused
// at the second header). A header that differs is an error naming both
// lines; a record before the repeated header's column line too.
func (r *Reader) repeatedFDKitHeader(line []byte) (bool, error) {
	t := bytes.TrimLeft(line, " \t")
	if r.inRepeat {
		switch {
		case len(t) > 0 && t[0] == '#' && !bytes.HasPrefix(t, []byte(fdkitMagic)):
			return true, nil // a comment of the repeated header
		case string(bytes.TrimSpace(line)) == fdkitColumns:
			r.inRepeat = false
			return true, nil
		}
		return false, r.fieldErr("", fmt.Sprintf("column line %q after the repeated header of line %d", fdkitColumns, r.repeatLine), line)
	}
	rest, ok := bytes.CutPrefix(t, []byte(fdkitMagic))
	if !ok || (len(rest) > 0 && !isBlank(rest[0])) {
		return false, nil // a comment among the records: parseFDKit refuses it
	}
	given := map[string]string{}
	for {
		var kv []byte
		kv, rest = nextField(rest)
		if len(kv) == 0 {
			break
		}
		k, v, _ := bytes.Cut(kv, []byte{'='})
		if _, dup := given[string(k)]; dup {
			return false, r.fieldErr(string(k), "each key once in the header line", line)
		}
		given[string(k)] = string(v)
	}
	d, derr := time.ParseDuration(given["interval"])
	u, uerr := ParseUnit(given["unit"])
	if given["version"] != strconv.Itoa(fdkitVersion) || derr != nil || d != r.header.Interval || uerr != nil || int64(u) != r.unit {
		return false, r.fieldErr("", fmt.Sprintf("a record, or a repeated header with the version, interval and unit of line %d's (version=%d interval=%v unit=%s; traces recorded with other settings are replayed as files of their own)", r.headerLine, fdkitVersion, r.header.Interval, unitName(time.Duration(r.unit))), line)
	}
	r.inRepeat, r.repeatLine = true, r.line
	return true, nil
}

var fdkitFields = [4]string{"sender", "seq", "sent", "arrival"}

func (r *Reader) parseFDKit(line []byte) (Record, error) {
	// Fast path for the common complete nanosecond record; anything else
	// (dashes, other units, edge values, errors) takes the careful path.
	if r.unit == 1 {
		sender, p := nextField(line)
		seq, p, ok1 := scanUint(p)
		sent, p, ok2 := scanInt(p)
		arr, p, ok3 := scanInt(p)
		if len(sender) > 0 && sender[0] != '#' && !isDash(sender) && plainASCII(sender) && ok1 && ok2 && ok3 && onlyBlanks(p) {
			return Record{
				Sender: r.intern(sender),
				Seq:    seq, HasSeq: true,
				Sent: time.Duration(sent), HasSent: true,
				Arrival: time.Duration(arr), HasArrival: true,
			}, nil
		}
	}
	return r.parseFDKitSlow(line)
}

// parseFDKitSlow parses an fdkit record field by field.
func (r *Reader) parseFDKitSlow(line []byte) (Record, error) {
	if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '#' {
		return Record{}, r.fieldErr("", "a record (comment lines only before the column line)", line)
	}
	var f [4][]byte
	p := line
	for i := range f {
		f[i], p = nextField(p)
		if len(f[i]) == 0 {
			return Record{}, r.fieldErr(fdkitFields[i], "4 blank-separated fields \""+fdkitColumns+"\"", line)
		}
	}
	if extra, _ := nextField(p); len(extra) > 0 {
		return Record{}, r.fieldErr("", "4 blank-separated fields \""+fdkitColumns+"\"", line)
	}
	var rec Record
	if !utf8.Valid(f[0]) || bytes.IndexByte(f[0], 0) >= 0 || bytes.IndexByte(f[0], '\r') >= 0 {
		// Binary data past the sniffed start is refused here as it is at
		// the start of a file; a stray carriage return is not a line end.
		// The Writer refuses to write either.
		return Record{}, r.fieldErr("sender", "UTF-8 text without NUL bytes or carriage returns", f[0])
	}
	if !isDash(f[0]) {
		rec.Sender = r.intern(f[0])
	}
	if !isDash(f[1]) {
		s, ok := parseUint(f[1])
		if !ok {
			return Record{}, r.fieldErr("seq", "unsigned integer or -", f[1])
		}
		rec.Seq, rec.HasSeq = s, true
	}
	unit := time.Duration(r.unit)
	if !isDash(f[2]) {
		d, ok := parseTime(f[2], unit)
		if !ok {
			return Record{}, r.fieldErr("sent", intTimeWant(f[2], unit, true), f[2])
		}
		rec.Sent, rec.HasSent = d, true
	}
	if !isDash(f[3]) {
		d, ok := parseTime(f[3], unit)
		if !ok {
			return Record{}, r.fieldErr("arrival", intTimeWant(f[3], unit, true), f[3])
		}
		rec.Arrival, rec.HasArrival = d, true
	}
	return rec, nil
}

func isDash(b []byte) bool { return len(b) == 1 && b[0] == '-' }

// plainASCII reports whether b holds only ASCII bytes other than NUL and
// carriage return, which need no further check.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c == 0 || c == '\r' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
