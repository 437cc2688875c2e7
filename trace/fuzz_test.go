package trace

import (
	"bytes"
	"errors"
	"io"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readAllFuzz reads data with opt and checks the invariants every parser
// keeps: no panic, errors are *ParseError naming the file and a plausible
// line, lenient mode accounts for every line it drops.
func readAllFuzz(t *testing.T, data []byte, opt ReaderConfig) []Record {
	opt.Name = "fuzz"
	r, err := NewReader(bytes.NewReader(data), opt)
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) && opt.Format != FormatCSV {
			t.Fatalf("NewReader: error %v (%T) is not a *ParseError", err, err)
		}
		return nil
	}
	lines := bytes.Count(data, []byte{'\n'}) + 1
	var recs []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Next: error %v (%T) is not a *ParseError", err, err)
			}
			if pe.File != "fuzz" || (r.Compression() == "" && pe.Line > lines) {
				t.Fatalf("bad error position: %v (%d lines)", err, lines)
			}
			if opt.Lenient && pe.Err == nil && pe.Line > 0 {
				t.Fatalf("lenient reader failed on a line error: %v", err)
			}
			return recs
		}
		recs = append(recs, rec)
	}
	if !opt.Lenient && r.Skipped() != 0 {
		t.Fatal("strict reader skipped lines")
	}
	if r.Skipped() < len(r.SkippedErrors()) || len(r.SkippedErrors()) > MaxSkippedErrors {
		t.Fatal("skipped count and errors disagree")
	}
	return recs
}

func FuzzAuto(f *testing.F) {
	f.Add([]byte("4 101 9301432084211090 47816110312853897 14\n9 70 8410851650497718 47816110312872196 15"))
	f.Add([]byte("numseq,timestamp_start_send,timestamp_end_send\n0,2439202316247486,2439202316394754\n"))
	f.Add([]byte("#fdkit-trace version=1 interval=100ms unit=ns\n# c\nsender seq sent arrival\np 0 - 5\n"))
	f.Add(gz(f, "2 5 100 200 3\n"))
	// xz streams, one with bytes after it (xzTail, notStreamAfterFooter).
	f.Add(xzOf(f, "2 5 100 200 3\n"))
	f.Add(append(xzOf(f, "2 5 100 200 3\n"), "0000 junk after\n"...))
	f.Add([]byte("\x00\x01binary"))
	f.Fuzz(func(t *testing.T, data []byte) {
		readAllFuzz(t, data, ReaderConfig{})
		readAllFuzz(t, data, ReaderConfig{Lenient: true})
	})
}

