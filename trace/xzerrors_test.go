package trace

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

// Data after the last xz stream is told from damage by the bytes the
// decompressor read, not by the library's error text (rvM's item 5): a
// footer (its CRC32 checked), zero padding, then bytes that are no
// stream header. After padding too; a header with the magic but a wrong
// checksum, or data changed inside the footer, is damage.
func TestXZAppendedByBytes(t *testing.T) {
	var xb bytes.Buffer
	xw, err := xz.NewWriter(&xb)
	require.NoError(t, err)
	_, _ = xw.Write([]byte(strings.Repeat("2 0 1000000 2000000 3\n", 50)))
	require.NoError(t, xw.Close())
	one := xb.Bytes()
	require.Equal(t, "YZ", string(one[len(one)-2:]))
	want := func(data []byte) string {
		t.Helper()
		r, err := NewReader(bytes.NewReader(data), ReaderConfig{Name: "t.xz"})
		if err == nil {
			_, err = r.ReadAll()
		}
		var pe *ParseError
		require.ErrorAs(t, err, &pe)
		return pe.Want
	}
	const appended = "only xz streams (and their zero padding) in the file: the bytes after the last complete stream are not one (data appended to the file?)"
	const damaged = "intact xz data: the compressed data is damaged (a changed or lost byte), so it cannot be decompressed"
	junk := []byte("appended text, not an xz stream\n")
	assert.Equal(t, appended, want(append(slices.Clone(one), junk...)))
	assert.Equal(t, appended, want(slices.Concat(one, make([]byte, 96), junk)), "after 96 bytes of padding")
	assert.Equal(t, appended, want(slices.Concat(one, one, junk)), "after a second stream")

	hdr := slices.Clone(one[:12]) // the magic, flags and their CRC32
	hdr[9] ^= 1
	assert.Equal(t, damaged, want(slices.Concat(one, hdr, junk)), "a header with a wrong checksum")
	bad := slices.Concat(one, junk)
	bad[len(one)-6] ^= 1 // the footer's Backward Size: the index size no longer matches
	assert.Equal(t, damaged, want(bad))

	// The rule alone: footer, padding, and 1 to 12 bytes that are not
	// the start of a header.
	footer := one[len(one)-xzFooterLen:]
	for _, c := range []struct {
		tail []byte
		want bool
	}{
		{slices.Concat(footer, junk[:12]), true},
		{slices.Concat(footer, junk[:1]), true},
		{slices.Concat(footer, make([]byte, 8), junk[:12]), true},
		{slices.Concat(footer, junk[:13]), false}, // more than a header read
		{slices.Concat(footer, one[:12]), false},  // a header's magic
		{slices.Concat(footer, one[:3]), false},   // its start
		{slices.Concat(footer, make([]byte, 3), junk[:12]), false},
		{slices.Concat(footer[1:], junk[:12]), false},
		{slices.Concat([]byte{1}, footer[1:], junk[:12]), false}, // CRC32 wrong
		{junk[:12], false},
		{nil, false},
	} {
		assert.Equal(t, c.want, notStreamAfterFooter(c.tail), "%q", c.tail)
	}
}

// xzTail keeps the last bytes read, in order, across reads of any size.
func TestXZTail(t *testing.T) {
	src := make([]byte, 1000)
	for i := range src {
		src[i] = byte(i * 7)
	}
	tl := &xzTail{r: bytes.NewReader(src)}
	assert.Empty(t, tl.last())
	var got int
	for _, n := range []int{1, 5, 3, 200, 1, 130, 7} {
		k, err := tl.Read(make([]byte, n))
		require.NoError(t, err)
		got += k
		assert.Equal(t, src[max(0, got-xzTailLen):got], tl.last(), "after %d bytes", got)
	}
}
