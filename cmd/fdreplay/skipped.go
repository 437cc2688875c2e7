package main

import (
	"fmt"
	"io"

	"github.com/fdkit/fdkit/trace"
)

// maxListedSkips is how many of the lines --lenient skipped are listed, each
// with file:line and the reason; the rest are only counted.
const maxListedSkips = 10

// reportSkipped tells which malformed lines a lenient read of file skipped:
// the count, then the first maxListedSkips with their reasons (errs holds the
// first ones the reader kept, see trace.Reader.SkippedErrors).
func reportSkipped(w io.Writer, file string, count int, errs []*trace.ParseError) {
	if count == 0 {
		return
	}
	fmt.Fprintf(w, "fdreplay: %s: skipped %d malformed line(s)", file, count)
	n := min(len(errs), maxListedSkips)
	switch {
	case n == 0:
		fmt.Fprintln(w)
		return
	case n < count:
		fmt.Fprintf(w, "; the first %d:\n", n)
	default:
		fmt.Fprintln(w, ":")
	}
	for _, e := range errs[:n] {
		fmt.Fprintf(w, "  %v\n", e)
	}
}
