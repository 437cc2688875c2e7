package trace

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// gzipMembers reads the gzip members of raw one after another (RFC 1952
// §2.2: a gzip file is a series of members), as gzip.Reader's multistream
// mode does, but tells bytes after a complete member that are not another
// member from a member cut short: gzip.Reader reports both as a bare
// "unexpected EOF" or "invalid header".
type gzipMembers struct {
	zr      *gzip.Reader // Multistream(false), reading raw
	raw     *bufio.Reader
	members int // members read to their end
}

func newGzipMembers(raw *bufio.Reader) (*gzipMembers, error) {
	zr, err := gzip.NewReader(raw)
	if err != nil {
		return nil, err
	}
	zr.Multistream(false)
	return &gzipMembers{zr: zr, raw: raw}, nil
}

func (g *gzipMembers) Read(p []byte) (int, error) {
	for {
		n, err := g.zr.Read(p)
		if err != io.EOF {
			return n, err
		}
		g.members++
		if _, perr := g.raw.Peek(1); perr == io.EOF {
			return n, io.EOF
		}
		if err := g.zr.Reset(g.raw); err != nil {
			if err == io.EOF {
				return n, io.EOF
			}
			return n, &trailingDataError{Members: g.members, Err: err}
		}
		g.zr.Multistream(false)
		if n > 0 {
			return n, nil
		}
	}
}

func (g *gzipMembers) Close() error { return g.zr.Close() }

// trailingDataError reports bytes after the last complete gzip member
// that do not start another member: data appended to a compressed file, or
// a member whose header is cut.
type trailingDataError struct {
	Members int   // complete members before the bytes
	Err     error // gzip's error on them (gzip.ErrHeader, io.ErrUnexpectedEOF)
}

func (e *trailingDataError) Error() string {
	what := "are not a gzip member (data appended to the compressed file?)"
	if errors.Is(e.Err, io.ErrUnexpectedEOF) {
		what = "are too few for a gzip member header (appended data, or a member cut at its start)"
	}
	return fmt.Sprintf("the bytes after gzip member %d %s: %v", e.Members, what, e.Err)
}

func (e *trailingDataError) Unwrap() error { return e.Err }
