package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace/tracetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

func TestLIP6Excerpt(t *testing.T) {
	path := tracetest.Shared(t, "planetlab-lip6/recv_node1_excerpt.txt")
	recs, err := ReadFile(path, ReaderConfig{})
	require.NoError(t, err)
	require.Len(t, recs, 30035)

	// Independent parse with strings.Fields and strconv: every record equal.
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	i := 0
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		require.Len(t, fs, 5)
		seq, _ := strconv.ParseUint(fs[1], 10, 64)
		sent, _ := strconv.ParseInt(fs[2], 10, 64)
		recv, _ := strconv.ParseInt(fs[3], 10, 64)
		want := Record{Sender: fs[0], Seq: seq, HasSeq: true, Sent: time.Duration(sent), HasSent: true, Arrival: time.Duration(recv), HasArrival: true}
		require.Equal(t, want, recs[i], "line %d", i+1)
		i++
	}
	require.NoError(t, sc.Err())
	require.Equal(t, 30035, i)
	assert.Equal(t, Record{Sender: "4", Seq: 101, HasSeq: true, Sent: 9301432084211090, HasSent: true, Arrival: 47816110312853897, HasArrival: true}, recs[0])

	streams := Split(recs)
	require.Len(t, streams, 9)
	var senders []string
	total := 0
	for _, s := range streams {
		senders = append(senders, s.Sender)
		total += len(s.Records)
	}
	assert.Equal(t, []string{"0", "2", "3", "4", "5", "6", "7", "8", "9"}, senders)
	assert.Equal(t, 30035, total)

	// Counts and losses from SOURCES.md, with losses computed here from the
	// sequence range (the excerpt has no duplicates or reordering).
	want := map[string][2]int{"0": {3340, 0}, "2": {3325, 16}, "4": {3332, 9}, "7": {3339, 1}, "9": {3340, 1}}
	for _, s := range streams {
		w, ok := want[s.Sender]
		if !ok {
			continue
		}
		first, last := s.Records[0].Seq, s.Records[len(s.Records)-1].Seq
		lost := int(last-first+1) - len(s.Records)
		assert.Equal(t, w[0], len(s.Records), "sender %s records", s.Sender)
		assert.Equal(t, w[1], lost, "sender %s lost", s.Sender)
	}
}

func TestEmissionLogXZ(t *testing.T) {
	path := tracetest.Shared(t, "planetlab-lip6/sentinterval_node0.csv.xz")
	r, err := Open(path, ReaderConfig{Sender: "0"})
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, FormatLIP6Emission, r.Format())
	assert.Equal(t, "xz", r.Compression())
	n := 0
	var first, last Record
	for rec, err := range r.All() {
		require.NoError(t, err)
		require.Equal(t, uint64(n), rec.Seq)
		if n == 0 {
			first = rec
		}
		last = rec
		n++
	}
	assert.Equal(t, 100001, n)
	assert.Equal(t, Record{Sender: "0", Seq: 0, HasSeq: true, Sent: 2439202316247486, HasSent: true}, first)
	assert.Equal(t, uint64(100000), last.Seq)
}

func readString(t *testing.T, s string, opt ReaderConfig) ([]Record, *Reader, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(s), opt)
	if err != nil {
		return nil, nil, err
	}
	recs, err := r.ReadAll()
	return recs, r, err
}

func lip6(sender string, seq uint64, sent, recv int64) Record {
	return Record{Sender: sender, Seq: seq, HasSeq: true, Sent: time.Duration(sent), HasSent: true, Arrival: time.Duration(recv), HasArrival: true}
}

func TestLIP6LineEndings(t *testing.T) {
	want := []Record{lip6("4", 101, 9301432084211090, 47816110312853897), lip6("9", 70, 8410851650497718, 47816110312872196)}
	for name, in := range map[string]string{
		"LF":            "4 101 9301432084211090 47816110312853897 14\n9 70 8410851650497718 47816110312872196 15\n",
		"no final LF":   "4 101 9301432084211090 47816110312853897 14\n9 70 8410851650497718 47816110312872196 15",
		"CRLF":          "4 101 9301432084211090 47816110312853897 14\r\n9 70 8410851650497718 47816110312872196 15\r\n",
		"tabs, blanks":  "4\t101 9301432084211090  47816110312853897 14 \n\n9 70 8410851650497718 47816110312872196 15\n\n",
		"CRLF no final": "4 101 9301432084211090 47816110312853897 14\r\n9 70 8410851650497718 47816110312872196 15\r",
	} {
		recs, r, err := readString(t, in, ReaderConfig{})
		require.NoError(t, err, name)
		assert.Equal(t, FormatLIP6, r.Format(), name)
		assert.Equal(t, want, recs, name)
	}
}

