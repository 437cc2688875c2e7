package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkReadCSV is the parse speed of a CSV trace of 200,000 records
// (sender, seq, sent, arrival) from a file in the page cache.
//
//	go test -run '^$' -bench ReadCSV -benchmem ./trace/
func BenchmarkReadCSV(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("sender,seq,sent,arrival\n")
	for i := range 200000 {
		buf.WriteString("p," + strconv.Itoa(i+1) + "," + strconv.Itoa(i*10000000) + "," + strconv.Itoa(i*10000000+1234567) + "\n")
	}
	path := filepath.Join(b.TempDir(), "t.csv")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	cfg := ReaderConfig{Format: FormatCSV, Columns: Columns{Sender: "sender", Seq: "seq", Sent: "sent", Arrival: "arrival"}}
	for b.Loop() {
		if n := readCount(b, path, cfg); n != 200000 {
			b.Fatal(n)
		}
	}
}
