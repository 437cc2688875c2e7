package trace

import (
	"cmp"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/require"
)

func readSpool(t *testing.T, s *Spool) []detector.Heartbeat {
	t.Helper()
	seq, done := s.Pass()
	var out []detector.Heartbeat
	for hb := range seq {
		out = append(out, hb)
	}
	require.NoError(t, done())
	return out
}

// A spool gives back every heartbeat, every field, in stable arrival
// order, to concurrent readers; extreme values survive the varint
// differences.
func TestSpoolRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var in []detector.Heartbeat
	for i := range 50000 {
		a := time.Duration(i)*10*time.Millisecond + time.Duration(rng.IntN(int(5*time.Second)))
		hb := detector.Heartbeat{Arrival: a}
		if rng.IntN(10) > 0 {
			hb.Seq, hb.HasSeq = uint64(i)*uint64(rng.IntN(3)), true
		}
		if rng.IntN(10) > 0 {
			hb.Sent, hb.HasSent = a-time.Duration(rng.Int64N(int64(time.Hour)))+time.Duration(rng.Int64N(int64(time.Minute))), true
		}
		in = append(in, hb)
	}
	in = append(in,
		detector.Heartbeat{Arrival: 1 << 62, Seq: math.MaxUint64, HasSeq: true, Sent: math.MinInt64, HasSent: true},
		detector.Heartbeat{Arrival: 1 << 62, Seq: 0, HasSeq: true, Sent: math.MaxInt64, HasSent: true})
	dir := t.TempDir()
	s, err := NewSpool(dir)
	require.NoError(t, err)
	defer s.Close()
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "the spool's file is unlinked at once, so no signal or crash can leave it behind")
	for _, hb := range in {
		require.NoError(t, s.Add(hb))
	}
	require.NoError(t, s.Finish())
	want := slices.Clone(in)
	slices.SortStableFunc(want, func(a, b detector.Heartbeat) int { return cmp.Compare(a.Arrival, b.Arrival) })
	require.Equal(t, len(want), s.Len())
	first, last := s.Bounds()
	require.Equal(t, want[0].Arrival, first)
	require.Equal(t, want[len(want)-1].Arrival, last)
	var wg sync.WaitGroup
	got := make([][]detector.Heartbeat, 3)
	for i := range got {
		wg.Go(func() { got[i] = readSpool(t, s) })
	}
	wg.Wait()
	for i := range got {
		require.Equal(t, want, got[i])
	}
	require.Less(t, s.Size(), int64(30*len(in)))
}

// A heartbeat further out of order than SpoolReorder is an error naming
// both arrivals, not a silently misplaced record.
func TestSpoolOrderBound(t *testing.T) {
	s, err := NewSpool("")
	require.NoError(t, err)
	defer s.Close()
	for i := range SpoolReorder + 1 {
		require.NoError(t, s.Add(detector.Heartbeat{Arrival: time.Duration(i+10) * time.Second}))
	}
	err = s.Add(detector.Heartbeat{Arrival: time.Second})
	require.True(t, errors.Is(err, ErrSpoolOrder), "%v", err)
	require.Contains(t, err.Error(), "1s")
	require.NoError(t, s.Finish())
	require.Error(t, s.Add(detector.Heartbeat{}))
	require.Len(t, readSpool(t, s), SpoolReorder+1)
}

// A finished spool keeps neither its write buffer (16 KiB) nor its
// reordering heap: with 10^4 streams of a many-sender trace the buffers
// alone held 142 MB of the 806 MB heap of a table-only fdreplay run.
func TestSpoolFinishReleasesBuffers(t *testing.T) {
	s, err := NewSpool(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Add(detector.Heartbeat{Arrival: time.Second}))
	require.NoError(t, s.Finish())
	require.Nil(t, s.w)
	require.Nil(t, s.pend.ring)
	require.Nil(t, s.pend.late)
	require.Equal(t, []detector.Heartbeat{{Arrival: time.Second}}, readSpool(t, s))
	require.Error(t, s.Add(detector.Heartbeat{Arrival: 2 * time.Second}))
}

// A spool file cut short or overwritten under the reader is an error of
// the pass, never a panic or a silently shorter stream: the block decoder
// checks every varint against the bytes it holds.
func TestSpoolDamagedFile(t *testing.T) {
	build := func() *Spool {
		s, err := NewSpool(t.TempDir())
		require.NoError(t, err)
		for i := range 20000 {
			require.NoError(t, s.Add(detector.Heartbeat{Arrival: time.Duration(i) * time.Second, Seq: uint64(i), HasSeq: true, Sent: time.Duration(i)*time.Second - time.Millisecond, HasSent: true}))
		}
		require.NoError(t, s.Finish())
		return s
	}
	pass := func(s *Spool) (int, error) {
		seq, done := s.Pass()
		n := 0
		for range seq {
			n++
		}
		return n, done()
	}
	s := build()
	defer s.Close()
	require.NoError(t, s.f.Truncate(s.Size()-3))
	n, err := pass(s)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.Less(t, n, s.Len())

	s2 := build()
	defer s2.Close()
	junk := make([]byte, 64)
	for i := range junk {
		junk[i] = 0xff
	}
	_, err = s2.f.WriteAt(junk, spoolBlock-10) // across a block boundary
	require.NoError(t, err)
	n, err = pass(s2)
	require.ErrorContains(t, err, "overflows 64 bits")
	require.Less(t, n, s2.Len())
}

// BenchmarkSpoolPass reads back a spool of 10^6 regular heartbeats.
//
//	go test -run '^$' -bench SpoolPass -benchmem ./trace/
func BenchmarkSpoolPass(b *testing.B) {
	s, err := NewSpool(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := range 1_000_000 {
		a := time.Duration(i)*10*time.Millisecond + time.Duration(i*7919%3000)*time.Microsecond
		if err := s.Add(detector.Heartbeat{Arrival: a, Seq: uint64(i), HasSeq: true, Sent: time.Duration(i) * 10 * time.Millisecond, HasSent: true}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Finish(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		seq, done := s.Pass()
		for range seq {
		}
		if err := done(); err != nil {
			b.Fatal(err)
		}
	}
}