func gz(t testing.TB, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, err := w.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

func TestCompressionByMagic(t *testing.T) {
	in := "2 5 100 200 3\n"
	var xb bytes.Buffer
	xw, err := xz.NewWriter(&xb)
	require.NoError(t, err)
	_, _ = xw.Write([]byte(in))
	require.NoError(t, xw.Close())
	for name, data := range map[string][]byte{"gzip": gz(t, in), "xz": xb.Bytes(), "": []byte(in)} {
		r, err := NewReader(bytes.NewReader(data), ReaderConfig{Name: "trace.txt"}) // the name says nothing
		require.NoError(t, err, name)
		assert.Equal(t, name, r.Compression())
		recs, err := r.ReadAll()
		require.NoError(t, err)
		assert.Equal(t, []Record{lip6("2", 5, 100, 200)}, recs)
	}
}

func TestCompressionFor(t *testing.T) {
	for path, want := range map[string]Compression{
		"a.fdkit.gz": Gzip, "dir.xz/a.fdkit.xz": XZ, "a.fdkit": NoCompression, "a.gz.txt": NoCompression, "-": NoCompression,
	} {
		assert.Equal(t, want, CompressionFor(path), path)
	}
}

func TestTruncatedGzip(t *testing.T) {
	var sb strings.Builder
	for i := range 20000 {
		sb.WriteString("2 " + strconv.Itoa(i) + " 1000000 2000000 3\n")
	}
	data := gz(t, sb.String())
	data = data[:len(data)/2]

	// Strict: the cut is an error naming the file and the line.
	r, err := NewReader(bytes.NewReader(data), ReaderConfig{Name: "cut.gz"})
	if err == nil {
		_, err = r.ReadAll()
	}
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "cut.gz", pe.File)
	assert.Equal(t, "a complete gzip stream", pe.Want)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Positive(t, pe.Line)
	assert.Contains(t, err.Error(), "cut.gz:")

	// Lenient: every complete line before the cut, in order, and where it
	// stopped.
	r, err = NewReader(bytes.NewReader(data), ReaderConfig{Name: "cut.gz", Lenient: true})
	require.NoError(t, err)
	recs, err := r.ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	for i, rec := range recs {
		require.Equal(t, lip6("2", uint64(i), 1000000, 2000000), rec)
	}
	require.NotNil(t, r.Truncated())
	assert.Equal(t, len(recs)+1, r.Truncated().Line, "the input stops inside the line after the last record")
	assert.ErrorIs(t, r.Truncated(), io.ErrUnexpectedEOF)
	assert.Zero(t, r.Skipped())
	_, err = r.Next()
	assert.Equal(t, io.EOF, err)
}

// TestFlushedWriterSurvivesKill cuts a trace after a Writer's Flush, as a
// process killed there leaves it, for each compression: a lenient Reader
// gets back every record written before the Flush and says where the file
// ended; the records of the second batch, written but not flushed, may be
// lost but never come back corrupted.
func TestFlushedWriterSurvivesKill(t *testing.T) {
	rec := func(i int) Record {
		return Record{Sender: "p", Seq: uint64(i), HasSeq: true, Sent: time.Duration(i) * time.Millisecond, HasSent: true,
			Arrival: time.Duration(i)*time.Millisecond + 123456789, HasArrival: true}
	}
	for _, tc := range []struct {
		c Compression
		n int // records before the flush
	}{{NoCompression, 3000}, {Gzip, 3000}, {XZ, 3000}, {Gzip, 30}, {XZ, 30}} {
		c, n := tc.c, tc.n
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{Interval: time.Millisecond}, c)
		require.NoError(t, err)
		for i := range n {
			require.NoError(t, w.Write(rec(i)))
		}
		require.NoError(t, w.Flush())
		flushed := buf.Len()
		require.NoError(t, w.Flush(), "a second Flush with nothing new")
		assert.Equal(t, flushed, buf.Len(), "compression %d: an idle Flush writes nothing", c)
		for i := n; i < n+10; i++ {
			require.NoError(t, w.Write(rec(i)))
		}
		// What a kill leaves: the flushed bytes, plus (uncompressed) a
		// partial line of the next batch.
		data := buf.Bytes()[:flushed]
		if c == NoCompression {
			data = append(slices.Clone(data), "p 3000 3000000 3"...) // a line of the next batch, cut
		}
		r, err := NewReader(bytes.NewReader(data), ReaderConfig{Name: "killed", Lenient: true})
		require.NoError(t, err, "compression %d", c)
		recs, err := r.ReadAll()
		require.NoError(t, err, "compression %d", c)
		require.Len(t, recs, n, "compression %d", c)
		for i, got := range recs {
			require.Equal(t, rec(i), got)
		}
		if c != XZ { // a flushed xz file is complete streams
			require.NotNil(t, r.Truncated(), "compression %d", c)
			assert.Equal(t, 2+n+1, r.Truncated().Line, "compression %d: header, column line, %d records, then the cut", c, n)
		}

		// Strict reading of the complete file after Close: one stream.
		require.NoError(t, w.Close())
		recs, err = ReadFile(writeTemp(t, buf.Bytes()), ReaderConfig{})
		require.NoError(t, err)
		assert.Len(t, recs, n+10)
	}
}

