package trace

import (
	"bytes"
	"compress/gzip"
	"io"
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

func gz(t testing.TB, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, err := w.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

// xzOf returns s compressed as one xz stream.
func xzOf(t testing.TB, s string) []byte {
	var b bytes.Buffer
	w, err := xz.NewWriter(&b)
	require.NoError(t, err)
	_, err = w.Write([]byte(s))
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
	assert.Equal(t, "a complete xz stream: the file ends inside one (cut short, or a few bytes that are no xz stream appended to it)", pe.Want)
	assert.ErrorIs(t, pe.Err, io.ErrUnexpectedEOF)
}

// An xz error names the line reached and the compressed byte where the
// decompressor stopped; it gives a chunk's lines only once the chunk is
// whole, so a file of one chunk cut short names line 1, with the byte
// (user48's F5: "line 1 whatever was read").
func TestXZErrorsNameByte(t *testing.T) {
	xzOf := func(lines, block int) []byte {
		var sb strings.Builder
		for i := range lines {
			sb.WriteString("2 " + strconv.Itoa(i) + " " + strconv.Itoa(1000000*i+i*i%997) + " 2000000 3\n")
		}
		var xb bytes.Buffer
		xw, err := xz.WriterConfig{DictCap: 1 << 16, BlockSize: int64(block)}.NewWriter(&xb)
		require.NoError(t, err)
		_, _ = xw.Write([]byte(sb.String()))
		require.NoError(t, xw.Close())
		return xb.Bytes()
	}
	small, large := xzOf(1000, 1<<20), xzOf(10000, 1<<16) // one chunk; several blocks of 64 KiB of the trace
	for _, c := range []struct {
		name     string
		data     []byte
		line     int // 0: past line 1
		want     string
		at       int
		appended bool
	}{
		{"one chunk cut", small[:len(small)/2], 1, "a complete xz stream: the file ends inside one", len(small) / 2, false},
		{"later chunk cut", large[:len(large)/2], 0, "a complete xz stream: the file ends inside one", len(large) / 2, false},
		{"appended", append(slices.Clone(small), "garbage\n"...), 1001, "a complete xz stream: the file ends inside one", len(small) + 8, true},
	} {
		r, err := NewReader(bytes.NewReader(c.data), ReaderConfig{Name: "t.xz"})
		if err == nil {
			_, err = r.ReadAll()
		}
		var pe *ParseError
		require.ErrorAs(t, err, &pe, c.name)
		if c.line > 0 {
			assert.Equal(t, c.line, pe.Line, c.name)
		} else {
			assert.Greater(t, pe.Line, 1, c.name)
		}
		assert.Contains(t, pe.Want, c.want, c.name)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF, c.name)
		at := "byte " + strconv.Itoa(c.at) + " of the compressed file"
		if c.appended {
			assert.Contains(t, pe.Err.Error(), "at "+at+": ", c.name)
		} else {
			assert.Contains(t, pe.Err.Error(), "stopped at "+at+", in the xz chunk that holds the trace from this line on", c.name)
		}
	}
}

// xz errors say what is wrong as the gzip path does: data appended after
// the last stream, and damaged data, instead of the library's internal
// texts alone ("writeMatch: distance out of range"; user44's F17);
// padding and concatenated streams still read.
func TestXZErrorsSayWhat(t *testing.T) {
	body := "2 0 1000000 2000000 3\n2 1 2000000 3000000 3\n"
	var xb bytes.Buffer
	xw, err := xz.NewWriter(&xb)
	require.NoError(t, err)
	_, _ = xw.Write([]byte(strings.Repeat(body, 200)))
	require.NoError(t, xw.Close())
	one := xb.Bytes()
	read := func(data []byte) ([]Record, error) {
		r, err := NewReader(bytes.NewReader(data), ReaderConfig{Name: "t.xz"})
		if err != nil {
			return nil, err
		}
		return r.ReadAll()
	}
	for name, data := range map[string][]byte{
		"padding":     append(slices.Clone(one), 0, 0, 0, 0),
		"two streams": append(slices.Clone(one), one...),
	} {
		recs, err := read(data)
		require.NoError(t, err, name)
		assert.Len(t, recs, 400*(len(data)/len(one)), name)
	}

	var pe *ParseError
	_, err = read(append(slices.Clone(one), []byte("appended text, not an xz stream\n")...))
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "only xz streams (and their zero padding) in the file: the bytes after the last complete stream are not one (data appended to the file?)", pe.Want)
	assert.Equal(t, 401, pe.Line, "after the last line")

	damaged := slices.Clone(one)
	damaged[len(damaged)/2] ^= 0x55
	_, err = read(damaged)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "intact xz data: the compressed data is damaged (a changed or lost byte), so it cannot be decompressed", pe.Want)
	assert.Error(t, pe.Err)
	assert.Contains(t, err.Error(), "t.xz:")
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