// FuzzLIP6 checks the lenient reader against an independent parse with
// strings.FieldsFunc and strconv: the same lines are accepted, with the same
// values, and every other non-blank line is counted as skipped.
func FuzzLIP6(f *testing.F) {
	f.Add("4 101 9301432084211090 47816110312853897 14\r\n9 70 8410851650497718 47816110312872196 15")
	f.Add("4 1x1 1 2 3\n")
	f.Add("4 18446744073709551615 -9223372036854775808 +9223372036854775807 0\n")
	f.Add("4 18446744073709551616 1 2 3\n\n \t\n")
	f.Add("7 0 1 2 3\n+7 1 2 3 4\n007 2 3 4 5\n+ 3 4 5 6\n-7 4 5 6 7\n7 5 6 7 8\n")
	f.Fuzz(func(t *testing.T, s string) {
		recs := readAllFuzz(t, []byte(s), ReaderConfig{Format: FormatLIP6, Lenient: true})
		r, err := NewReader(strings.NewReader(s), ReaderConfig{Format: FormatLIP6, Lenient: true})
		if err != nil {
			return // binary input, checked by readAllFuzz
		}
		if _, err := r.ReadAll(); err != nil {
			t.Fatal(err)
		}
		var want []Record
		bad := 0
		spelled := map[string]string{} // a numeric id's first spelling, by its number
		lines := strings.Split(s, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		cut := false
		if n := len(lines); n > 0 && len(lines[n-1])+1 >= bufSize {
			return // over-long lines are split by the buffer
		} else if n > 0 && !strings.HasSuffix(s, "\n") && strings.Trim(strings.TrimSuffix(lines[n-1], "\r"), " \t") != "" {
			// A last line without a line end is left out as cut short.
			lines, cut = lines[:n-1], true
		}
		for _, line := range lines {
			if len(line)+1 >= bufSize {
				return // over-long lines are split by the buffer
			}
			line = strings.TrimSuffix(line, "\r")
			fs := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
			if len(fs) == 0 {
				continue
			}
			var err1, err2, err3, err4 error
			var seq uint64
			var sent, recv int64
			if len(fs) == 5 {
				seq, err1 = strconv.ParseUint(fs[1], 10, 64)
				sent, err2 = strconv.ParseInt(fs[2], 10, 64)
				recv, err3 = strconv.ParseInt(fs[3], 10, 64)
				_, err4 = strconv.ParseUint(fs[4], 10, 64)
			}
			if len(fs) != 5 || err1 != nil || err2 != nil || err3 != nil || err4 != nil {
				bad++
				continue
			}
			// A numeric id written otherwise than first ("07", "+7"
			// after "7") is refused: skipped.
			if d := strings.TrimPrefix(fs[0], "+"); d != "" && strings.Trim(d, "0123456789") == "" {
				d = strings.TrimLeft(d, "0")
				if first, ok := spelled[d]; ok && first != fs[0] {
					bad++
					continue
				} else if !ok {
					spelled[d] = fs[0]
				}
			}
			want = append(want, lip6(fs[0], seq, sent, recv))
		}
		if cut != (r.Truncated() != nil) {
			t.Fatalf("last line cut: %v; Truncated: %v", cut, r.Truncated())
		}
		if len(want) != len(recs) || bad != r.Skipped() {
			t.Fatalf("got %d records, %d skipped; independent parse: %d, %d", len(recs), r.Skipped(), len(want), bad)
		}
		for i := range want {
			if want[i] != recs[i] {
				t.Fatalf("record %d: got %+v, want %+v", i, recs[i], want[i])
			}
		}
	})
}

func FuzzEmission(f *testing.F) {
	f.Add("numseq,timestamp_start_send,timestamp_end_send\n0,2439202316247486,2439202316394754\n1,2,3")
	f.Add("0 1 2\n1, 2 ,3\n")
	f.Add("0,1\n")
	f.Fuzz(func(t *testing.T, s string) {
		readAllFuzz(t, []byte(s), ReaderConfig{Format: FormatLIP6Emission, Lenient: true})
		readAllFuzz(t, []byte(s), ReaderConfig{Format: FormatLIP6Emission})
	})
}

func FuzzCSV(f *testing.F) {
	f.Add("node,hb,t_arrive,t_sent\r\nA,1,1.5,1.25\nB,2,2,\"1.999999999\"\n", byte(3))
	f.Add("x\tt\n1\t2.5\n", byte(1))
	f.Add("node;t_sent\n\"a;b\";3\n", byte(0))
	f.Fuzz(func(t *testing.T, s string, unit byte) {
		u := []time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond, time.Second}[unit%4]
		cols := Columns{Sender: "node", Seq: "hb", Sent: "t_sent", Arrival: "t_arrive", Unit: u}
		readAllFuzz(t, []byte(s), ReaderConfig{Format: FormatCSV, Columns: cols, Lenient: true})
		readAllFuzz(t, []byte(s), ReaderConfig{Columns: Columns{Arrival: "t", Unit: u}})
	})
}

