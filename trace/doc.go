// Package trace reads, writes, summarises and synthesises heartbeat traces.
//
// A trace is a sequence of Records, one per heartbeat: who sent it, its
// sequence number, when it was sent (on the sender's clock) and when it arrived
// (on the monitor's clock). Times are time.Duration offsets on each clock, kept
// as exact int64 nanoseconds: raw LIP6 timestamps (about 4.8e16 ns) exceed 2^53
// and are never converted through float64 (docs/algorithms.md, “Conventions and
// the common trace”).
//
// # Formats
//
// The Reader streams records one at a time with bounded memory and detects
// the format from the content (never from the file name), after
// transparently removing gzip or xz compression recognised by magic bytes:
//
//   - FormatLIP6: the LIP6 PlanetLab reception logs,
//     "sender seq t_send_ns t_recv_ns hops", space separated, no header.
//     Sender ids, unsigned integers, are kept as written; one number
//     written two ways in a file ("7" and "007") is a ParseError naming
//     both lines, since it may be one sender or two.
//   - FormatLIP6Emission: the LIP6 emission logs,
//     "numseq,timestamp_start_send,timestamp_end_send" with that header.
//   - FormatCSV: any CSV/TSV file with a header whose columns and time unit
//     the caller names in Columns.
//   - FormatFDKit: fdkit's own format, written by Writer (see the
//     specification below).
//
// Detection reads the first non-blank line; when it fits no format, the
// Reader's *ParseError names that line, what each format wants and why the
// line is none of them, and wraps ErrUnknownFormat.
//
// # fdkit trace format, version 1
//
// A UTF-8 text file, optionally gzip- or xz-compressed, with "\n" line ends
// ("\r\n" accepted when reading; so are a leading UTF-8 byte-order mark,
// which the Reader drops in every format, and blank lines before the header):
//
//	#fdkit-trace version=1 interval=100ms unit=ns [key=value ...]
//	# free comment lines (zero or more)
//	sender seq sent arrival
//	p 0 1000000 81234567
//	p 1 101000000 -
//
// Line 1 starts with "#fdkit-trace" followed by space-separated key=value
// pairs: version (1), interval (the nominal heartbeat interval Δ, as a Go
// duration; 0s when unknown), unit (of the sent and arrival columns: ns, us,
// ms or s; the Writer always writes ns), and any other keys (Header.Meta),
// each key at most once: a key given twice is a *ParseError naming it and
// both values.
// Comment lines start with "#" and may only come before the column line,
// which is exactly "sender seq sent arrival". Among the records, a repeated
// header line with the same version, interval and unit, with its comment
// lines and column line, is skipped (rotated files of one recording
// concatenated); another header is a *ParseError. Each further line is one
// heartbeat with four space-separated fields: the sender id (no blanks; "-"
// for the empty id), the sequence number (unsigned decimal), the send instant
// on the sender's clock and the arrival instant on the monitor's clock (signed
// decimal integers in unit). "-" marks an absent sequence number or time.
//
// Bad input yields a *ParseError naming the file, line, field, what was
// expected and what was found. In lenient mode bad lines are skipped but
// counted and kept for reporting (Reader.Skipped, Reader.SkippedErrors).
//
// # Statistics and generator
//
// Stats summarises one sender's stream in one pass (Accumulator, Summarize).
// Generate makes synthetic traces, deterministic for a given random source,
// from a GenConfig or a named preset (Presets, LookupPreset). Split and
// Reader.Streams turn a multi-sender file into per-sender streams in arrival
// order.
package trace
