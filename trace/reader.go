package trace

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/ulikunitz/xz"
)

const (
	// bufSize is the Reader's buffer: the longest line it accepts.
	bufSize = 64 << 10
	// sniffSize is how much decompressed content format detection looks at.
	sniffSize = 4096
)

var (
	utf8BOM   = []byte{0xef, 0xbb, 0xbf}
	gzipMagic = []byte{0x1f, 0x8b}
	xzMagic   = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
)

// Reader streams the records of one trace file, one at a time, in file order.
// Memory is bounded by its 64 KiB buffer plus one interned string per
// distinct sender. It is not safe for concurrent use.
type Reader struct {
	name    string
	opt     ReaderConfig
	format  Format
	br      *bufio.Reader
	closers []io.Closer
	comp    string // "gzip", "xz" or ""
	line    int
	header  Header
	senders map[string]string
	short   [256]string // one-byte sender ids
	err     error       // sticky
	// lip6IDs: the LIP6 sender ids that are numbers, by their digits
	// without leading zeros (lip6Sender).
	lip6IDs map[string]lip6ID

	skipped     int
	skippedErrs []*ParseError
	unterm      bool // the last line read had no line ending
	// truncated: where a lenient Reader found the input cut short.
	truncated *ParseError

	// FormatCSV
	csv     *csv.Reader
	csvCols [4]int // column index of sender, seq, sent, arrival; -1 absent
	csvUnit int64
	// csvHeadN is the header's number of fields, which every row must
	// have; csvHeadLine is the header's line.
	csvHeadN, csvHeadLine int
	// headerLine is the line of the fdkit header; inRepeat is set from a
	// repeated header (at repeatLine, of concatenated rotated files) to its
	// column line (repeatedFDKitHeader).
	headerLine, repeatLine int
	inRepeat               bool
	// csvLimit bounds the bytes one CSV record may span (encoding/csv
	// itself has no limit: an unterminated quote would swallow the file).
	csvLimit *limitReader
	csvBuf   *bufio.Reader // between csvLimit and csv
	// FormatFDKit
	unit int64
}

// Open opens the trace file at path; the caller must Close the Reader.
// ReaderConfig.Name defaults to path.
func Open(path string, opt ReaderConfig) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if opt.Name == "" {
		opt.Name = path
	}
	r, err := NewReader(f, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closers = append(r.closers, f)
	return r, nil
}

// ReadFile reads every record of the trace file at path. With
// ReaderConfig.Lenient, when lines were skipped it returns the records read and a
// *SkippedLinesError saying how many and why, and where a truncated input
// ended (Reader.Truncated), so that nothing is dropped silently; use Open and Reader.Skipped to handle them otherwise.
func ReadFile(path string, opt ReaderConfig) ([]Record, error) {
	r, err := Open(path, opt)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	recs, err := r.ReadAll()
	if err == nil && (r.Skipped() > 0 || r.Truncated() != nil) {
		err = &SkippedLinesError{File: r.name, Count: r.Skipped(), Errors: r.SkippedErrors(), Truncated: r.Truncated()}
	}
	return recs, err
}

// NewReader returns a Reader for src. It removes gzip or xz compression
// recognised by magic bytes, detects the format (unless ReaderConfig.Format says
// it) and reads the header, so that Format and Header are known on return.
// Errors are *ParseError for bad content.
func NewReader(src io.Reader, opt ReaderConfig) (*Reader, error) {
	r := &Reader{name: opt.Name, opt: opt, senders: make(map[string]string)}
	if r.name == "" {
		r.name = "<input>"
	}
	if err := r.openStream(src); err != nil {
		return nil, err
	}
	sniff, err := r.sniff()
	if err != nil {
		return nil, err
	}
	r.format = opt.Format
	if r.format == FormatAuto {
		r.format = detect(sniff, opt.Columns)
		if r.format == FormatAuto {
			return nil, undetected(r.name, r.line, sniff)
		}
	}
	if err := r.readPreamble(); err != nil {
		return nil, err
	}
	return r, nil
}

