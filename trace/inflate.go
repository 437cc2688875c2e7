package trace

import (
	"errors"
	"fmt"
	"io"
)

// ErrDecompressionLimit is wrapped by the error of a Reader whose
// compressed input decompresses to more than ReaderConfig.MaxDecompressed bytes
// or more than ReaderConfig.MaxRatio times the compressed bytes read.
var ErrDecompressionLimit = errors.New("decompression limit exceeded")

// RatioSlack is how many decompressed bytes ReaderConfig.MaxRatio allows before
// it applies (the start of a stream can inflate more than its average).
const RatioSlack = 64 << 20

// DecompressionLimitError says which bound a compressed input exceeded.
type DecompressionLimitError struct {
	Compression  string // "gzip" or "xz"
	Decompressed int64  // bytes decompressed when the bound was exceeded
	Compressed   int64  // compressed bytes read by then
	// Max or Ratio is the bound exceeded (the other is 0).
	Max   int64
	Ratio float64
}

func (e *DecompressionLimitError) Error() string {
	if e.Max > 0 {
		return fmt.Sprintf("%s input decompresses to more than %d bytes (the limit)", e.Compression, e.Max)
	}
	return fmt.Sprintf("%s input decompresses to more than %g times its size (%d bytes from %d): a decompression bomb?", e.Compression, e.Ratio, e.Decompressed, e.Compressed)
}

// Unwrap returns ErrDecompressionLimit.
func (e *DecompressionLimitError) Unwrap() error { return ErrDecompressionLimit }

// byteCounter counts the bytes read through it.
type byteCounter struct {
	r io.Reader
	n int64
}

func (c *byteCounter) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}

// inflateGuard fails once the decompressed bytes pass max, or pass ratio
// times the compressed bytes read (beyond RatioSlack).
type inflateGuard struct {
	r     io.Reader
	comp  string
	raw   *byteCounter
	n     int64
	max   int64
	ratio float64
	err   error
}

func (g *inflateGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.max > 0 && int64(len(p)) > g.max-g.n+1 {
		p = p[:g.max-g.n+1] // never hand out more than one byte past the bound
	}
	k, err := g.r.Read(p)
	g.n += int64(k)
	switch {
	case g.max > 0 && g.n > g.max:
		g.err = &DecompressionLimitError{Compression: g.comp, Decompressed: g.n, Compressed: g.raw.n, Max: g.max}
	case g.ratio > 0 && g.n > RatioSlack && float64(g.n) > g.ratio*float64(g.raw.n):
		g.err = &DecompressionLimitError{Compression: g.comp, Decompressed: g.n, Compressed: g.raw.n, Ratio: g.ratio}
	}
	if g.err != nil {
		return 0, g.err
	}
	return k, err
}
