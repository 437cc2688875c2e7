package main

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/trace"
)

func TestList(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"--list"}, &out, &out))
	for _, n := range trace.Presets() {
		assert.Contains(t, out.String(), n)
	}
}

func TestPresetToFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.fdkit.xz")
	require.NoError(t, run([]string{"--preset", "jitter", "--seed", "3", "--duration", "30s", "-o", path}, nil, nil))
	r, err := trace.Open(path, trace.ReaderConfig{})
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, "xz", r.Compression())
	h := r.Header()
	assert.Equal(t, 100*time.Millisecond, h.Interval)
	assert.Equal(t, map[string]string{"preset": "jitter", "seed": "3", "generator": "fdgen"}, h.Meta)
	assert.Equal(t, []string{"fdgen --preset jitter --seed 3 --duration 30s -o " + path}, h.Comments)
	got, err := r.ReadAll()
	require.NoError(t, err)

	p, err := trace.LookupPreset("jitter")
	require.NoError(t, err)
	p.Config.Duration = 30 * time.Second
	want, err := trace.Generate(p.Config, trace.NewRand(3))
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func TestFlagsOverride(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"--interval", "1s", "--duration", "10s", "--delay", "constant", "--delay-mean", "5ms",
		"--pause", "3s:2500ms", "--crash", "8s", "--sender", "n7"}, &out, nil))
	r, err := trace.NewReader(&out, trace.ReaderConfig{})
	require.NoError(t, err)
	recs, err := r.ReadAll()
	require.NoError(t, err)
	var sent []time.Duration
	for _, rec := range recs {
		assert.Equal(t, "n7", rec.Sender)
		assert.Equal(t, 5*time.Millisecond, rec.Arrival-rec.Sent)
		sent = append(sent, rec.Sent)
	}
	// ticks 0 1 2 s, pause 3..5.5 s (resume send at 5.5 s), 6 7 s, crash at 8 s
	s := time.Second
	assert.Equal(t, []time.Duration{0, s, 2 * s, 5500 * time.Millisecond, 6 * s, 7 * s}, sent)
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--preset", "nope"},
		{"--pause", "3s"},
		{"--delay", "cauchy"},
		{"--compress", "zip"},
		{"--loss", "0.5", "--loss-burst", "0.5"},
		{"--interval", "-1s"},
		{"extra"},
	} {
		var errOut bytes.Buffer
		err := run(args, &bytes.Buffer{}, &errOut)
		assert.Error(t, err, strings.Join(args, " "))
	}
}

func TestSenders(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"--preset", "jitter", "--duration", "20s", "--senders", "3", "--seed", "5"}, &out, nil))
	r, err := trace.NewReader(&out, trace.ReaderConfig{})
	require.NoError(t, err)
	streams, err := r.Streams()
	require.NoError(t, err)
	require.Len(t, streams, 3)

	p, err := trace.LookupPreset("jitter")
	require.NoError(t, err)
	rng := trace.NewRand(5)
	for i, s := range streams {
		cfg := p.Config
		cfg.Duration = 20 * time.Second
		cfg.Sender = "p" + strconv.Itoa(i)
		want, err := trace.Generate(cfg, rng)
		require.NoError(t, err)
		assert.Equal(t, cfg.Sender, s.Sender)
		assert.Equal(t, want, s.Records)
	}
	assert.Error(t, run([]string{"--senders", "0"}, &bytes.Buffer{}, &bytes.Buffer{}))
}

// heapWatch is an output that samples the live Go heap (after a
// collection, so that other tests' garbage does not count) every MiB
// written.
type heapWatch struct {
	n, most uint64
}

func (h *heapWatch) Write(p []byte) (int, error) {
	if h.n/(1<<20) != (h.n+uint64(len(p)))/(1<<20) {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		h.most = max(h.most, ms.HeapAlloc)
	}
	h.n += uint64(len(p))
	return len(p), nil
}

// fdgen writes records as they are generated: the heap does not grow with
// the trace: a few MiB of buffers suffice, where holding 500,000 records
// (and merging them) before writing the first would take about 110 bytes
// each (docs/experiments.md, “fdgen memory”).
func TestStreamsWithBoundedMemory(t *testing.T) {
	var w heapWatch
	require.NoError(t, run([]string{"--duration", "50000s", "--interval", "100ms", "--delay", "normal",
		"--delay-mean", "50ms", "--delay-sd", "20ms", "--compress", "none"}, &w, nil))
	require.Greater(t, w.n, uint64(10<<20), "a trace of 500,000 records")
	t.Logf("live heap at most %d bytes while writing %d bytes", w.most, w.n)
	assert.Less(t, w.most, uint64(16<<20), "live heap while writing: %d bytes", w.most)
}

// A generator stopped at its bound on heartbeats in flight names the flags
// that set that number.
func TestInFlightHint(t *testing.T) {
	g, err := trace.NewGenerator(trace.GenConfig{Interval: time.Millisecond, Duration: time.Second,
		Delay: trace.Delay{Dist: trace.DelayConstant, Base: time.Hour}}, trace.NewRand(1))
	require.NoError(t, err)
	g.SetMaxInFlight(10)
	var gerr error
	for ok := true; ok && gerr == nil; {
		_, ok, gerr = g.Next()
	}
	err = inFlightHint(gerr)
	require.ErrorIs(t, err, trace.ErrTooManyInFlight)
	assert.ErrorContains(t, err, "shorten --delay-base, --delay-mean or --delay-sd, lengthen --interval, or give fewer --senders")
	assert.NoError(t, inFlightHint(nil))
}
