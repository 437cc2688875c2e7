package trace

import (
	"bufio"
	"errors"
	"io"
)

// csvRecordMax is how many bytes other than line endings the CSV reader
// may pull from the input for one record: bufSize plus the read-ahead of
// encoding/csv's own buffer.
const csvRecordMax = bufSize + 4096

// csvLinesMax is how many line-ending bytes (\n, \r) the CSV reader may
// pull from the input for one record: the blank lines before it
// (encoding/csv skips them inside one Read) and the lines of a quoted
// field. Line endings do not count toward csvRecordMax, so that a run of
// blank lines is not a long record; this bounds them apart (a quoted
// field of line endings alone stays within about csvLinesMax bytes): 2^20
// blank lines, 2^19 with \r\n endings.
const csvLinesMax = 1 << 20

var (
	// errCSVRecordTooLong is returned by limitReader when one CSV record
	// spans more than csvRecordMax bytes.
	errCSVRecordTooLong = errors.New("CSV record too long")
	// errCSVTooManyLines is returned by limitReader when one CSV record,
	// with the blank lines before it, spans more than csvLinesMax lines.
	errCSVTooManyLines = errors.New("too many lines in one CSV record")
)

// limitReader fails with errCSVRecordTooLong once more than max bytes
// other than line endings were read since the last reset, and with
// errCSVTooManyLines once more than maxLines line-ending bytes were, so memory
// stays bounded on a huge line or an unterminated quoted field. It counts
// lines, so that its errors name the line where the record (or the run of
// blank lines before it) starts.
type limitReader struct {
	r            io.Reader
	n, max       int
	nl, maxLines int
	total        int64 // bytes read in all
	lines        int   // line feeds read in all
	last         byte  // the last byte read
	eof          bool  // r returned io.EOF
	started      bool  // a byte of the record (not a line ending) was seen since the reset
	startLine    int   // the line the record starts on (while !started: the line after the blank ones seen)
	firstBlank   int   // the first line after the previous record
}

// reset starts a record: buf is the buffer encoding/csv reads through,
// and what it holds unconsumed was read by l already.
func (l *limitReader) reset(buf *bufio.Reader) {
	l.n, l.nl = 0, 0
	ahead, _ := buf.Peek(buf.Buffered())
	line := l.lines + 1
	for _, b := range ahead {
		if b == '\n' {
			line--
		}
	}
	l.started, l.startLine, l.firstBlank = false, line, line
	l.scan(ahead, false)
}

// scan follows the line count through b; count adds b's bytes to the
// record's.
func (l *limitReader) scan(b []byte, count bool) {
	for _, c := range b {
		switch c {
		case '\n':
			if count {
				l.nl++
				l.lines++
			}
			if !l.started {
				l.startLine++
			}
		case '\r':
			if count {
				l.nl++
			}
		default:
			if count {
				l.n++
			}
			l.started = true
		}
	}
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n >= l.max {
		return 0, errCSVRecordTooLong
	}
	if l.nl >= l.maxLines {
		return 0, errCSVTooManyLines
	}
	// Line feeds and other bytes together stay within both bounds.
	if m := min(l.max-l.n, l.maxLines-l.nl); len(p) > m {
		p = p[:m]
	}
	k, err := l.r.Read(p)
	l.total += int64(k)
	if k > 0 {
		l.last = p[k-1]
		l.scan(p[:k], true)
	}
	if err == io.EOF {
		l.eof = true
	}
	return k, err
}
