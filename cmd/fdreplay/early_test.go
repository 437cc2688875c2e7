package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The sweep starts with the table's replay (earlySweep), but its progress
// is drawn only once the table is printed: a bar redrawn meanwhile would
// break into the table's lines on a terminal.
func TestProgressAfterTable(t *testing.T) {
	path := writeFile(t, "t.fdk", multiSenderTrace(1000))
	var stdout, stderr syncBuffer
	var mu sync.Mutex
	var seen []string // stdout as each report was drawn
	p := withStdin(strings.NewReader(""))
	p.progress = func(done, total int) {
		s := stdout.String()
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
	}
	code := run(p, []string{"--out", filepath.Join(t.TempDir(), "out"), path}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	final := stdout.String()
	end := strings.Index(final, "wrote ")
	require.Positive(t, end, final)
	tables := final[:end]
	require.NotEmpty(t, seen)
	for i, s := range seen {
		require.True(t, strings.HasPrefix(s, tables), "report %d of %d drawn before the tables were printed:\n%s", i+1, len(seen), s)
	}
}

// heldProgress draws nothing until released, then the last report held
// and every later one.
func TestHeldProgress(t *testing.T) {
	var drawn [][2]int
	h := &heldProgress{draw: func(done, total int) { drawn = append(drawn, [2]int{done, total}) }}
	h.report(1, 10)
	h.report(4, 10)
	require.Empty(t, drawn)
	h.release()
	h.report(7, 10)
	h.report(-1, 10)
	require.Equal(t, [][2]int{{4, 10}, {7, 10}, {-1, 10}}, drawn)

	drawn = nil
	h = &heldProgress{draw: func(done, total int) { drawn = append(drawn, [2]int{done, total}) }}
	h.release()
	require.Empty(t, drawn, "nothing held, nothing drawn")
}