// openStream sets r.br to read src, through a gzip or xz decompressor
// (bounded by ReaderConfig.MaxDecompressed and MaxRatio) when src starts with
// their magic bytes.
func (r *Reader) openStream(src io.Reader) error {
	rec := &errRecorder{r: src}
	counted := &byteCounter{r: rec}
	raw := bufio.NewReaderSize(counted, bufSize)
	magic, err := raw.Peek(len(xzMagic))
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return err
	}
	var dec io.Reader
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		zr, err := newGzipMembers(raw)
		if err != nil {
			return &ParseError{File: r.name, Want: "gzip header", Err: err}
		}
		r.closers = append(r.closers, zr)
		dec, r.comp = zr, "gzip"
	case bytes.HasPrefix(magic, xzMagic):
		tail := &xzTail{r: raw}
		zr, err := xz.NewReader(tail)
		if err != nil {
			return &ParseError{File: r.name, Want: "xz header", Err: err}
		}
		dec, r.comp = &xzErrors{r: zr, raw: rec, tail: tail}, "xz"
	default:
		r.br = raw
		return nil
	}
	if r.opt.MaxDecompressed > 0 || r.opt.MaxRatio > 0 {
		dec = &inflateGuard{r: dec, comp: r.comp, raw: counted, max: r.opt.MaxDecompressed, ratio: r.opt.MaxRatio}
	}
	r.br = bufio.NewReaderSize(dec, bufSize)
	return nil
}

// sniff skips a UTF-8 byte order mark and returns the first sniffSize
// bytes of content for format detection, refusing binary data. Under
// FormatAuto, when blank lines fill the whole window (a trace after 4 KiB
// of them is not "empty input"), they are skipped, counted, and what
// follows is sniffed.
func (r *Reader) sniff() ([]byte, error) {
	if b, _ := r.br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		r.br.Discard(len(utf8BOM)) // spreadsheet exports start with one
	}
	sniff, err := r.peekSniff()
	if err != nil {
		return nil, err
	}
	if r.opt.Format == FormatAuto && len(sniff) == sniffSize && len(bytes.TrimSpace(sniff)) == 0 {
		if err := r.skipBlankLines(); err != nil {
			return nil, err
		}
		if sniff, err = r.peekSniff(); err != nil {
			return nil, err
		}
	}
	return sniff, nil
}

// peekSniff returns up to sniffSize bytes of what follows, refusing binary
// data. A lenient Reader accepts a compressed stream cut short there: Next
// says where.
func (r *Reader) peekSniff() ([]byte, error) {
	sniff, err := r.br.Peek(sniffSize)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) &&
		!(r.opt.Lenient && r.comp != "" && errors.Is(err, io.ErrUnexpectedEOF)) {
		return nil, r.streamError(err)
	}
	if at := binaryAt(sniff); at >= 0 {
		line := r.line + 1 + bytes.Count(sniff[:at], []byte{'\n'}) // the line holding the first byte that is not text
		pe := &ParseError{File: r.name, Line: line, Want: "a text trace (LIP6, LIP6 emission, CSV or fdkit)", Got: "binary data"}
		if r.line == 0 {
			if what, do := knownBinary(sniff, r.comp); what != "" {
				pe.Want, pe.Got = pe.Want+", or one compressed with gzip or xz: "+do, what
			}
		}
		return nil, pe
	}
	if r.line == 0 && bytes.IndexByte(sniff, '\n') < 0 && bytes.Count(sniff, []byte{'\r'}) >= 2 {
		// Lines ended by CR alone (classic Mac OS) read as one line
		// holding carriage returns, which each format refused in its own
		// words, none naming the cause (user48's F21).
		return nil, &ParseError{File: r.name, Line: 1, Want: "lines ended by LF or CRLF (convert the file: tr '\\r' '\\n')",
			Got: "lines ended by CR alone"}
	}
	return sniff, nil
}

// readPreamble reads what r.format has before its first record: the
// column header of a LIP6 emission log or a CSV file, or the fdkit header.
func (r *Reader) readPreamble() error {
	switch r.format {
	case FormatLIP6:
		return nil
	case FormatLIP6Emission:
		if err := r.skipBlankLines(); err != nil {
			return err
		}
		if next, _ := r.br.Peek(sniffSize); bytes.HasPrefix(bytes.TrimLeft(next, " \t"), []byte("numseq")) {
			if _, err := r.readLine(); err != nil {
				return err
			}
		}
		return nil
	case FormatCSV:
		return r.initCSV()
	case FormatFDKit:
		return r.readFDKitHeader()
	default:
		return fmt.Errorf("trace: unknown format %v", r.format)
	}
}

