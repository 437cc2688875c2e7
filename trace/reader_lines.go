// Line parsers of the Reader: LIP6, emission and CSV records.

package trace

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

func (r *Reader) fieldErr(field, want string, got []byte) *ParseError {
	return &ParseError{File: r.name, Line: r.line, Field: field, Want: want, Got: quoteGot(got)}
}

// lip6Fields names the columns of FormatLIP6 for error messages.
var lip6Fields = [5]string{"sender", "seq", "t_send_ns", "t_recv_ns", "hops"}

func (r *Reader) parseLIP6(line []byte) (Record, error) {
	// Fast path: one pass over the line, each number parsed while scanning.
	// Any irregularity falls back to the field-by-field path, which finds
	// the field to blame.
	sender, p := nextField(line)
	seq, p, ok1 := scanUint(p)
	sent, p, ok2 := scanInt(p)
	recv, p, ok3 := scanInt(p)
	_, p, ok4 := scanUint(p)
	if len(sender) > 0 && ok1 && ok2 && ok3 && ok4 && onlyBlanks(p) {
		id, err := r.lip6Sender(sender)
		if err != nil {
			return Record{}, err
		}
		return Record{
			Sender: id,
			Seq:    seq, HasSeq: true,
			Sent: time.Duration(sent), HasSent: true,
			Arrival: time.Duration(recv), HasArrival: true,
		}, nil
	}
	return r.parseLIP6Slow(line)
}

// parseLIP6Slow parses line field by field: it handles numbers at the edge
// of the integer range and explains why a bad line is bad.
func (r *Reader) parseLIP6Slow(line []byte) (Record, error) {
	const want5 = "5 blank-separated fields \"sender seq t_send_ns t_recv_ns hops\""
	var f [5][]byte
	p := line
	for i := range f {
		f[i], p = nextField(p)
		if len(f[i]) == 0 {
			return Record{}, r.fieldErr(lip6Fields[i], want5, line)
		}
	}
	if extra, _ := nextField(p); len(extra) > 0 {
		return Record{}, r.fieldErr("", want5, line)
	}
	seq, ok := parseUint(f[1])
	if !ok {
		return Record{}, r.fieldErr("seq", "unsigned integer", f[1])
	}
	sent, ok := parseInt(f[2])
	if !ok {
		return Record{}, r.fieldErr("t_send_ns", "integer nanoseconds", f[2])
	}
	recv, ok := parseInt(f[3])
	if !ok {
		return Record{}, r.fieldErr("t_recv_ns", "integer nanoseconds", f[3])
	}
	if _, ok := parseUint(f[4]); !ok {
		return Record{}, r.fieldErr("hops", "unsigned integer", f[4])
	}
	id, err := r.lip6Sender(f[0])
	if err != nil {
		return Record{}, err
	}
	return Record{
		Sender: id,
		Seq:    seq, HasSeq: true,
		Sent: time.Duration(sent), HasSent: true,
		Arrival: time.Duration(recv), HasArrival: true,
	}, nil
}

// lip6ID is a LIP6 sender id as first written, and its line.
type lip6ID struct {
	id   string
	line int
}

// lip6Sender returns the LIP6 sender id b, interned. LIP6 ids are
// unsigned integers, compared as written: an id that is the number of an
// earlier one written otherwise ("007" or "+7" after "7") is refused,
// naming both lines, rather than taken as a sender of its own (two streams
// of one sender) or merged with it (two senders in one stream, if the
// spellings were meant apart); user48's F33, atk25's F8. An id that is not
// a number is taken as written.
func (r *Reader) lip6Sender(b []byte) (string, error) {
	if s, ok := r.interned(b); ok {
		return s, nil
	}
	digits := b
	if len(digits) > 1 && digits[0] == '+' {
		digits = digits[1:]
	}
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
	}
	if bytes.IndexFunc(digits, func(c rune) bool { return c < '0' || c > '9' }) >= 0 {
		return r.intern(b), nil
	}
	if first, ok := r.lip6IDs[string(digits)]; ok {
		return "", r.fieldErr("sender", fmt.Sprintf("one spelling of each sender id: LIP6 ids are unsigned integers, and %q (line %d) is the same number written otherwise", first.id, first.line), b)
	}
	if r.lip6IDs == nil {
		r.lip6IDs = map[string]lip6ID{}
	}
	s := r.intern(b)
	r.lip6IDs[string(digits)] = lip6ID{s, r.line}
	return s, nil
}

// emissionFields names the columns of FormatLIP6Emission.
var emissionFields = [3]string{"numseq", "timestamp_start_send", "timestamp_end_send"}