func TestLenientCutLastLine(t *testing.T) {
	const in = "#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\np 0 100 200\np 1 200 3"
	recs, r, err := readString(t, in, ReaderConfig{Name: "rec.fdk", Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, []Record{{Sender: "p", Seq: 0, HasSeq: true, Sent: 100, HasSent: true, Arrival: 200, HasArrival: true}}, recs)
	require.NotNil(t, r.Truncated())
	assert.Equal(t, 4, r.Truncated().Line)
	assert.Equal(t, "p 1 200 3", r.Truncated().Got)
	assert.Contains(t, r.Truncated().Error(), "rec.fdk:4: want a line end")

	path := writeTemp(t, []byte(in))
	recs, err = ReadFile(path, ReaderConfig{Lenient: true})
	assert.Len(t, recs, 1)
	var se *SkippedLinesError
	require.ErrorAs(t, err, &se)
	assert.Zero(t, se.Count)
	assert.Equal(t, 4, se.Truncated.Line)
	assert.Contains(t, err.Error(), "input cut short: "+path+":4:")
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

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

func TestMalformedLines(t *testing.T) {
	const good = "4 101 9301432084211090 47816110312853897 14\n"
	cases := []struct {
		name, line  string
		field, want string
		got         string
	}{
		{"bad seq", "4 1x1 9301432084211090 47816110312853897 14", "seq", "unsigned integer", "1x1"},
		{"negative seq", "4 -1 9301432084211090 47816110312853897 14", "seq", "unsigned integer", "-1"},
		{"bad send", "4 101 93014320842.11090 47816110312853897 14", "t_send_ns", "integer nanoseconds", "93014320842.11090"},
		{"overflow", "4 101 9301432084211090 99999999999999999999 14", "t_recv_ns", "integer nanoseconds", "99999999999999999999"},
		{"bad hops", "4 101 9301432084211090 47816110312853897 x", "hops", "unsigned integer", "x"},
		{"missing column", "4 101 9301432084211090 47816110312853897", "hops", "5 blank-separated fields \"sender seq t_send_ns t_recv_ns hops\"", "4 101 9301432084211090 47816110312853897"},
		{"extra column", "4 101 9301432084211090 47816110312853897 14 7", "", "5 blank-separated fields \"sender seq t_send_ns t_recv_ns hops\"", "4 101 9301432084211090 47816110312853897..."},
	}
	for _, c := range cases {
		in := good + good + c.line + "\n" + good
		recs, _, err := readString(t, in, ReaderConfig{Name: "f.txt"})
		var pe *ParseError
		require.ErrorAs(t, err, &pe, c.name)
		assert.Equal(t, &ParseError{File: "f.txt", Line: 3, Field: c.field, Want: c.want, Got: c.got}, pe, c.name)
		assert.Len(t, recs, 2, c.name)

		recs, r, err := readString(t, in, ReaderConfig{Name: "f.txt", Lenient: true})
		require.NoError(t, err, c.name)
		assert.Len(t, recs, 3, c.name)
		assert.Equal(t, 1, r.Skipped(), c.name)
		require.Len(t, r.SkippedErrors(), 1)
		assert.Equal(t, 3, r.SkippedErrors()[0].Line)
	}
}

func TestErrorMessage(t *testing.T) {
	_, _, err := readString(t, "4 101 9301432084211090 47816110312853897 14\n4 1x1 1 2 3\n", ReaderConfig{Name: "f.txt"})
	require.EqualError(t, err, `f.txt:2: field seq: want unsigned integer, got "1x1"`)
}

func TestLongLine(t *testing.T) {
	in := "4 101 9301432084211090 47816110312853897 14\n" + strings.Repeat("9", 100000) + "\n4 102 9301432084211090 47816110312853897 14\n"
	recs, r, err := readString(t, in, ReaderConfig{Lenient: true})
	require.NoError(t, err)
	assert.Len(t, recs, 2)
	assert.Equal(t, 1, r.Skipped())
	_, _, err = readString(t, in, ReaderConfig{})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 2, pe.Line)
}

func TestEmissionFormats(t *testing.T) {
	want := []Record{
		{Sender: "n", Seq: 0, HasSeq: true, Sent: 2439202316247486, HasSent: true},
		{Sender: "n", Seq: 1, HasSeq: true, Sent: 2439202416371288, HasSent: true},
	}
	recs, r, err := readString(t, "numseq,timestamp_start_send,timestamp_end_send\r\n0,2439202316247486,2439202316394754\r\n1,2439202416371288,2439202416450626", ReaderConfig{Sender: "n"})
	require.NoError(t, err)
	assert.Equal(t, FormatLIP6Emission, r.Format())
	assert.Equal(t, want, recs)
	// The dataset README's space-separated form, format forced.
	recs, _, err = readString(t, "0 2439202316247486 2439202316394754\n1 2439202416371288 2439202416450626\n", ReaderConfig{Sender: "n", Format: FormatLIP6Emission})
	require.NoError(t, err)
	assert.Equal(t, want, recs)

	_, _, err = readString(t, "numseq,timestamp_start_send,timestamp_end_send\n0,1\n", ReaderConfig{Name: "e"})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 2, pe.Line)
	assert.Equal(t, "timestamp_end_send", pe.Field)
}

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
	assert.Equal(t, &ParseError{File: "c.csv", Line: 2, Field: "t", Want: "a time of at most 9223372036 s (292 years; a larger number is in a smaller unit than s)", Got: "9301432084.211"}, pe)
	_, _, err = readString(t, "a,t\n1,2\n1\n", ReaderConfig{Name: "c.csv", Columns: Columns{Arrival: "t"}})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 3, pe.Line)
	assert.Equal(t, "t", pe.Field)
}