// detectedFormats says what detect looks for, for errors.
const detectedFormats = `a trace format known from its first non-blank line: fdkit (header "` + fdkitMagic + ` version=1 ..."), ` +
	`LIP6 reception (5 unsigned integers "sender seq t_send t_recv hops") or ` +
	`LIP6 emission (header "numseq,timestamp_start_send,timestamp_end_send"); CSV is read only when its format and column names are given`

// Format returns the file's format (detected or forced).
func (r *Reader) Format() Format { return r.format }

// Compression returns "gzip", "xz" or "" (not compressed).
func (r *Reader) Compression() string { return r.comp }

// Header returns the fdkit header; zero for other formats.
func (r *Reader) Header() Header { return r.header }

// Line returns the number of the last line read (1-based).
func (r *Reader) Line() int { return r.line }

// Unterminated reports whether the record last returned by Next came from
// the input's last line, that line has no line ending, and its last field
// is one the record is read from (the arrival of an fdkit line, a named CSV
// column; not the hops of a LIP6 line or the end of send of an emission
// log, which are not read). A recorder killed mid-write leaves such a line,
// possibly cut inside a number that still parses; a complete file ends with
// a newline. Checker treats the record as truncated (FindingTruncated).
func (r *Reader) Unterminated() bool { return r.unterm }

// Skipped returns how many malformed lines a lenient Reader skipped so far.
func (r *Reader) Skipped() int { return r.skipped }

// SkippedErrors returns the errors of the first MaxSkippedErrors lines a
// lenient Reader skipped.
func (r *Reader) SkippedErrors() []*ParseError { return r.skippedErrs }

// Truncated reports where a lenient Reader found its input cut short, as a
// killed recorder leaves it: a compressed stream that stops before its end
// (the records of every complete line before it are returned), or a last
// line without a line end (left out, since its last field may be cut). It
// is nil while the input looks complete, and always nil for a strict Reader,
// which fails on a cut compressed stream with the *ParseError instead, and
// returns a last line without a line end as a record (Unterminated says so).
// Line is the line the input stopped in.
func (r *Reader) Truncated() *ParseError { return r.truncated }

// Close releases the decompressor and, for Open, the file.
func (r *Reader) Close() error {
	var first error
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	r.closers = nil
	return first
}

// streamError wraps an I/O or decompression error met after line r.line.
func (r *Reader) streamError(err error) error {
	want := "readable input"
	if r.comp != "" {
		want = "a complete " + r.comp + " stream"
	}
	if errors.Is(err, ErrDecompressionLimit) {
		// The stream is not damaged: it holds more than the bound allows.
		want = "input within the decompression bounds"
	}
	var xe *xzError
	if errors.As(err, &xe) {
		switch {
		case xe.want == "":
			err = xe.err
		case xe.appended:
			return &ParseError{File: r.name, Line: r.line + 1, Want: xe.want,
				Err: fmt.Errorf("at byte %d of the compressed file: %w", xe.at, xe.err)}
		default:
			// The decompressor gives the trace of an LZMA2 chunk (up to
			// 2 MiB) only once the whole chunk is decoded: the line
			// reached is in the chunk that failed, line 1 for a small
			// file (user48's F5 read "line 1 whatever was read").
			return &ParseError{File: r.name, Line: r.line + 1, Want: xe.want,
				Err: fmt.Errorf("stopped at byte %d of the compressed file, in the xz chunk that holds the trace from this line on (a chunk, up to 2 MiB of the trace, is decoded whole): %w", xe.at, xe.err)}
		}
	}
	return &ParseError{File: r.name, Line: r.line + 1, Want: want, Err: err}
}

// readLine returns the next line without its line ending, or io.EOF. The
// slice is valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	r.unterm = false
	switch {
	case err == nil:
	case err == io.EOF:
		if len(line) == 0 {
			return nil, io.EOF
		}
		r.unterm = true
	case errors.Is(err, bufio.ErrBufferFull):
		r.line++
		pe := &ParseError{File: r.name, Line: r.line, Want: fmt.Sprintf("a line shorter than %d bytes", bufSize), Got: quoteGot(line)}
		for errors.Is(err, bufio.ErrBufferFull) { // skip the rest of the line
			_, err = r.br.ReadSlice('\n')
		}
		if err != nil && err != io.EOF {
			return nil, r.streamError(err)
		}
		return nil, pe
	default:
		return nil, r.streamError(err)
	}
	r.line++
	n := len(line)
	if n > 0 && line[n-1] == '\n' {
		n--
	}
	if n > 0 && line[n-1] == '\r' {
		n--
	}
	return line[:n], nil
}

