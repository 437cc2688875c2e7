package trace

import (
	"encoding/csv"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCSV(t *testing.T) {
	in := "node,hb,t_arrive,t_sent\r\nA,1,1.5,1.25\nB,2,2,\"1.999999999\"\n"
	recs, r, err := readString(t, in, ReaderConfig{Columns: Columns{Sender: "node", Seq: "HB", Sent: "t_sent", Arrival: "t_arrive", Unit: time.Second}})
	require.NoError(t, err)
	assert.Equal(t, FormatCSV, r.Format())
	assert.Equal(t, []Record{
		{Sender: "A", Seq: 1, HasSeq: true, Sent: 1250 * time.Millisecond, HasSent: true, Arrival: 1500 * time.Millisecond, HasArrival: true},
		{Sender: "B", Seq: 2, HasSeq: true, Sent: 1999999999, HasSent: true, Arrival: 2 * time.Second, HasArrival: true},
	}, recs)

	// TSV, arrival only, microseconds.
	recs, _, err = readString(t, "x\tarrival_us\n7\t1500\n8\t2500.4\n", ReaderConfig{Sender: "p", Columns: Columns{Arrival: "arrival_us", Unit: time.Microsecond}})
	require.NoError(t, err)
	assert.Equal(t, []Record{
		{Sender: "p", Arrival: 1500 * time.Microsecond, HasArrival: true},
		{Sender: "p", Arrival: 2500*time.Microsecond + 400, HasArrival: true},
	}, recs)

	// Missing header column, bad value, missing column.
	_, _, err = readString(t, "a,b\n1,2\n", ReaderConfig{Name: "c.csv", Columns: Columns{Arrival: "t"}})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, &ParseError{File: "c.csv", Line: 1, Field: "t", Want: `a header column named "t"`, Got: "a,b"}, pe)
	_, _, err = readString(t, "a,t\n1,2\n1,2e3\n", ReaderConfig{Name: "c.csv", Columns: Columns{Arrival: "t", Unit: time.Millisecond}})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, &ParseError{File: "c.csv", Line: 3, Field: "t", Want: "decimal number of ms", Got: "2e3"}, pe)
	// A number too large for a time.Duration in the unit given is a unit
	// mistake more likely than a syntax error: the message says so.
	_, _, err = readString(t, "a,t\n1,9301432084.211\n", ReaderConfig{Name: "c.csv", Columns: Columns{Arrival: "t", Unit: time.Second}})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, &ParseError{File: "c.csv", Line: 2, Field: "t", Want: "a time within ±9223372036 s (int64 nanoseconds, 292 years); this one is too large, or in a smaller unit than s", Got: "9301432084.211"}, pe)
	_, _, err = readString(t, "a,t\n1,2\n1\n", ReaderConfig{Name: "c.csv", Columns: Columns{Arrival: "t"}})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, &ParseError{File: "c.csv", Line: 3, Want: "2 fields, as the header (line 1) has; the row has 1", Got: "1"}, pe)
}

// TestCSVRowFieldCount: a row with more fields than the header is refused
// like one with fewer, naming the line and both counts, also when every
// named column is there (user44's F8: trailing fields were accepted
// silently); --lenient skips and counts it like any malformed line.
func TestCSVRowFieldCount(t *testing.T) {
	cols := Columns{Sender: "s", Seq: "seq", Sent: "sent", Arrival: "recv"}
	in := "s,seq,sent,recv\na,47,4700000000,4705000000\na,48,4800000000,4805000000,extra,fields\na,49,4900000000,4905000000\n"
	_, _, err := readString(t, in, ReaderConfig{Name: "x.csv", Columns: cols})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, &ParseError{File: "x.csv", Line: 3, Want: "4 fields, as the header (line 1) has; the row has 6",
		Got: "a,48,4800000000,4805000000,extra,fields"}, pe)
	assert.EqualError(t, err, `x.csv:3: want 4 fields, as the header (line 1) has; the row has 6, got "a,48,4800000000,4805000000,extra,fields"`)
	// A trailing separator is a field too (an empty one).
	_, _, err = readString(t, "s\tseq\tsent\trecv\n\na\t1\t2\t3\t\n", ReaderConfig{Name: "x.tsv", Columns: cols})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 3, pe.Line)
	assert.Equal(t, "4 fields, as the header (line 1) has; the row has 5", pe.Want)
	// Fewer fields, though the named columns are all there.
	_, _, err = readString(t, "s,seq,sent,recv,note\na,1,2,3\n", ReaderConfig{Name: "x.csv", Columns: cols})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "5 fields, as the header (line 1) has; the row has 4", pe.Want)

	recs, r, err := readString(t, in, ReaderConfig{Name: "x.csv", Columns: cols, Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, 1, r.Skipped())
	require.Len(t, recs, 2)
	assert.Equal(t, []uint64{47, 49}, []uint64{recs[0].Seq, recs[1].Seq})
}