func TestParseDecimalTime(t *testing.T) {
	cases := []struct {
		in   string
		unit time.Duration
		want time.Duration
		ok   bool
	}{
		{"1", time.Second, time.Second, true},
		{"1.5", time.Second, 1500 * time.Millisecond, true},
		{".5", time.Millisecond, 500 * time.Microsecond, true},
		{"2.", time.Millisecond, 2 * time.Millisecond, true},
		{"0.0000000004", time.Second, 0, true},
		{"0.0000000005", time.Second, 1, true},
		{"-0.0000000015", time.Second, -2, true},
		{"1700000000.123456789", time.Second, 1700000000123456789, true},
		{"0.30000000000000004", time.Second, 300 * time.Millisecond, true},
		{"123", time.Nanosecond, 123, true},
		{"1.5", time.Nanosecond, 2, true},
		{"9223372036.854775807", time.Second, 9223372036854775807, true},
		{"9223372036.854775808", time.Second, 0, false},
		{"", time.Second, 0, false},
		{".", time.Second, 0, false},
		{"1e3", time.Second, 0, false},
		{"1.2.3", time.Second, 0, false},
		{"--1", time.Second, 0, false},
	}
	for _, c := range cases {
		got, ok := parseDecimalTime([]byte(c.in), c.unit)
		assert.Equal(t, c.ok, ok, c.in)
		if c.ok {
			assert.Equal(t, c.want, got, c.in)
		}
	}
}

func TestFDKitRoundTrip(t *testing.T) {
	recs := []Record{
		lip6("a", 0, -5, 47816110312853897),
		{Sender: "", Seq: 3, HasSeq: true, Arrival: 7, HasArrival: true},
		{Sender: "b", Sent: 9, HasSent: true},
		{Sender: "b"},
	}
	h := Header{Version: 1, Interval: 103500 * time.Microsecond, Meta: map[string]string{"preset": "wan", "seed": "7"}, Comments: []string{"made by a test", ""}}
	for _, c := range []Compression{NoCompression, Gzip, XZ} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, h, c)
		require.NoError(t, err)
		for _, r := range recs {
			require.NoError(t, w.Write(r))
		}
		require.NoError(t, w.Close())
		r, err := NewReader(&buf, ReaderConfig{})
		require.NoError(t, err)
		assert.Equal(t, FormatFDKit, r.Format())
		assert.Equal(t, h, r.Header())
		got, err := r.ReadAll()
		require.NoError(t, err)
		assert.Equal(t, recs, got)
	}
}