// skipBlankLines consumes the lines holding only spaces and tabs before a
// header, as format detection skips them.
func (r *Reader) skipBlankLines() error {
	for {
		next, err := r.br.Peek(sniffSize)
		if len(next) == 0 {
			if err == io.EOF || errors.Is(err, bufio.ErrBufferFull) {
				return nil
			}
			return r.streamError(err)
		}
		line, _, _ := bytes.Cut(next, []byte{'\n'})
		if len(bytes.Trim(line, " \t\r")) > 0 {
			return nil
		}
		if _, err := r.readLine(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// intern returns b as a string, allocating only for a sender not seen before.
func (r *Reader) intern(b []byte) string {
	if s, ok := r.interned(b); ok {
		return s
	}
	s := string(b)
	if len(b) == 1 {
		r.short[b[0]] = s
	} else {
		r.senders[s] = s
	}
	return s
}

// interned returns the sender id b as interned before, if it was.
func (r *Reader) interned(b []byte) (string, bool) {
	if len(b) == 1 { // LIP6 node ids: a table instead of a map
		s := r.short[b[0]]
		return s, s != ""
	}
	s, ok := r.senders[string(b)]
	return s, ok
}

// Next returns the next record, or io.EOF after the last one. Errors other
// than io.EOF are sticky; they are *ParseError for bad content.
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	for {
		var rec Record
		var err error
		var line []byte // the line read (not for CSV), valid until the next read
		switch r.format {
		case FormatCSV:
			rec, err = r.nextCSV()
		default:
			line, err = r.readLine()
			if err == nil {
				if allBlank(line) { // no data
					continue
				}
				switch r.format {
				case FormatLIP6:
					rec, err = r.parseLIP6(line)
				case FormatLIP6Emission:
					rec, err = r.parseEmission(line)
				case FormatFDKit:
					if r.inRepeat || bytes.TrimLeft(line, " \t")[0] == '#' {
						if skip, herr := r.repeatedFDKitHeader(line); skip || herr != nil {
							if herr != nil {
								r.err = herr
								return Record{}, herr
							}
							continue
						}
					}
					rec, err = r.parseFDKit(line)
				}
			}
		}
		pe := parseErrorOf(err)
		if r.unterm && r.opt.Lenient && (err == nil || pe != nil && pe.ofLine()) {
			// The input stops inside its last line: left out, since its
			// last field may be cut inside a number that still parses.
			r.truncated = &ParseError{File: r.name, Line: r.line,
				Want: "a line end (the input stops inside its last line, left out)"}
			if line != nil {
				r.truncated.Got = quoteGot(line)
			}
			r.err = io.EOF
			return Record{}, io.EOF
		}
		if err == nil {
			if r.format == FormatLIP6 || r.format == FormatLIP6Emission {
				r.unterm = false // a cut can only reach the last field, which is not read
			}
			return rec, nil
		}
		if r.opt.Lenient && r.comp != "" && pe != nil && errors.Is(err, io.ErrUnexpectedEOF) {
			// A compressed stream cut short: every complete line before
			// the cut was returned; the partial one is dropped.
			r.truncated = pe
			r.err = io.EOF
			return Record{}, io.EOF
		}
		if r.opt.Lenient && pe != nil && pe.ofLine() && pe.Line > 0 {
			r.skipped++
			if len(r.skippedErrs) < MaxSkippedErrors {
				r.skippedErrs = append(r.skippedErrs, pe)
			}
			continue
		}
		r.err = err
		return Record{}, err
	}
}

// parseErrorOf returns the *ParseError in err's chain (errors.As), or nil
// (also for a nil err). The variable whose address errors.As takes lives on
// the heap, so it is declared here, past the nil check, and not in Next's
// loop, where it cost one allocation per record read.
func parseErrorOf(err error) *ParseError {
	if err == nil {
		return nil
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

// All iterates over the remaining records. On an error other than io.EOF it
// yields a zero Record with the error once and stops.
func (r *Reader) All() iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return
			}
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// ReadAll reads the remaining records into memory.
func (r *Reader) ReadAll() ([]Record, error) {
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// Streams reads the remaining records and splits them by sender (Split).
func (r *Reader) Streams() ([]Stream, error) {
	recs, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	return Split(recs), nil
}
