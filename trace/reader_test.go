package trace

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace/tracetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		msg   string // the error's text, when given
	}{
		// A key given twice (user48's F2: the last one won silently).
		"interval twice": {"#fdkit-trace version=1 interval=100ms interval=1s unit=ns\nsender seq sent arrival\n", 1, "interval",
			`t.fdkit:1: field interval: want each key once in the header line: given twice ("100ms", "1s")`},
		"unit twice": {"#fdkit-trace version=1 interval=100ms unit=ns unit=ms\nsender seq sent arrival\n", 1, "unit",
			`t.fdkit:1: field unit: want each key once in the header line: given twice ("ns", "ms")`},
		"version twice": {"#fdkit-trace version=1 version=1 interval=1s unit=ns\nsender seq sent arrival\n", 1, "version", ""},
		"meta twice": {"\n#fdkit-trace version=1 interval=1s unit=ns host=a host=b\nsender seq sent arrival\n", 2, "host",
			`t.fdkit:2: field host: want each key once in the header line: given twice ("a", "b")`},
		"version":   {"#fdkit-trace version=2 interval=1s unit=ns\nsender seq sent arrival\n", 1, "version", ""},
		"no unit":   {"#fdkit-trace version=1 interval=1s\nsender seq sent arrival\n", 1, "unit", ""},
		"bad ival":  {"#fdkit-trace version=1 interval=fast unit=ns\nsender seq sent arrival\n", 1, "interval", ""},
		"columns":   {"#fdkit-trace version=1 interval=1s unit=ns\nsender seq arrival\n", 2, "", ""},
		"no column": {"#fdkit-trace version=1 interval=1s unit=ns\n# c\n", 3, "", ""},
		"bad seq":   {"#fdkit-trace version=1 interval=1s unit=ns\nsender seq sent arrival\np x 1 2\n", 3, "seq", ""},
		"bad time":  {"#fdkit-trace version=1 interval=1s unit=ns\nsender seq sent arrival\np 1 1.5 2\n", 3, "sent", ""},
		"late #":    {"#fdkit-trace version=1 interval=1s unit=ns\nsender seq sent arrival\n# x\n", 3, "", ""},
		// A value NewWriter would refuse (FuzzFDKit's 87f5ea59d4900bef).
		"cr value": {"#fdkit-trace version=1 interval=1s unit=ns host=a\rb\nsender seq sent arrival\n", 1, "host", ""},
		"bad utf8": {"#fdkit-trace version=1 interval=1s unit=ns host=a\xffb\nsender seq sent arrival\n", 1, "", ""}, // refused for the whole line
	} {
		_, _, err := readString(t, c.in, ReaderConfig{Name: "t.fdkit"})
		var pe *ParseError
		require.ErrorAs(t, err, &pe, name)
		assert.Equal(t, c.line, pe.Line, name)
		assert.Equal(t, c.field, pe.Field, name)
		assert.Equal(t, "t.fdkit", pe.File, name)
		if c.msg != "" {
			assert.EqualError(t, err, c.msg, name)
		}
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

// decimalWant names the bound only for a well-formed number.
func TestDecimalWant(t *testing.T) {
	for _, in := range []string{"--5", "1.2.3", "", ".", "1e3", "x"} {
		assert.Equal(t, "decimal number of ms", decimalWant([]byte(in), time.Millisecond), in)
	}
	assert.Equal(t, "a time within ±9223372036854775807 ns (int64 nanoseconds, 292 years); this one is too large", decimalWant([]byte("-99999999999999999999"), time.Nanosecond))
}

// intTimeWant names the bound for an integer too large for a
// time.Duration, and the syntax otherwise (user48's F17: "want integer s
// or -, got \"9223372136\"" for an integer in s).
func TestIntTimeWant(t *testing.T) {
	for _, c := range []struct {
		in   string
		unit time.Duration
		want string
	}{
		{"9223372136", time.Second, "a time within ±9223372036 s (int64 nanoseconds, 292 years); this one is too large, or in a smaller unit than s"},
		{"-9223372136", time.Second, "a time within ±9223372036 s (int64 nanoseconds, 292 years); this one is too large, or in a smaller unit than s"},
		{"99999999999999999999", time.Nanosecond, "a time within ±9223372036854775807 ns (int64 nanoseconds, 292 years); this one is too large"},
		{"1.5", time.Second, "integer s or -"},
		{"x", time.Millisecond, "integer ms or -"},
		{"-", time.Millisecond, "integer ms or -"},
	} {
		assert.Equal(t, c.want, intTimeWant([]byte(c.in), c.unit, true), c.in)
	}
	_, _, err := readString(t, "#fdkit-trace version=1 interval=1s unit=s\nsender seq sent arrival\np 1 9223372136 -\n", ReaderConfig{Name: "b.fdk"})
	assert.EqualError(t, err, `b.fdk:3: field sent: want a time within ±9223372036 s (int64 nanoseconds, 292 years); this one is too large, or in a smaller unit than s, got "9223372136"`)
}

// allBlank is len(bytes.Trim(line, " \t")) == 0, which Next used to tell a
// line without data: spaces and tabs only; a carriage return, a vertical
// tab or a non-ASCII space is data.
func TestAllBlankIsTrim(t *testing.T) {
	for _, s := range []string{"", " ", "\t", " \t \t", "x", " x", "x ", "\t1\t", "\r", " \r", "\v", "\u00a0", " \t\n", "# c"} {
		assert.Equal(t, len(bytes.Trim([]byte(s), " \t")) == 0, allBlank([]byte(s)), "%q", s)
	}
	assert.True(t, allBlank([]byte("  \t ")))
	assert.False(t, allBlank([]byte("  \t 0")))
}

// Rotated files of one recording concatenated (cat h1.fdk h2.fdk) read as
// one trace: a repeated header with the first one's version, interval
// and unit is skipped with its comments and column line (user48's F37);
// another header, or a record before the repeated column line, is an
// error naming the line.
func TestFDKitRepeatedHeader(t *testing.T) {
	const head = "#fdkit-trace version=1 interval=100ms unit=ns part=1\n# a comment\nsender seq sent arrival\n"
	for _, c := range []struct {
		name, in string
		recs     int
		err      string
	}{
		{"rotated", head + "p 0 1 2\n" + "#fdkit-trace version=1 interval=100ms unit=ns part=2\n# another\nsender seq sent arrival\np 1 100000001 100000002\n", 2, ""},
		{"twice, no comment", head + "p 0 1 2\n#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\np 1 3 4\n", 2, ""},
		{"other interval", head + "p 0 1 2\n#fdkit-trace version=1 interval=1s unit=ns\nsender seq sent arrival\n", 1,
			`r.fdk:5: want a record, or a repeated header with the version, interval and unit of line 1's (version=1 interval=100ms unit=ns; traces recorded with other settings are replayed as files of their own), got "#fdkit-trace version=1 interval=1s unit=..."`},
		{"other unit", head + "p 0 1 2\n#fdkit-trace version=1 interval=100ms unit=ms\n", 1, "r.fdk:5: want a record, or a repeated header"},
		{"record before the column line", head + "p 0 1 2\n#fdkit-trace version=1 interval=100ms unit=ns\np 1 3 4\n", 1,
			`r.fdk:6: want column line "sender seq sent arrival" after the repeated header of line 5, got "p 1 3 4"`},
		{"comment among records", head + "p 0 1 2\n# late\n", 1, `r.fdk:5: want a record (comment lines only before the column line), got "# late"`},
	} {
		recs, _, err := readString(t, c.in, ReaderConfig{Name: "r.fdk"})
		if c.err == "" {
			require.NoError(t, err, c.name)
		} else {
			require.Error(t, err, c.name)
			assert.Contains(t, err.Error(), c.err, c.name)
		}
		assert.Len(t, recs, c.recs, c.name)
	}
}
