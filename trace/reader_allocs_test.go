package trace

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestNextAllocatesNothingPerRecord reads an fdkit trace, strict and
// lenient, and counts the heap allocations of Next once the reader's
// buffers and sender names are in place: none per record. (Next's
// errors.As target was declared in its loop, so every record read cost one
// allocation: 100 a run here.)
func TestNextAllocatesNothingPerRecord(t *testing.T) {
	var b strings.Builder
	b.WriteString("#fdkit-trace version=1 interval=10ms unit=ns\nsender seq sent arrival\n")
	const n = 20000
	for i := range n {
		fmt.Fprintf(&b, "p%d %d %d %d\n", i%3, i, int64(i)*10_000_000, int64(i)*10_000_000+1_500_000)
	}
	text := b.String()
	for _, lenient := range []bool{false, true} {
		t.Run(fmt.Sprintf("lenient=%v", lenient), func(t *testing.T) {
			r, err := NewReader(strings.NewReader(text), ReaderConfig{Lenient: lenient})
			if err != nil {
				t.Fatal(err)
			}
			read := 0
			next := func(k int) {
				for range k {
					rec, err := r.Next()
					if err != nil {
						t.Fatalf("record %d: %v", read, err)
					}
					if rec.Seq != uint64(read) {
						t.Fatalf("record %d has seq %d", read, rec.Seq)
					}
					read++
				}
			}
			next(100) // every sender seen, the buffers filled
			const runs, per = 50, 100
			if a := testing.AllocsPerRun(runs, func() { next(per) }); a != 0 {
				t.Errorf("%g allocations per %d records read, want 0", a, per)
			}
			for {
				if _, err := r.Next(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				read++
			}
			if read != n {
				t.Errorf("read %d records, want %d", read, n)
			}
		})
	}
}