func TestFDKitText(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Interval: 100 * time.Millisecond}, NoCompression)
	require.NoError(t, err)
	require.NoError(t, w.Write(Record{Sender: "p", Seq: 1, HasSeq: true, Sent: 100, HasSent: true, Arrival: 120, HasArrival: true}))
	require.NoError(t, w.Close())
	assert.Equal(t, "#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\np 1 100 120\n", buf.String())

	// Other units are read exactly.
	recs, _, err := readString(t, "#fdkit-trace version=1 interval=1s unit=ms\nsender seq sent arrival\np 1 3 -\n", ReaderConfig{})
	require.NoError(t, err)
	assert.Equal(t, []Record{{Sender: "p", Seq: 1, HasSeq: true, Sent: 3 * time.Millisecond, HasSent: true}}, recs)

	for name, c := range map[string]struct {
		in    string
		line  int
		field string
	}{
		"version":   {"#fdkit-trace version=2 interval=1s unit=ns\nsender seq sent arrival\n", 1, "version"},
		"no unit":   {"#fdkit-trace version=1 interval=1s\nsender seq sent arrival\n", 1, "unit"},
		"bad ival":  {"#fdkit-trace version=1 interval=fast unit=ns\nsender seq sent arrival\n", 1, "interval"},
		"columns":   {"#fdkit-trace version=1 interval=1s unit=ns\nsender seq arrival\n", 2, ""},
		"no column": {"#fdkit-trace version=1 interval=1s unit=ns\n# c\n", 3, ""},
		"bad seq":   {"#fdkit-trace version=1 interval=1s unit=ns\nsender seq sent arrival\np x 1 2\n", 3, "seq"},
		"bad time":  {"#fdkit-trace version=1 interval=1s unit=ns\nsender seq sent arrival\np 1 1.5 2\n", 3, "sent"},
		"late #":    {"#fdkit-trace version=1 interval=1s unit=ns\nsender seq sent arrival\n# x\n", 3, ""},
	} {
		_, _, err := readString(t, c.in, ReaderConfig{Name: "t.fdkit"})
		var pe *ParseError
		require.ErrorAs(t, err, &pe, name)
		assert.Equal(t, c.line, pe.Line, name)
		assert.Equal(t, c.field, pe.Field, name)
		assert.Equal(t, "t.fdkit", pe.File, name)
	}

	_, err = NewWriter(io.Discard, Header{Meta: map[string]string{"a b": "x"}}, NoCompression)
	assert.Error(t, err)
	w, err = NewWriter(io.Discard, Header{}, NoCompression)
	require.NoError(t, err)
	assert.Error(t, w.Write(Record{Sender: "a b"}))
}

func TestIteratorStopsOnError(t *testing.T) {
	r, err := NewReader(strings.NewReader("1 1 1 1 1\n1 x 1 1 1\n1 3 1 1 1\n"), ReaderConfig{})
	require.NoError(t, err)
	var n int
	var last error
	for _, err := range r.All() {
		n++
		last = err
	}
	assert.Equal(t, 2, n)
	var pe *ParseError
	assert.True(t, errors.As(last, &pe))
	_, err = r.Next()
	assert.Equal(t, last, err, "errors are sticky")
}

func TestTruncatedXZ(t *testing.T) {
	var sb strings.Builder
	for i := range 20000 {
		sb.WriteString("2 " + strconv.Itoa(i) + " 1000000 2000000 3\n")
	}
	var xb bytes.Buffer
	xw, err := xz.NewWriter(&xb)
	require.NoError(t, err)
	_, _ = xw.Write([]byte(sb.String()))
	require.NoError(t, xw.Close())
	data := xb.Bytes()[:xb.Len()-20]
	r, err := NewReader(bytes.NewReader(data), ReaderConfig{Name: "cut.xz"})
	if err == nil {
		_, err = r.ReadAll()
	}
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "cut.xz", pe.File)
	assert.Equal(t, "a complete xz stream", pe.Want)
	assert.Error(t, pe.Err)
}

