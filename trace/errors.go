package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"strings"
)

// ParseError describes bad input: the file (the name given in ReaderConfig, or
// "<input>"), the 1-based line, the field, what was expected and what was
// found. Line is 0 when the problem is not tied to a line (for example a
// corrupt compressed stream before the first line). Err, when set, is the
// underlying error (for example io.ErrUnexpectedEOF for a truncated gzip
// stream, or encoding/csv's ErrQuote for an unbalanced quote) and is
// returned by Unwrap.
type ParseError struct {
	File  string
	Line  int
	Field string
	Want  string
	Got   string
	Err   error
}

// maxGot bounds how much offending input an error message quotes.
const maxGot = 40

// Error formats the error as "file:line: field F: want W, got \"G\"".
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "field %s: ", e.Field)
	}
	fmt.Fprintf(&b, "want %s", e.Want)
	if e.Got != "" || e.Err == nil {
		fmt.Fprintf(&b, ", got %q", e.Got)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// ofLine reports whether e is about the text of a line (a field, a
// quote), which a lenient Reader skips, rather than about the stream (a
// read error, a bound): the first have no underlying error but
// encoding/csv's quoting errors.
func (e *ParseError) ofLine() bool {
	return e.Err == nil || errors.Is(e.Err, csv.ErrQuote) || errors.Is(e.Err, csv.ErrBareQuote)
}

// Unwrap returns the underlying error, if any.
func (e *ParseError) Unwrap() error { return e.Err }

// quoteGot returns at most maxGot bytes of b as a string for an error.
func quoteGot(b []byte) string {
	if len(b) > maxGot {
		return string(b[:maxGot]) + "..."
	}
	return string(b)
}

// SkippedLinesError reports the lines a lenient ReadFile skipped: how many,
// the errors of the first MaxSkippedErrors of them, and where the input
// ended when it was cut short (Reader.Truncated; nil otherwise).
type SkippedLinesError struct {
	File      string
	Count     int
	Errors    []*ParseError
	Truncated *ParseError
}

// Error gives the count, the first skipped line's error and the truncation.
func (e *SkippedLinesError) Error() string {
	msg := fmt.Sprintf("%s: skipped %d malformed line(s)", e.File, e.Count)
	if len(e.Errors) > 0 {
		msg += "; first: " + e.Errors[0].Error()
	}
	if e.Truncated != nil {
		msg += "; input cut short: " + e.Truncated.Error()
	}
	return msg
}