// FuzzFDKit checks that whatever the reader accepts, the writer writes back
// to a file the reader reads identically.
func FuzzFDKit(f *testing.F) {
	f.Add("#fdkit-trace version=1 interval=100ms unit=ns preset=x\n# c\nsender seq sent arrival\np 0 - 5\n- - 1 -\n")
	f.Add("#fdkit-trace version=1 interval=1s unit=s\nsender seq sent arrival\np 1 9223372036 -9\n")
	f.Add("#fdkit-trace version=1 interval=0s unit=us\nsender seq sent arrival\n")
	// Rotated files concatenated: a repeated header among the records.
	f.Add("#fdkit-trace version=1 interval=100ms unit=ns a=1\nsender seq sent arrival\np 0 1 2\n#fdkit-trace version=1 interval=100ms unit=ns a=2\n# c\nsender seq sent arrival\np 1 3 4\n")
	f.Fuzz(func(t *testing.T, s string) {
		recs := readAllFuzz(t, []byte(s), ReaderConfig{Format: FormatFDKit})
		r, err := NewReader(strings.NewReader(s), ReaderConfig{Format: FormatFDKit})
		if err != nil {
			return
		}
		all, err := r.ReadAll()
		if err != nil {
			return
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, r.Header(), NoCompression)
		if err != nil {
			t.Fatalf("header read but not writable: %v", err)
		}
		for _, rec := range all {
			if err := w.Write(rec); err != nil {
				t.Fatalf("record read but not writable: %v", err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r2, err := NewReader(&buf, ReaderConfig{})
		if err != nil {
			t.Fatalf("rewritten file unreadable: %v\n%s", err, buf.String())
		}
		again, err := r2.ReadAll()
		if err != nil {
			t.Fatalf("rewritten file unreadable: %v", err)
		}
		if len(again) != len(recs) {
			t.Fatalf("round trip changed the record count %d -> %d", len(recs), len(again))
		}
		for i := range again {
			if again[i] != recs[i] {
				t.Fatalf("record %d changed: %+v -> %+v", i, recs[i], again[i])
			}
		}
	})
}

// FuzzDecimalTime compares parseDecimalTime with exact rational arithmetic.
func FuzzDecimalTime(f *testing.F) {
	f.Add("1.5", byte(3))
	f.Add("-0.0000000015", byte(3))
	f.Add("9223372036.854775807", byte(3))
	f.Add("2500.4999", byte(1))
	f.Fuzz(func(t *testing.T, s string, unit byte) {
		u := []time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond, time.Second}[unit%4]
		got, ok := parseDecimalTime([]byte(s), u)
		valid := len(s) > 0 && strings.Trim(s, "+-.0123456789") == "" && strings.Count(s, ".") <= 1 &&
			strings.LastIndexAny(s, "+-") <= 0 && strings.ContainsAny(s, "0123456789")
		if !valid {
			if ok {
				t.Fatalf("%q accepted", s)
			}
			return
		}
		txt := strings.TrimPrefix(s, "+")
		if strings.HasSuffix(txt, ".") {
			txt += "0"
		}
		if strings.HasPrefix(txt, ".") || strings.HasPrefix(txt, "-.") {
			txt = strings.Replace(txt, ".", "0.", 1)
		}
		rat, okr := new(big.Rat).SetString(txt)
		if !okr {
			t.Fatalf("big.Rat rejects %q", txt)
		}
		rat.Mul(rat, new(big.Rat).SetInt64(int64(u)))
		// round half away from zero
		num, den := new(big.Int).Abs(rat.Num()), rat.Denom()
		q, m := new(big.Int).QuoRem(num, den, new(big.Int))
		if new(big.Int).Mul(m, big.NewInt(2)).Cmp(den) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		if rat.Sign() < 0 {
			q.Neg(q)
		}
		// Values that round into range are accepted only if their integer
		// part times the unit does not overflow first; be as strict as that.
		if !q.IsInt64() {
			if ok {
				t.Fatalf("%q: accepted %d, want overflow", s, got)
			}
			return
		}
		if !ok {
			if q.Int64() == -1<<63 || q.Int64() > (1<<63-1)-int64(u) {
				return // at the very edge of the range
			}
			t.Fatalf("%q rejected, want %v", s, q)
		}
		if got != time.Duration(q.Int64()) {
			t.Fatalf("%q %v: got %d, want %v", s, u, got, q)
		}
	})
}

// FuzzFDKitLine checks the fast path of the fdkit record parser against the
// careful one: same record, same error.
func FuzzFDKitLine(f *testing.F) {
	f.Add("p 0 181272 33186946")
	f.Add("- - 1 -")
	f.Add("p 18446744073709551615 -9223372036854775808 9223372036854775807")
	f.Add("# x 1 2")
	f.Add("p 1 +2 -3 \t")
	f.Fuzz(func(t *testing.T, line string) {
		r := &Reader{name: "x", unit: 1, senders: map[string]string{}}
		a, errA := r.parseFDKit([]byte(line))
		b, errB := r.parseFDKitSlow([]byte(line))
		if a != b || (errA == nil) != (errB == nil) || (errA != nil && errA.Error() != errB.Error()) {
			t.Fatalf("%q: fast %+v, %v; careful %+v, %v", line, a, errA, b, errB)
		}
	})
}
