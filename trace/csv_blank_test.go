package trace

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Blank lines do not count toward a record's byte limit: 100,000 of them
// (LF or CRLF) between the header and the records, or between two
// records, are read through (user44's F6, session 22: refused as "record
// too long" at line 2), and the lines errors name stay right after them.
func TestCSVBlankLinesNotARecord(t *testing.T) {
	cols := Columns{Seq: "seq", Arrival: "recv"}
	for _, nl := range []string{"\n", "\r\n"} {
		blank := strings.Repeat(nl, 100000)
		in := "seq,recv" + nl + blank + "0,1" + nl + "1,2" + nl + blank + "2,3" + nl
		recs, _, err := readString(t, in, ReaderConfig{Columns: cols})
		require.NoError(t, err, "%q", nl)
		require.Len(t, recs, 3)
		assert.EqualValues(t, 3, recs[2].Arrival)

		// A malformed field after them is named at its own line.
		_, _, err = readString(t, in+blank+"x,4"+nl, ReaderConfig{Columns: cols})
		var pe *ParseError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, 1+100000+2+100000+1+100000+1, pe.Line, "%q", nl)
		assert.Equal(t, "seq", pe.Field)

		// So is a huge line after them, found without reading on.
		huge := "3," + strings.Repeat("7", 1<<20) + nl
		_, _, err = readString(t, in+blank+huge+"4,5"+nl, ReaderConfig{Columns: cols, Lenient: true})
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, 1+100000+2+100000+1+100000+1, pe.Line, "%q", nl)
		assert.ErrorIs(t, err, errCSVRecordTooLong)
	}
}

// More blank lines in a row than csvLinesMax allows: an error naming the
// first of them, after reading about csvLinesMax bytes; a quoted field
// that spans more lines than that is named at the line it starts.
func TestCSVTooManyLines(t *testing.T) {
	cols := Columns{Seq: "seq", Arrival: "recv"}
	head := "seq,recv\n0,1\n1,2\n"
	src := &countingReader{r: strings.NewReader(head + strings.Repeat("\n", 3<<20) + "2,3\n")}
	r, err := NewReader(src, ReaderConfig{Name: "b.csv", Columns: cols, Lenient: true})
	require.NoError(t, err)
	recs, err := r.ReadAll()
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Len(t, recs, 2)
	assert.Equal(t, 4, pe.Line)
	assert.Contains(t, pe.Error(), "b.csv:4: want at most 1048576 blank lines in a row")
	assert.Less(t, src.n, 2<<20)

	src = &countingReader{r: strings.NewReader(head + "\n\n2,\"" + strings.Repeat("\n", 3<<20) + "\",3\n")}
	r, err = NewReader(src, ReaderConfig{Name: "q.csv", Columns: cols})
	require.NoError(t, err)
	_, err = r.ReadAll()
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 6, pe.Line)
	assert.Contains(t, pe.Error(), "q.csv:6: want a CSV record of at most 1048576 lines (an unterminated quoted field?)")
	assert.Less(t, src.n, 2<<20)

	// Just under the bound: read through.
	recs, _, err = readString(t, head+strings.Repeat("\n", csvLinesMax-8192)+"2,3\n", ReaderConfig{Columns: cols})
	require.NoError(t, err)
	assert.Len(t, recs, 3)
}
