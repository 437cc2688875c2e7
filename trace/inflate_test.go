package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

// gzipBomb returns concatenated gzip members, each holding the same
// member-size bytes of valid LIP6 records, inflating to total bytes.
func gzipBomb(t testing.TB, member, total int) []byte {
	t.Helper()
	line := "4 1 1000 2000 1\n"
	plain := strings.Repeat(line, member/len(line))
	var one bytes.Buffer
	zw, err := gzip.NewWriterLevel(&one, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write([]byte(plain))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return bytes.Repeat(one.Bytes(), total/len(plain))
}

func readAllErr(r *Reader) (int, error) {
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

func TestGzipBombStopsAtRatio(t *testing.T) {
	// About 4 MB of gzip members inflating to 4 GiB of valid records.
	bomb := gzipBomb(t, 4<<20, 4<<30)
	require.Less(t, len(bomb), 10<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := NewReader(bytes.NewReader(bomb), ReaderConfig{Name: "bomb.gz", MaxRatio: 200})
	require.NoError(t, err)
	n, err := readAllErr(r)
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrDecompressionLimit)
	var le *DecompressionLimitError
	require.True(t, errors.As(err, &le))
	assert.LessOrEqual(t, le.Decompressed, int64(RatioSlack+bufSize+(4<<20)), "stopped soon after the slack")
	assert.Less(t, n, (RatioSlack+(4<<20))/16+1)
	assert.Contains(t, err.Error(), "bomb.gz:")
	assert.Contains(t, err.Error(), "gzip input decompresses to more than 200 times its size")
	// What was allocated is bounded by the slack read, not by the 4 GiB.
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<20), "allocations bounded by the slack, not by the 4 GiB")

	// Lenient reading does not swallow it.
	r, err = NewReader(bytes.NewReader(bomb), ReaderConfig{Name: "bomb.gz", MaxRatio: 200, Lenient: true})
	require.NoError(t, err)
	_, err = readAllErr(r)
	assert.ErrorIs(t, err, ErrDecompressionLimit)
	assert.Nil(t, r.Truncated())
}

func TestMaxDecompressed(t *testing.T) {
	plain := strings.Repeat("4 1 1000 2000 1\n", 1<<16) // 1 MiB
	var gz, xzb bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(plain))
	require.NoError(t, zw.Close())
	xw, err := xz.NewWriter(&xzb)
	require.NoError(t, err)
	xw.Write([]byte(plain))
	require.NoError(t, xw.Close())
	for _, c := range []struct {
		name string
		data []byte
	}{{"gzip", gz.Bytes()}, {"xz", xzb.Bytes()}} {
		r, err := NewReader(bytes.NewReader(c.data), ReaderConfig{Name: "t", MaxDecompressed: 100_000})
		require.NoError(t, err)
		n, err := readAllErr(r)
		assert.ErrorIs(t, err, ErrDecompressionLimit, c.name)
		assert.Contains(t, err.Error(), c.name+" input decompresses to more than 100000 bytes")
		assert.LessOrEqual(t, n, 100_000/16, c.name)
		// At the size exactly, or without bounds, everything is read.
		for _, opt := range []ReaderConfig{{MaxDecompressed: int64(len(plain))}, {}, {MaxRatio: 200}} {
			r, err = NewReader(bytes.NewReader(c.data), opt)
			require.NoError(t, err)
			n, err = readAllErr(r)
			require.NoError(t, err, c.name)
			assert.Equal(t, 1<<16, n, c.name)
		}
	}
}
