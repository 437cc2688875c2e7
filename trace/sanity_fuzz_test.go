package trace

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// FuzzSanity feeds any input through the Reader and the Checker: no panic;
// every record read comes out exactly once, with its own line; every record
// left out carries a finding that says where and why; epochs start at 1 and
// grow by one at each restart.
func FuzzSanity(f *testing.F) {
	f.Add([]byte("4 101 9301432084211090 47816110312853897 14\n4 102 9301432185116514 47816110404046891 14\n4 103 9301432285128056 47816110504012377 14\n4 104 9301432385128056 51416110504012377 14\n4 105 9301432485128056 47816110704012377 14\n4 106 9301432585128056 47816110804012377 1"), uint8(2), uint16(3))
	f.Add([]byte("4 0 0 5 1\n4 1 100 105 1\n4 2 200 205 1\n4 0 300 305 1\n4 1 400 405 1\n4 2 500 505 1\n4 3 600 605 1\n"), uint8(1), uint16(1))
	f.Add([]byte("#fdkit-trace version=1 interval=1s unit=ms\nsender seq sent arrival\np 0 0 1\np 1 1000 1001\np 2 -5 -3\np 3 3000 3001\n"), uint8(0), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, k uint8, span uint16) {
		r, err := NewReader(bytes.NewReader(data), ReaderConfig{Name: "fuzz", Lenient: true})
		if err != nil {
			return
		}
		var got []Checked
		epoch := map[string]int{}
		ch := NewChecker(CheckerConfig{File: "fuzz", Neighbours: int(k % 20), SeqSpan: uint64(span), Floor: time.Duration(span)}, func(c Checked) {
			got = append(got, c)
			e := epoch[c.Record.Sender]
			if f := c.Finding; c.Epoch < e && f != nil && f.Kind == FindingSeq && f.SeqKnown && f.Excluded {
				// A late heartbeat of an incarnation before, left out,
				// has that one's epoch, 0 when it cannot be told
				// (Checked.Epoch); the sender's stays.
				if c.Epoch < 0 || !bytes.Contains([]byte(f.Detail), []byte("late heartbeat")) {
					t.Fatalf("line %d: epoch %d after %d: %s", c.Line, c.Epoch, e, f.Detail)
				}
				return
			}
			if c.Epoch != e && c.Epoch != e+1 || c.Epoch < 1 {
				t.Fatalf("line %d: epoch %d after %d", c.Line, c.Epoch, e)
			}
			if c.Epoch == e+1 && e > 0 && (c.Finding == nil || c.Finding.Kind != FindingRestart) {
				// a restart record may also be an outlier: then its kind
				// is the outlier's but the detail names the restart
				if c.Finding == nil || !bytes.Contains([]byte(c.Finding.Detail), []byte("restarts")) {
					t.Fatalf("line %d: epoch %d without a restart finding", c.Line, c.Epoch)
				}
			}
			epoch[c.Record.Sender] = c.Epoch
		})
		var lines []int
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return
			}
			ch.Add(rec, r.Line(), r.Unterminated())
			lines = append(lines, r.Line())
		}
		ch.Flush()
		if len(got) != len(lines) {
			t.Fatalf("%d records read, %d verdicts", len(lines), len(got))
		}
		seen := map[int]int{}
		for _, l := range lines {
			seen[l]++
		}
		for _, c := range got {
			if seen[c.Line] == 0 {
				t.Fatalf("verdict for line %d, which was not read (or twice)", c.Line)
			}
			seen[c.Line]--
			if f := c.Finding; f != nil {
				if f.Line != c.Line || f.File != "fuzz" || f.Sender != c.Record.Sender || f.Detail == "" {
					t.Fatalf("finding %+v does not name its record (line %d)", f, c.Line)
				}
				if f.Excluded != (f.Kind != FindingRestart) {
					t.Fatalf("finding %+v: a %v finding must exclude its record iff it is not a restart", f, f.Kind)
				}
			}
		}
	})
}