func TestHeartbeat(t *testing.T) {
	r := lip6("4", 101, 9301432084211090, 47816110312853897)
	hb := r.Heartbeat()
	assert.Equal(t, uint64(101), hb.Seq)
	assert.True(t, hb.HasSeq)
	assert.Equal(t, time.Duration(9301432084211090), hb.Sent)
	assert.True(t, hb.HasSent)
	assert.Equal(t, time.Duration(47816110312853897), hb.Arrival)
}

func TestSummarizeReaderMatchesSplit(t *testing.T) {
	p, err := LookupPreset("jitter")
	require.NoError(t, err)
	var all []Record
	for _, s := range []string{"a", "b", "10", "9"} {
		cfg := p.Config
		cfg.Sender = s
		cfg.Duration = 30 * time.Second
		recs, err := Generate(cfg, NewRand(uint64(len(all))))
		require.NoError(t, err)
		all = append(all, recs...)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{}, NoCompression)
	require.NoError(t, err)
	for _, r := range all {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
	r, err := NewReader(&buf, ReaderConfig{})
	require.NoError(t, err)
	got, err := SummarizeReader(r)
	require.NoError(t, err)
	streams := Split(all)
	require.Len(t, got, len(streams))
	assert.Equal(t, []string{"9", "10", "a", "b"}, []string{streams[0].Sender, streams[1].Sender, streams[2].Sender, streams[3].Sender})
	for i, s := range streams {
		assert.Equal(t, Summarize(s.Records), got[i])
	}
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

func TestReadFileLenientReportsSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.txt")
	require.NoError(t, os.WriteFile(path, []byte("1 1 1 1 1\n1 x 1 1 1\n1 3 1 1 1\n"), 0o644))
	recs, err := ReadFile(path, ReaderConfig{Lenient: true})
	assert.Len(t, recs, 2)
	var se *SkippedLinesError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 1, se.Count)
	assert.Equal(t, path, se.File)
	assert.Equal(t, 2, se.Errors[0].Line)
	assert.Contains(t, err.Error(), "skipped 1 malformed line")
}

func TestEmptyInput(t *testing.T) {
	_, _, err := readString(t, "", ReaderConfig{Name: "e"})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "empty input", pe.Got)
	recs, _, err := readString(t, "", ReaderConfig{Format: FormatLIP6})
	require.NoError(t, err)
	assert.Empty(t, recs)
}

func TestCSVBadUnit(t *testing.T) {
	for _, u := range []time.Duration{5 * time.Second, 2, time.Minute} {
		_, _, err := readString(t, "t\n1\n", ReaderConfig{Columns: Columns{Arrival: "t", Unit: u}})
		assert.ErrorContains(t, err, "not ns, us, ms or s", u)
	}
	_, _, err := readString(t, "t\n1\n", ReaderConfig{Format: FormatCSV})
	assert.ErrorContains(t, err, "Columns.Sent or Columns.Arrival")
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

// decimalWant names the bound only for a well-formed number.
func TestDecimalWant(t *testing.T) {
	for _, in := range []string{"--5", "1.2.3", "", ".", "1e3", "x"} {
		assert.Equal(t, "decimal number of ms", decimalWant([]byte(in), time.Millisecond), in)
	}
	assert.Equal(t, "a time of at most 9223372036854775807 ns (292 years)", decimalWant([]byte("-99999999999999999999"), time.Nanosecond))
}

// Bytes appended after a complete gzip stream are reported as such, not as
// a cut stream; concatenated members still read as one stream.
func TestGzipTrailingData(t *testing.T) {
	body := "2 0 1000000 2000000 3\n2 1 2000000 3000000 3\n"
	two := append(gz(t, body), gz(t, "2 2 3000000 4000000 3\n")...)
	r, err := NewReader(bytes.NewReader(two), ReaderConfig{Name: "two.gz"})
	require.NoError(t, err)
	recs, err := r.ReadAll()
	require.NoError(t, err)
	assert.Len(t, recs, 3)

	for junk, want := range map[string]string{
		"garbage\n":                      "the bytes after gzip member 1 are too few for a gzip member header",
		"some longer garbage appended\n": "the bytes after gzip member 1 are not a gzip member (data appended to the compressed file?)",
	} {
		data := append(gz(t, body), junk...)
		r, err := NewReader(bytes.NewReader(data), ReaderConfig{Name: "junk.gz"})
		if err == nil {
			_, err = r.ReadAll()
		}
		var pe *ParseError
		require.ErrorAs(t, err, &pe, junk)
		assert.Equal(t, "junk.gz", pe.File)
		assert.Positive(t, pe.Line)
		assert.Contains(t, err.Error(), want)
	}
}