func TestCSVLenient(t *testing.T) {
	in := "t,seq\n1,1\nx\"y,2\n3,3\n4,z\n5,5\n"
	recs, r, err := readString(t, in, ReaderConfig{Name: "l.csv", Columns: Columns{Arrival: "t", Seq: "seq"}, Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, 2, r.Skipped()) // the bare quote and "z"
	require.Len(t, r.SkippedErrors(), 2)
	assert.Equal(t, 3, r.SkippedErrors()[0].Line)
	assert.Equal(t, 5, r.SkippedErrors()[1].Line)
	assert.Equal(t, "seq", r.SkippedErrors()[1].Field)
	var seqs []uint64
	for _, rec := range recs {
		assert.Equal(t, time.Duration(rec.Seq), rec.Arrival)
		seqs = append(seqs, rec.Seq)
	}
	assert.Equal(t, []uint64{1, 3, 5}, seqs)
}

func TestCSVBadUnit(t *testing.T) {
	for _, u := range []time.Duration{5 * time.Second, 2, time.Minute} {
		_, _, err := readString(t, "t\n1\n", ReaderConfig{Columns: Columns{Arrival: "t", Unit: u}})
		assert.ErrorContains(t, err, "not ns, us, ms or s", u)
	}
	_, _, err := readString(t, "t\n1\n", ReaderConfig{Format: FormatCSV})
	assert.ErrorContains(t, err, "Columns.Sent or Columns.Arrival")
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += k
	return k, err
}

// A CSV record may not span more than the Reader's buffer: a huge line or an
// unterminated quoted field is an error naming the line, found without
// reading the rest of the file into memory, and fatal even when lenient.
func TestCSVRecordTooLong(t *testing.T) {
	cols := Columns{Seq: "seq", Arrival: "recv"}
	head := "seq,recv\n0,1\n1,2\n"
	many := strings.Repeat("3,4\n", 1<<20) // 4 MiB of good records
	for name, in := range map[string]string{
		"unterminated quote": head + "2,\"5\n" + many,
		"huge line":          head + "2," + strings.Repeat("7", 1<<20) + "\n" + many,
	} {
		for _, lenient := range []bool{false, true} {
			src := &countingReader{r: strings.NewReader(in)}
			r, err := NewReader(src, ReaderConfig{Name: "big.csv", Columns: cols, Lenient: lenient})
			require.NoError(t, err, name)
			recs, err := r.ReadAll()
			var pe *ParseError
			require.ErrorAs(t, err, &pe, name)
			assert.Equal(t, "big.csv", pe.File, name)
			assert.Equal(t, 4, pe.Line, name)
			assert.Contains(t, pe.Error(), "CSV record shorter than", name)
			assert.Len(t, recs, 2, name)
			assert.Less(t, src.n, 1<<19, "%s: read %d bytes of a %d-byte file", name, src.n, len(in))
		}
	}
	// A record just under the limit is still read.
	long := strings.Repeat("0", bufSize-100)
	recs, _, err := readString(t, head+"2,"+long+"5\n", ReaderConfig{Columns: cols})
	require.NoError(t, err)
	assert.Len(t, recs, 3)
}

// A quoting error is named in words at the line where it is: an unbalanced
// quote at the line its quoted field opened, not where encoding/csv gave up
// (user48's F3: "junbal.csv:1032: field column 22" for a quote opened on
// line 50), with the byte where the reader stopped.
func TestCSVQuoteErrors(t *testing.T) {
	const head = "s,seq,sent,recv\na,1,2,3\n"
	for _, c := range []struct {
		name, in string
		want     string
		quote    error
	}{
		{"unbalanced to the end", head + "\"a,2,3,4\na,3,4,5\na,4,5,6\n",
			`q.csv:3: want balanced quotes: the quoted field opened on this line runs on to line 5, byte 9, where its closing quote is missing or followed by more than a separator: extraneous or missing " in quoted-field`, csv.ErrQuote},
		{"unbalanced to a later quote", head + "\"a,2,3,4\na,3,4,5\na,4,\"5\"6\na,5,6,7\n",
			`q.csv:3: want balanced quotes: the quoted field opened on this line runs on to line 5, byte 5, where its closing quote is missing or followed by more than a separator: extraneous or missing " in quoted-field`, csv.ErrQuote},
		{"text after the closing quote", head + "a,\"2\"x,3,4\n",
			`q.csv:3: want a quoted field ending at its closing quote: byte 5: a quote inside a quoted field must be doubled (""), and the field must end (a separator or the line's end) right after its closing quote: extraneous or missing " in quoted-field`, csv.ErrQuote},
		{"bare quote", head + "a,2\"x,3,4\n",
			`q.csv:3: want no quote inside an unquoted field: byte 4: quote the whole field and double the quote inside it ("a""b"): bare " in non-quoted-field`, csv.ErrBareQuote},
	} {
		recs, _, err := readString(t, c.in, ReaderConfig{Name: "q.csv", Columns: Columns{Sender: "s", Seq: "seq", Sent: "sent", Arrival: "recv", Unit: time.Millisecond}})
		assert.EqualError(t, err, c.want, c.name)
		assert.ErrorIs(t, err, c.quote, c.name)
		assert.Len(t, recs, 1, c.name)
	}
}

// A header naming a column read twice, and Columns naming one column for
// two roles, are refused: which column is meant is unknown (user48's F25:
// the first of two recv_ms columns was read silently; F4).
func TestCSVColumnsAmbiguous(t *testing.T) {
	cols := Columns{Sender: "host", Seq: "seq", Sent: "sent_ms", Arrival: "recv_ms", Unit: time.Millisecond}
	for _, c := range []struct {
		name, in string
		cols     Columns
		want     string
	}{
		{"header names it twice", "host,seq,sent_ms,recv_ms,recv_ms\np,1,2,3,4\n", cols,
			`d.csv:1: field recv_ms: want one header column named "recv_ms": columns 4 and 5 both are: which one to read is unknown`},
		{"case and blanks", "host,seq,sent_ms,recv_ms, RECV_MS\np,1,2,3,4\n", cols,
			`d.csv:1: field recv_ms: want one header column named "recv_ms": columns 4 and 5 both are: which one to read is unknown`},
		{"two roles", "host,seq,sent_ms,recv_ms\np,1,2,3\n", Columns{Sender: "host", Seq: " Host", Arrival: "recv_ms"},
			`trace: d.csv: Columns.Sender and Columns.Seq both name "host": one column read for two roles`},
	} {
		_, _, err := readString(t, c.in, ReaderConfig{Name: "d.csv", Columns: c.cols})
		assert.EqualError(t, err, c.want, c.name)
	}
	// A column not read may share its name with another.
	recs, _, err := readString(t, "host,seq,sent_ms,recv_ms,note,note\np,1,2,3,a,b\n", ReaderConfig{Name: "d.csv", Columns: cols})
	require.NoError(t, err)
	assert.Len(t, recs, 1)
}
