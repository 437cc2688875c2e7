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
	// nlAt holds the offsets (in total's count) of the line feeds read
	// that encoding/csv had not consumed at the last reset, nlHead the
	// first of them still queued; consumed counts those dropped, so that
	// reset finds the record's line without walking the bytes buffered
	// ahead (a walk of up to the whole buffer per record made CSV input
	// about 10 times slower).
	nlAt     []int64
	nlHead   int
	consumed int
}

// reset starts a record: buf is the buffer encoding/csv reads through,
// and what it holds unconsumed was read by l already.
func (l *limitReader) reset(buf *bufio.Reader) {
	l.n, l.nl = 0, 0
	ahead, _ := buf.Peek(buf.Buffered())
	mark := l.total - int64(len(ahead)) // the record's first byte
	for l.nlHead < len(l.nlAt) && l.nlAt[l.nlHead] < mark {
		l.nlHead++
		l.consumed++
	}
	if l.nlHead > 1024 && l.nlHead*2 > len(l.nlAt) {
		l.nlAt = l.nlAt[:copy(l.nlAt, l.nlAt[l.nlHead:])]
		l.nlHead = 0
	}
	line := l.consumed + 1
	l.started, l.startLine = false, line
	for _, c := range ahead { // the blank lines before the record, if any
		if c == '\n' {
			l.startLine++
		} else if c != '\r' {
			l.started = true
			break
		}
	}
}

// firstBlank returns the first line after the previous record: where a
// run of blank lines before the record starts.
func (l *limitReader) firstBlank() int { return l.consumed + 1 }

// scan counts b, read at offset at (in total's count), into the
// record's bytes and line endings and the line count, queueing each line
// feed's offset for reset.
func (l *limitReader) scan(b []byte, at int64) {
	for i, c := range b {
		switch c {
		case '\n':
			l.nl++
			l.lines++
			l.nlAt = append(l.nlAt, at+int64(i))
			if !l.started {
				l.startLine++
			}
		case '\r':
			l.nl++
		default:
			l.n++
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
	if k > 0 {
		l.last = p[k-1]
		l.scan(p[:k], l.total)
	}
	l.total += int64(k)
	if err == io.EOF {
		l.eof = true
	}
	return k, err
}
