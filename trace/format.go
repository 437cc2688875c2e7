package trace

import (
	"fmt"
	"strings"
	"time"
)

// Format identifies a trace file format.
type Format int

// Trace formats. FormatAuto (the zero value) asks the Reader to detect the
// format from the content.
const (
	FormatAuto Format = iota
	// FormatLIP6 is the LIP6 PlanetLab reception log: one heartbeat per line,
	// "sender seq t_send_ns t_recv_ns hops", separated by spaces or tabs, no
	// header. t_send is on the sender's clock, t_recv on the receiver's. The
	// hops column is checked to be an unsigned integer and then dropped.
	FormatLIP6
	// FormatLIP6Emission is the LIP6 emission log (sentinterval files):
	// header "numseq,timestamp_start_send,timestamp_end_send", then one
	// heartbeat broadcast per line. Records get Seq = numseq and
	// Sent = timestamp_start_send, no arrival; timestamp_end_send is checked
	// to be an integer and then dropped. Commas, spaces or tabs separate.
	FormatLIP6Emission
	// FormatCSV is a CSV or TSV file with a header line whose columns and time
	// unit are named by ReaderConfig.Columns.
	FormatCSV
	// FormatFDKit is fdkit's own format (see Writer).
	FormatFDKit
)

var formatNames = [...]string{"auto", "lip6", "lip6-emission", "csv", "fdkit"}

// String returns the format's name as accepted by ParseFormat.
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat parses a format name: auto, lip6, lip6-emission, csv or fdkit.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if strings.EqualFold(s, n) {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("trace: unknown format %q (want one of %s)", s, strings.Join(formatNames[:], ", "))
}

// ParseUnit parses a time unit name: ns, us (or µs), ms or s.
func ParseUnit(s string) (time.Duration, error) {
	switch s {
	case "ns":
		return time.Nanosecond, nil
	case "us", "µs", "μs":
		return time.Microsecond, nil
	case "ms":
		return time.Millisecond, nil
	case "s":
		return time.Second, nil
	}
	return 0, fmt.Errorf("trace: unknown time unit %q (want ns, us, ms or s)", s)
}

// unitName returns the name of one of the four units ParseUnit knows.
func unitName(u time.Duration) string {
	switch u {
	case time.Nanosecond:
		return "ns"
	case time.Microsecond:
		return "us"
	case time.Millisecond:
		return "ms"
	case time.Second:
		return "s"
	}
	return u.String()
}

// Columns names the columns of a FormatCSV file, as spelled in its header
// (compared case-insensitively after trimming spaces). Sender, Seq and Sent
// may be empty when the file has no such column; at least one of Sent and
// Arrival must be named. Every row must have as many fields as the header
// (a trailing separator makes an empty field); a row with more or fewer is
// a *ParseError naming its line, like any malformed line.
type Columns struct {
	Sender  string
	Seq     string
	Sent    string
	Arrival string
	// Unit is the unit of the Sent and Arrival values: time.Nanosecond (the
	// default when zero), time.Microsecond, time.Millisecond or time.Second.
	// Values may carry a decimal fraction ("1.25"); it is rounded to the
	// nearest nanosecond, half away from zero. Exponents are not accepted.
	Unit time.Duration
	// Separator is the field separator; 0 detects it from the header line:
	// tab if it contains a tab, else ';' if it contains ';' and no ',', else
	// ','. Fields may be quoted as in RFC 4180.
	Separator rune
}

func (c Columns) isZero() bool {
	return c.Sender == "" && c.Seq == "" && c.Sent == "" && c.Arrival == ""
}

// ReaderConfig configures a Reader. The zero value reads any auto-detected format
// strictly.
type ReaderConfig struct {
	// Name is the file name used in error messages; "<input>" when empty
	// (Open sets it to the path).
	Name string
	// Format forces a format; FormatAuto (the default) detects it from the
	// content. A non-empty Columns with FormatAuto selects FormatCSV.
	Format Format
	// Columns describes a FormatCSV file.
	Columns Columns
	// Sender is the sender id given to records of formats without a sender
	// column (emission logs, CSV without a sender column). Default "".
	Sender string
	// Lenient skips malformed lines instead of failing on the first one. The
	// skipped lines are counted (Reader.Skipped) and their errors kept
	// (Reader.SkippedErrors, the first MaxSkippedErrors of them). A
	// truncated input, as a killed recorder leaves it, ends the records
	// instead of failing: a compressed stream cut short yields every
	// complete line before the cut, and a last line without a line end is
	// left out (its last field may be cut inside a number that still
	// parses); Reader.Truncated says where the input stopped. Other errors that are not about one line
	// (corrupt compression, binary data, bad header) stay fatal.
	Lenient bool
	// MaxDecompressed bounds the decompressed size of a gzip or xz input,
	// in bytes; 0 means no bound. Reading past it fails with an error
	// wrapping ErrDecompressionLimit.
	MaxDecompressed int64
	// MaxRatio bounds the decompressed size of a gzip or xz input relative
	// to the compressed bytes read so far, once more than RatioSlack bytes
	// were decompressed; 0 means no bound. A gzip bomb (members of one
	// repeated record concatenated) inflates about 1000-fold, while
	// recorded traces inflate 3- to 30-fold, so a bound of 200 stops a bomb
	// after RatioSlack bytes. Exceeding it fails with an error wrapping
	// ErrDecompressionLimit.
	MaxRatio float64
}

// MaxSkippedErrors is how many skipped-line errors a lenient Reader keeps;
// Reader.Skipped still counts them all.
const MaxSkippedErrors = 100