func (r *Reader) parseEmission(line []byte) (Record, error) {
	var f [3][]byte
	p := line
	for i := range f {
		// fields separated by a comma and/or blanks
		j := 0
		for j < len(p) && (isBlank(p[j]) || (i > 0 && j == 0 && p[j] == ',')) {
			j++
		}
		p = p[j:]
		k := 0
		for k < len(p) && p[k] != ',' && !isBlank(p[k]) {
			k++
		}
		f[i], p = p[:k], p[k:]
		if len(f[i]) == 0 {
			return Record{}, r.fieldErr(emissionFields[i], "3 fields \"numseq,timestamp_start_send,timestamp_end_send\"", line)
		}
		for len(p) > 0 && isBlank(p[0]) {
			p = p[1:]
		}
	}
	if len(p) > 0 {
		return Record{}, r.fieldErr("", "3 fields \"numseq,timestamp_start_send,timestamp_end_send\"", line)
	}
	seq, ok := parseUint(f[0])
	if !ok {
		return Record{}, r.fieldErr("numseq", "unsigned integer", f[0])
	}
	start, ok := parseInt(f[1])
	if !ok {
		return Record{}, r.fieldErr("timestamp_start_send", "integer nanoseconds", f[1])
	}
	if _, ok := parseInt(f[2]); !ok {
		return Record{}, r.fieldErr("timestamp_end_send", "integer nanoseconds", f[2])
	}
	return Record{Sender: r.opt.Sender, Seq: seq, HasSeq: true, Sent: time.Duration(start), HasSent: true}, nil
}

// initCSV reads the header of a FormatCSV file and maps the named columns.
func (r *Reader) initCSV() error {
	c := r.opt.Columns
	if c.Sent == "" && c.Arrival == "" {
		return fmt.Errorf("trace: %s: CSV format needs Columns.Sent or Columns.Arrival", r.name)
	}
	roles := [4]struct{ field, name string }{{"Sender", c.Sender}, {"Seq", c.Seq}, {"Sent", c.Sent}, {"Arrival", c.Arrival}}
	for i, a := range roles {
		for _, b := range roles[i+1:] {
			if x := strings.TrimSpace(a.name); x != "" && strings.EqualFold(x, strings.TrimSpace(b.name)) {
				return fmt.Errorf("trace: %s: Columns.%s and Columns.%s both name %q: one column read for two roles", r.name, a.field, b.field, x)
			}
		}
	}
	switch c.Unit {
	case 0:
		r.csvUnit = 1
	case time.Nanosecond, time.Microsecond, time.Millisecond, time.Second:
		r.csvUnit = int64(c.Unit)
	default:
		return fmt.Errorf("trace: %s: Columns.Unit %v is not ns, us, ms or s", r.name, c.Unit)
	}
	sep := c.Separator
	if sep == 0 {
		sniff, _ := r.br.Peek(sniffSize)
		first, _, _ := bytes.Cut(sniff, []byte{'\n'})
		switch {
		case bytes.IndexByte(first, '\t') >= 0:
			sep = '\t'
		case bytes.IndexByte(first, ';') >= 0 && bytes.IndexByte(first, ',') < 0:
			sep = ';'
		default:
			sep = ','
		}
	}
	r.csvLimit = &limitReader{r: r.br, max: csvRecordMax, maxLines: csvLinesMax, startLine: 1}
	// encoding/csv reads through this buffer (csv.NewReader keeps a
	// *bufio.Reader of its default size as it is), so that what it has
	// read ahead but not consumed is known when a record starts.
	r.csvBuf = bufio.NewReaderSize(r.csvLimit, 4096)
	r.csv = csv.NewReader(r.csvBuf)
	r.csv.Comma = sep
	r.csv.FieldsPerRecord = -1
	r.csv.ReuseRecord = true
	r.csv.TrimLeadingSpace = true
	head, err := r.csv.Read()
	if err != nil {
		if err == io.EOF {
			return &ParseError{File: r.name, Line: 1, Want: "a CSV header line", Got: ""}
		}
		return r.csvError(err)
	}
	r.line, _ = r.csv.FieldPos(0)
	r.csvHeadLine, r.csvHeadN = r.line, len(head)
	names := [4]string{c.Sender, c.Seq, c.Sent, c.Arrival}
	for i, n := range names {
		r.csvCols[i] = -1
		if n == "" {
			continue
		}
		for j, h := range head {
			if !strings.EqualFold(strings.TrimSpace(h), strings.TrimSpace(n)) {
				continue
			}
			if r.csvCols[i] >= 0 {
				// Which of the two is meant is unknown (user48's F25: the
				// first was read, silently).
				return &ParseError{File: r.name, Line: r.line, Field: n,
					Want: fmt.Sprintf("one header column named %q", n),
					Err:  fmt.Errorf("columns %d and %d both are: which one to read is unknown", r.csvCols[i]+1, j+1)}
			}
			r.csvCols[i] = j
		}
		if r.csvCols[i] < 0 {
			return &ParseError{File: r.name, Line: r.line, Field: n,
				Want: fmt.Sprintf("a header column named %q", n), Got: quoteGot([]byte(strings.Join(head, string(sep))))}
		}
	}
	return nil
}

