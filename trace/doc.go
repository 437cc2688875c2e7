// Package trace reads, writes, summarises and synthesises heartbeat traces.
//
// A trace is a sequence of Records, one per heartbeat: who sent it, its
// sequence number, when it was sent (on the sender's clock) and when it
// arrived (on the monitor's clock). Times are time.Duration offsets on each
// clock, kept as exact int64 nanoseconds: raw LIP6 timestamps (about 4.8e16
// ns) exceed 2^53 and are never converted through float64 (ALGORITHMS.md §0).
//
// # Formats
//
// The Reader streams records one at a time with bounded memory and detects
// the format from the content (never from the file name), after
// transparently removing gzip or xz compression recognised by magic bytes:
//
//   - FormatLIP6: the LIP6 PlanetLab reception logs,
//     "sender seq t_send_ns t_recv_ns hops", space separated, no header.
//   - FormatLIP6Emission: the LIP6 emission logs,
//     "numseq,timestamp_start_send,timestamp_end_send" with that header.
//   - FormatCSV: any CSV/TSV file with a header whose columns and time unit
//     the caller names in Columns.
//   - FormatFDKit: fdkit's own format, written by Writer (see Writer for the
//     specification).
//
// Bad input yields a *ParseError naming the file, line, field, what was
// expected and what was found. In lenient mode bad lines are skipped but
// counted and kept for reporting (Reader.Skipped, Reader.SkippedErrors).
//
// # Statistics and generator
//
// Stats summarises one sender's stream in one pass (Accumulator, Summarize).
// Generate makes synthetic traces, deterministic for a given random source,
// from a GenConfig or a named preset (Presets, Preset).
package trace
