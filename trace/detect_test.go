package trace

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBinaryInput(t *testing.T) {
	_, _, err := readString(t, "\x7fELF\x02\x01\x01\x00\x00\x00", ReaderConfig{Name: "a.out"})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, &ParseError{File: "a.out", Line: 1, Want: "a text trace (LIP6, LIP6 emission, CSV or fdkit)", Got: "binary data"}, pe)

	_, _, err = readString(t, "hello world\n", ReaderConfig{Name: "x"})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "x", pe.File)
	assert.Equal(t, "hello world", pe.Got)
}

// Binary data after some text lines is reported at the line holding its
// first byte that is not text, not at line 1.
func TestBinaryInputLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		line int
	}{
		{"p 0 1 2\np 1 2 3\np 2 3\x004\n", 3},
		{"p 0 1 2\n\xffp 1 2 3\n", 2},
		{"p 0 1 2\n\n\n\x00", 4},
		{"\x00p 0 1 2\n", 1},
	} {
		_, _, err := readString(t, c.in, ReaderConfig{Name: "t"})
		var pe *ParseError
		if assert.ErrorAs(t, err, &pe, "%q", c.in) {
			assert.Equal(t, &ParseError{File: "t", Line: c.line, Want: "a text trace (LIP6, LIP6 emission, CSV or fdkit)", Got: "binary data"}, pe, "%q", c.in)
		}
	}
	// A window full of blank lines is skipped and counted before the
	// binary line.
	_, _, err := readString(t, strings.Repeat("\n", 5000)+"a\n\x00\n", ReaderConfig{Name: "t"})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 5002, pe.Line)
}

// The Writer refuses what the Reader would reject as binary data (a NUL
// byte, invalid UTF-8), so that everything it writes reads back.
func TestFDKitWriterRefusesBinary(t *testing.T) {
	for _, bad := range []string{"a\x00b", "\xff", "p\xc3"} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{}, NoCompression)
		require.NoError(t, err)
		assert.Error(t, w.Write(Record{Sender: bad, Arrival: 1, HasArrival: true}), "sender %q", bad)
		_, err = NewWriter(&buf, Header{Meta: map[string]string{"k": bad}}, NoCompression)
		assert.Error(t, err, "meta value %q", bad)
		_, err = NewWriter(&buf, Header{Comments: []string{bad}}, NoCompression)
		assert.Error(t, err, "comment %q", bad)
	}
	// Any other UTF-8 text round-trips, control characters included.
	for _, good := range []string{"é", "a\vb", "a\u00a0b", "-x", "\x1b"} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{Meta: map[string]string{"k": good}, Comments: []string{good}}, NoCompression)
		require.NoError(t, err, "%q", good)
		rec := Record{Sender: good, Arrival: 1, HasArrival: true}
		require.NoError(t, w.Write(rec), "%q", good)
		require.NoError(t, w.Close())
		r, err := NewReader(&buf, ReaderConfig{})
		require.NoError(t, err, "%q", good)
		got, err := r.ReadAll()
		require.NoError(t, err)
		assert.Equal(t, []Record{rec}, got)
		assert.Equal(t, good, r.Header().Meta["k"])
	}
}

// A sender id with a NUL byte or invalid UTF-8 past the sniffed start of an
// fdkit file is an error naming the line and field, as binary data at the
// start of the file is and as the Writer refuses to write it: otherwise a
// file read without error could not be written back.
func TestFDKitBinarySenderLater(t *testing.T) {
	head := "#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n" +
		strings.Repeat("p 1 2 3\n", 1000) // beyond the 4 KiB sniff
	for _, bad := range []string{"a\x00", "\xff", "é\xc3", "\r", "a\rb"} {
		recs, _, err := readString(t, head+bad+" 4 5 6\n", ReaderConfig{Name: "t.fdkit"})
		var pe *ParseError
		require.ErrorAs(t, err, &pe, "%q", bad)
		assert.Equal(t, 1003, pe.Line)
		assert.Equal(t, "sender", pe.Field)
		assert.Len(t, recs, 1000)
	}
	recs, _, err := readString(t, head+"é 4 5 6\n", ReaderConfig{})
	require.NoError(t, err)
	assert.Equal(t, "é", recs[1000].Sender)
}

