package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchSenders·benchPerSender heartbeats (999,999) generated like the LIP6
// node-1 excerpt: 9 senders at Δ 100 ms, delay 5 ms ± 3 ms, 0.3 % loss,
// 16- and 17-digit nanosecond timestamps, merged in arrival order.
const (
	benchSenders   = 9
	benchPerSender = 111111
)

var benchData = sync.OnceValue(func() []Record {
	var all []Record
	for s := range benchSenders {
		recs, err := Generate(GenConfig{
			Sender:        strconv.Itoa(s),
			Interval:      100 * time.Millisecond,
			Duration:      benchPerSender * 100 * time.Millisecond,
			Jitter:        200 * time.Microsecond,
			Delay:         Delay{Dist: DelayNormal, Mean: 5 * time.Millisecond, SD: 3 * time.Millisecond},
			Loss:          Loss{Model: LossBernoulli, P: 0.003},
			SenderStart:   9301432084211090 + time.Duration(s)*123456789,
			ReceiverStart: 47816110312853897,
		}, NewRand(uint64(s)))
		if err != nil {
			panic(err)
		}
		all = append(all, recs...)
	}
	slices.SortStableFunc(all, func(a, b Record) int { return cmp.Compare(a.Arrival, b.Arrival) })
	return all
})

// benchFile writes the generated records once per format to a file.
var benchFiles sync.Map // string -> path

func benchFile(b *testing.B, kind string) string {
	if p, ok := benchFiles.Load(kind); ok {
		return p.(string)
	}
	dir, err := os.MkdirTemp("", "fdkit-trace-bench")
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, kind)
	var buf bytes.Buffer
	recs := benchData()
	switch kind {
	case "lip6", "lip6.gz":
		var line []byte
		for i, r := range recs {
			line = line[:0]
			line = append(line, r.Sender...)
			line = append(line, ' ')
			line = strconv.AppendUint(line, r.Seq, 10)
			line = append(line, ' ')
			line = strconv.AppendInt(line, int64(r.Sent), 10)
			line = append(line, ' ')
			line = strconv.AppendInt(line, int64(r.Arrival), 10)
			line = append(line, ' ')
			line = strconv.AppendInt(line, int64(8+i%9), 10)
			line = append(line, '\n')
			buf.Write(line)
		}
		if kind == "lip6.gz" {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(buf.Bytes())
			zw.Close()
			buf = z
		}
	case "fdkit":
		w, err := NewWriter(&buf, Header{Interval: 100 * time.Millisecond}, NoCompression)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range recs {
			w.Write(r)
		}
		w.Close()
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	benchFiles.Store(kind, path)
	return path
}

// readCount reads the trace at path with cfg to its end and returns the
// number of records.
func readCount(b *testing.B, path string, cfg ReaderConfig) int {
	b.Helper()
	r, err := Open(path, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

func benchRead(b *testing.B, kind string) {
	path := benchFile(b, kind)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n += readCount(b, path, ReaderConfig{})
	}
	if n != b.N*len(benchData()) {
		b.Fatalf("read %d records, want %d", n, b.N*len(benchData()))
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkReadLIP6 is the parse speed of the LIP6 format from a file (in
// the page cache): ~1 M records of 5 fields, 17-digit timestamps.
func BenchmarkReadLIP6(b *testing.B) { benchRead(b, "lip6") }

// BenchmarkReadLIP6Gzip is the same file gzip-compressed.
func BenchmarkReadLIP6Gzip(b *testing.B) { benchRead(b, "lip6.gz") }

// BenchmarkReadFDKit is the same records in fdkit format.
func BenchmarkReadFDKit(b *testing.B) { benchRead(b, "fdkit") }

// BenchmarkReadLIP6Naive is the baseline the hand-written parser is compared
// with in one run: bufio.Scanner, strings.Fields and strconv.
func BenchmarkReadLIP6Naive(b *testing.B) {
	path := benchFile(b, "lip6")
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			seq, err1 := strconv.ParseUint(fs[1], 10, 64)
			sent, err2 := strconv.ParseInt(fs[2], 10, 64)
			recv, err3 := strconv.ParseInt(fs[3], 10, 64)
			_, err4 := strconv.ParseUint(fs[4], 10, 64)
			if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
				b.Fatal("bad line")
			}
			_ = Record{Sender: fs[0], Seq: seq, HasSeq: true, Sent: time.Duration(sent), HasSent: true, Arrival: time.Duration(recv), HasArrival: true}
			n++
		}
		f.Close()
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkSummarizeReader is reading plus per-sender statistics.
func BenchmarkSummarizeReader(b *testing.B) {
	path := benchFile(b, "lip6")
	b.ReportAllocs()
	for b.Loop() {
		r, err := Open(path, ReaderConfig{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := SummarizeReader(r); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
	b.ReportMetric(float64(b.N*len(benchData()))/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkGenerate is the generator's speed for the jitter preset.
func BenchmarkGenerate(b *testing.B) {
	p, _ := LookupPreset("jitter")
	p.Config.Duration = time.Hour
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		recs, err := Generate(p.Config, NewRand(1))
		if err != nil {
			b.Fatal(err)
		}
		n += len(recs)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}
