package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkLoadInputs measures loadInputs (decoding, the sanity check and
// the streams) on an fdkit trace of 10 senders whose heartbeats
// interleave, 20,000 each, as fdgen writes them. Besides the wall time
// it reports the CPU time per op (user + system of the process: the load
// runs on three goroutines).
//
//	go test -run '^$' -bench LoadInputs -benchmem ./cmd/fdreplay
func BenchmarkLoadInputs(b *testing.B) { benchLoadInputs(b) }

// BenchmarkLoadInputsReport is BenchmarkLoadInputs with --out: newInput
// also takes each stream's report.Summary.
func BenchmarkLoadInputsReport(b *testing.B) {
	benchLoadInputs(b, "--out", filepath.Join(b.TempDir(), "out"))
}

// benchLoadInputs is BenchmarkLoadInputs with the flags args.
func benchLoadInputs(b *testing.B, args ...string) {
	const senders, per = 10, 20_000
	var t strings.Builder
	t.WriteString("#fdkit-trace version=1 interval=10ms unit=ns\nsender seq sent arrival\n")
	for k := range per {
		for s := range senders {
			sent := int64(k)*int64(10*time.Millisecond) + int64(s)*1000
			fmt.Fprintf(&t, "p%d %d %d %d\n", (s*7)%senders, k, sent, sent+int64(2*time.Millisecond)+int64((k*s)%997)*1000)
		}
	}
	path := filepath.Join(b.TempDir(), "t.fdk")
	if err := os.WriteFile(path, []byte(t.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	o, files, err := parseFlags(append(args, path), io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuUsed(b)
	for b.Loop() {
		ins, err := loadInputs(o, files, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		if len(ins) != senders {
			b.Fatalf("%d inputs, want %d", len(ins), senders)
		}
		closeInputs(ins)
	}
	b.ReportMetric(float64(cpuUsed(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuUsed is the process's user and system time so far.
func cpuUsed(b *testing.B) time.Duration {
	user, sys, ok := processCPU()
	if !ok {
		b.Fatal("no CPU time on this system")
	}
	return user + sys
}