// Format detection skips blank lines and indentation before a header, so the
// header readers do too (the emission header was parsed as data and the
// fdkit header reported missing); a UTF-8 byte-order mark, as spreadsheet
// CSV exports start with, is dropped in every format.
func TestLeadingBlankLinesAndBOM(t *testing.T) {
	const bom = "\ufeff"
	emission := "numseq,timestamp_start_send,timestamp_end_send\n0,1,2\n"
	fdkit := "#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\np 0 1 2\n"
	for name, c := range map[string]struct {
		in   string
		opt  ReaderConfig
		want Format
	}{
		"emission after blank lines": {"\n \t\n" + emission, ReaderConfig{}, FormatLIP6Emission},
		"emission with BOM":          {bom + emission, ReaderConfig{}, FormatLIP6Emission},
		"fdkit after blank lines":    {"\r\n\n" + fdkit, ReaderConfig{}, FormatFDKit},
		"fdkit indented":             {"  " + fdkit, ReaderConfig{}, FormatFDKit},
		"fdkit with BOM":             {bom + fdkit, ReaderConfig{}, FormatFDKit},
		"lip6 with BOM":              {bom + "1 0 1 2 3\n", ReaderConfig{}, FormatLIP6},
		"csv with BOM":               {bom + "seq,recv\n0,2\n", ReaderConfig{Columns: Columns{Seq: "seq", Arrival: "recv"}}, FormatCSV},
	} {
		recs, r, err := readString(t, c.in, c.opt)
		require.NoError(t, err, name)
		assert.Equal(t, c.want, r.Format(), name)
		require.Len(t, recs, 1, name)
		assert.Equal(t, uint64(0), recs[0].Seq, name)
	}
	// Line numbers still count the skipped lines.
	_, _, err := readString(t, "\n\n"+emission+"x,1,2\n", ReaderConfig{Name: "e.csv"})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 5, pe.Line)
	assert.Equal(t, "numseq", pe.Field)
}

// Blank lines beyond the detection window are skipped, and a parse error
// after them names the line as counted from the start of the file.
func TestDetectAfterManyBlankLines(t *testing.T) {
	recs, _, err := readString(t, strings.Repeat("\n", 5000)+"1 0 100 200 1\n1 1 200 300 1\n", ReaderConfig{Name: "t.txt"})
	require.NoError(t, err)
	require.Len(t, recs, 2)
	_, _, err = readString(t, strings.Repeat("\n", 5000)+"1 0 100 200 1\n1 x 200 300 1\n", ReaderConfig{Name: "t.txt"})
	assert.ErrorContains(t, err, "t.txt:5002:")
}

// A format that cannot be detected is an error a user can act on: the file,
// the line of the first non-blank line and what it holds, what each detected
// format wants and why the line is none of them; it wraps ErrUnknownFormat
// and names no Go identifier.
func TestUndetectedFormatError(t *testing.T) {
	cases := []struct{ in, line, why string }{
		{"host,when\nx,1\n", "t.csv:1:", `got "host,when": format not detected: the line looks like a CSV header; give the format and the names of its sender, seq, sent and arrival columns`},
		{"\n  \n1 2 3\n", "t.csv:3:", `got "1 2 3": format not detected: 3 integer fields, LIP6 reception has 5 (a LIP6 emission file without its numseq header is read only when its format is given)`},
		{"4 5 x 7 8\n", "t.csv:1:", `format not detected: field 3 "x" is not an unsigned integer, as LIP6 reception wants`},
		{"1,2,3\n", "t.csv:1:", "the line looks like CSV data without a header"},
		{"", "t.csv:1:", `got "empty input": format not detected`},
		{"\n \t\n", "t.csv:1:", `got "only blank lines": format not detected`},
		// Blank lines beyond the 4 KiB detection window are skipped and
		// counted: the input is not "empty input" at line 1.
		{strings.Repeat("\n", 5000) + "hello world\n", "t.csv:5001:", `got "hello world": format not detected`},
		{strings.Repeat(" \r\n", 5000), "t.csv:5001:", `got "only blank lines": format not detected`},
	}
	for _, c := range cases {
		_, _, err := readString(t, c.in, ReaderConfig{Name: "t.csv"})
		require.ErrorIs(t, err, ErrUnknownFormat, c.in)
		var pe *ParseError
		require.ErrorAs(t, err, &pe)
		msg := err.Error()
		assert.True(t, strings.HasPrefix(msg, c.line+" want a trace format known from its first non-blank line: fdkit"), msg)
		assert.Contains(t, msg, `LIP6 reception (5 unsigned integers "sender seq t_send t_recv hops")`)
		assert.Contains(t, msg, `LIP6 emission (header "numseq,timestamp_start_send,timestamp_end_send")`)
		assert.Contains(t, msg, c.why)
		assert.NotContains(t, msg, "Columns")
	}
}