func (r *Reader) csvError(err error) error {
	switch {
	case errors.Is(err, errCSVRecordTooLong):
		return &ParseError{File: r.name, Line: r.csvLimit.startLine, Err: errCSVRecordTooLong,
			Want: fmt.Sprintf("a CSV record shorter than %d bytes (an unterminated quoted field?)", bufSize)}
	case errors.Is(err, errCSVTooManyLines) && !r.csvLimit.started:
		return &ParseError{File: r.name, Line: r.csvLimit.firstBlank(), Err: errCSVTooManyLines,
			Want: fmt.Sprintf("at most %d blank lines in a row", csvLinesMax)}
	case errors.Is(err, errCSVTooManyLines):
		return &ParseError{File: r.name, Line: r.csvLimit.startLine, Err: errCSVTooManyLines,
			Want: fmt.Sprintf("a CSV record of at most %d lines (an unterminated quoted field?)", csvLinesMax)}
	}
	var ce *csv.ParseError
	if errors.As(err, &ce) {
		r.line = ce.Line
		if ce.Err != nil && !errors.Is(err, csv.ErrBareQuote) && !errors.Is(err, csv.ErrQuote) && !errors.Is(err, csv.ErrFieldCount) {
			return r.streamError(ce.Err)
		}
		return csvSyntaxError(r.name, ce)
	}
	return r.streamError(err)
}

// csvSyntaxError says in words what is wrong with the CSV where ce
// (encoding/csv's error, whose Column is a byte of its Line) found it. An
// unbalanced quote is named at the line where its quoted field opened
// (ce.StartLine): encoding/csv reads on to the next quote, or to the end of
// the file, and its Line is where it stopped (user48's F3: an unbalanced
// quote on line 50 was reported at line 1032, "column 22").
func csvSyntaxError(name string, ce *csv.ParseError) *ParseError {
	pe := &ParseError{File: name, Line: ce.Line, Want: "well-formed CSV"}
	switch {
	case errors.Is(ce.Err, csv.ErrQuote) && ce.StartLine < ce.Line:
		pe.Line = ce.StartLine
		pe.Want = "balanced quotes"
		pe.Err = fmt.Errorf("the quoted field opened on this line runs on to line %d, byte %d, where its closing quote is missing or followed by more than a separator: %w", ce.Line, ce.Column, ce.Err)
	case errors.Is(ce.Err, csv.ErrQuote):
		pe.Want = "a quoted field ending at its closing quote"
		pe.Err = fmt.Errorf("byte %d: a quote inside a quoted field must be doubled (\"\"), and the field must end (a separator or the line's end) right after its closing quote: %w", ce.Column, ce.Err)
	case errors.Is(ce.Err, csv.ErrBareQuote):
		pe.Want = "no quote inside an unquoted field"
		pe.Err = fmt.Errorf("byte %d: quote the whole field and double the quote inside it (\"a\"\"b\"): %w", ce.Column, ce.Err)
	default:
		pe.Err = fmt.Errorf("byte %d: %w", ce.Column, ce.Err)
	}
	return pe
}

func (r *Reader) nextCSV() (Record, error) {
	r.csvLimit.reset(r.csvBuf)
	row, err := r.csv.Read()
	if err == io.EOF {
		return Record{}, io.EOF
	}
	if err != nil {
		return Record{}, r.csvError(err)
	}
	r.line, _ = r.csv.FieldPos(0)
	// The row ends the input without a line ending when the CSV reader
	// has consumed everything the input held and the last byte is not one.
	r.unterm = r.csvLimit.eof && r.csv.InputOffset() == r.csvLimit.total && r.csvLimit.last != '\n' &&
		slices.Contains(r.csvCols[:], len(row)-1)
	if len(row) != r.csvHeadN {
		// A row that does not match the header is a corrupt line (two
		// records run together, a cut, a stray separator), whichever
		// fields it holds: never read part of it as a record.
		return Record{}, &ParseError{File: r.name, Line: r.line,
			Want: fmt.Sprintf("%d fields, as the header (line %d) has; the row has %d", r.csvHeadN, r.csvHeadLine, len(row)),
			Got:  quoteGot([]byte(strings.Join(row, string(r.csv.Comma))))}
	}
	rec := Record{Sender: r.opt.Sender}
	for i, col := range r.csvCols {
		if col < 0 {
			continue
		}
		name := r.opt.Columns.Sender
		switch i {
		case 1:
			name = r.opt.Columns.Seq
		case 2:
			name = r.opt.Columns.Sent
		case 3:
			name = r.opt.Columns.Arrival
		}
		v := []byte(strings.TrimSpace(row[col]))
		switch i {
		case 0:
			if len(v) == 0 {
				return Record{}, r.fieldErr(name, "a non-empty sender id", v)
			}
			rec.Sender = r.intern(v)
		case 1:
			s, ok := parseUint(v)
			if !ok {
				return Record{}, r.fieldErr(name, "unsigned integer", v)
			}
			rec.Seq, rec.HasSeq = s, true
		case 2, 3:
			d, ok := parseDecimalTime(v, time.Duration(r.csvUnit))
			if !ok {
				return Record{}, r.fieldErr(name, decimalWant(v, time.Duration(r.csvUnit)), v)
			}
			if i == 2 {
				rec.Sent, rec.HasSent = d, true
			} else {
				rec.Arrival, rec.HasArrival = d, true
			}
		}
	}
	return rec, nil
}