// A file in a format users give by mistake is named, with what to do,
// instead of "binary data" (user48's F16); unknown binary data stays so.
func TestKnownBinaryNamed(t *testing.T) {
	const want = "a text trace (LIP6, LIP6 emission, CSV or fdkit), or one compressed with gzip or xz: "
	text := "p 0 1000000 2000000\np 1 2000000 3000000\n"
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	f, err := zw.Create("t.txt")
	require.NoError(t, err)
	_, _ = f.Write([]byte(text))
	require.NoError(t, zw.Close())
	utf16 := []byte{0xff, 0xfe}
	for _, c := range text {
		utf16 = append(utf16, byte(c), 0)
	}
	for _, c := range []struct {
		name, in  string
		got, want string
	}{
		{"bzip2", "BZh91AY&SY\x8a\x00\xff", "bzip2-compressed data", want + "decompress it first (bunzip2 -k)"},
		{"zstd", "\x28\xb5\x2f\xfd\x04\x00\x81\x00", "zstd-compressed data", want + "decompress it first (zstd -d)"},
		{"zip", zb.String(), "a zip archive", want + "extract the trace first (unzip)"},
		{"7z", "7z\xbc\xaf\x27\x1c\x00\x04", "a 7z archive", want + "extract the trace first (7z x)"},
		{"gzip in gzip", string(gz(t, string(gz(t, text)))), "gzip-compressed data inside the gzip stream", want + "the trace is compressed twice: decompress the outer layer first"},
		{"UTF-16", string(utf16), "UTF-16 text (its byte order mark)", want + "convert it to UTF-8 first (iconv -f UTF-16 -t UTF-8)"},
		{"ELF", "\x7fELF\x02\x01\x01\x00\x00\x00", "binary data", "a text trace (LIP6, LIP6 emission, CSV or fdkit)"},
		{"bzip2 after text", "p 0 1 2\nBZh91AY&SY\x8a\x00\xff", "binary data", "a text trace (LIP6, LIP6 emission, CSV or fdkit)"},
	} {
		_, _, err := readString(t, c.in, ReaderConfig{Name: "t"})
		var pe *ParseError
		if assert.ErrorAs(t, err, &pe, c.name) {
			assert.Equal(t, c.got, pe.Got, c.name)
			assert.Equal(t, c.want, pe.Want, c.name)
		}
	}
}

// A file whose lines end in CR alone (classic Mac OS) is named as such,
// whatever its format, instead of a carriage return refused inside a
// header value or a column name (user48's F21); CRLF files still read.
func TestCROnlyLineEndings(t *testing.T) {
	const want = `t:1: want lines ended by LF or CRLF (convert the file: tr '\r' '\n'), got "lines ended by CR alone"`
	fdk := "#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\np 0 1 2\np 1 100000001 100000002\n"
	csvText := "host,seq,sent_ms,recv_ms\np,1,2,3\np,2,3,4\n"
	cols := Columns{Sender: "host", Seq: "seq", Sent: "sent_ms", Arrival: "recv_ms", Unit: time.Millisecond}
	for _, c := range []struct {
		name, in string
		cfg      ReaderConfig
		want     string
	}{
		{"fdkit CR", strings.ReplaceAll(fdk, "\n", "\r"), ReaderConfig{Name: "t"}, want},
		{"CSV CR", strings.ReplaceAll(csvText, "\n", "\r"), ReaderConfig{Name: "t", Columns: cols}, want},
		{"LIP6 CR", "4 1 100 120 3\r4 2 200 220 3\r", ReaderConfig{Name: "t"}, want},
		{"fdkit CRLF", strings.ReplaceAll(fdk, "\n", "\r\n"), ReaderConfig{Name: "t"}, ""},
		{"CSV CRLF", strings.ReplaceAll(csvText, "\n", "\r\n"), ReaderConfig{Name: "t", Columns: cols}, ""},
	} {
		recs, _, err := readString(t, c.in, c.cfg)
		if c.want == "" {
			assert.NoError(t, err, c.name)
			assert.Len(t, recs, 2, c.name)
			continue
		}
		assert.EqualError(t, err, c.want, c.name)
	}
}
