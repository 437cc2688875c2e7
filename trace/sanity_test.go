package trace

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace/tracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lip6Lines returns a clean LIP6 trace of n heartbeats of sender "4" every
// 100 ms, with a 3 s clock offset and a delay alternating 1 and 2 ms.
func lip6Lines(n int) []string {
	out := make([]string, n)
	for i := range n {
		sent := int64(i) * int64(100*time.Millisecond)
		arr := sent + int64(3*time.Second) + int64(time.Millisecond)*int64(1+i%2)
		out[i] = fmt.Sprintf("4 %d %d %d 14", i, sent, arr)
	}
	return out
}

// checkText reads text (auto-detected, or CSV with cols) and runs the
// Checker over it, returning every verdict and checking that each record
// comes out exactly once, per sender in file order.
func checkText(t *testing.T, text string, cols Columns) []Checked {
	t.Helper()
	r, err := NewReader(strings.NewReader(text), ReaderConfig{Name: "t", Columns: cols})
	require.NoError(t, err)
	var got []Checked
	ch := NewChecker(CheckerConfig{File: "t"}, func(c Checked) { got = append(got, c) })
	n := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		ch.Add(rec, r.Line(), r.Unterminated())
		n++
	}
	ch.Flush()
	require.Len(t, got, n)
	last := map[string]int{}
	for _, c := range got {
		require.Greater(t, c.Line, last[c.Record.Sender], "per-sender file order")
		last[c.Record.Sender] = c.Line
	}
	return got
}

func findings(cs []Checked) []Finding {
	var out []Finding
	for _, c := range cs {
		if c.Finding != nil {
			out = append(out, *c.Finding)
		}
	}
	return out
}

func TestSanityCleanStream(t *testing.T) {
	got := checkText(t, strings.Join(lip6Lines(500), "\n")+"\n", Columns{})
	assert.Empty(t, findings(got))
	for _, c := range got {
		assert.Equal(t, 1, c.Epoch)
	}
}

func TestSanityArrivalMovedOneHour(t *testing.T) {
	lines := lip6Lines(500)
	var s, q, sent, arr, hops int64
	_, err := fmt.Sscan(lines[250], &s, &q, &sent, &arr, &hops)
	require.NoError(t, err)
	lines[250] = fmt.Sprintf("4 %d %d %d 14", q, sent, arr+int64(time.Hour))
	fs := findings(checkText(t, strings.Join(lines, "\n")+"\n", Columns{}))
	require.Len(t, fs, 1)
	assert.Equal(t, 251, fs[0].Line)
	assert.Equal(t, FindingArrival, fs[0].Kind)
	assert.True(t, fs[0].Excluded)
	assert.Contains(t, fs[0].String(), "t:251: sender \"4\": arrival")
	assert.Contains(t, fs[0].Detail, "+59m59.998s off") // 1 h less the 2 ms delay it replaced
}

func TestSanityWildCSVRow(t *testing.T) {
	// Epoch milliseconds, Δ = 1 s; row 100 replaced by "a,99,-5,-3".
	var b strings.Builder
	b.WriteString("host,seq,sent,recv\n")
	base := int64(1_700_000_000_000)
	for i := range 300 {
		if i == 100 {
			b.WriteString("a,99,-5,-3\n")
			continue
		}
		fmt.Fprintf(&b, "a,%d,%d,%d\n", i, base+int64(i)*1000, base+int64(i)*1000+2+int64(i%3))
	}
	cols := Columns{Sender: "host", Seq: "seq", Sent: "sent", Arrival: "recv", Unit: time.Millisecond}
	fs := findings(checkText(t, b.String(), cols))
	require.Len(t, fs, 1)
	assert.Equal(t, 102, fs[0].Line) // header is line 1, row i is line i+2
	assert.Equal(t, FindingArrival, fs[0].Kind)
	assert.True(t, fs[0].Excluded)
}

func TestSanityDelayBeforeSend(t *testing.T) {
	// Synchronized clocks, Δ = 100 ms, no jitter: threshold max(2 × 100 ms,
	// 30 × 0, 10 ms) = 200 ms. Arrival 150 ms early and send 150 ms late
	// each stay within it; the delay, 300 ms below the neighbours', does
	// not, and it is negative.
	var b strings.Builder
	for i := range 200 {
		sent := int64(i) * int64(100*time.Millisecond)
		arr := sent + int64(time.Millisecond)
		if i == 120 {
			sent += int64(150 * time.Millisecond)
			arr -= int64(150 * time.Millisecond)
		}
		fmt.Fprintf(&b, "4 %d %d %d 1\n", i, sent+int64(time.Hour), arr+int64(time.Hour))
	}
	fs := findings(checkText(t, b.String(), Columns{}))
	require.Len(t, fs, 1)
	assert.Equal(t, 121, fs[0].Line)
	assert.Equal(t, FindingDelay, fs[0].Kind)
	assert.Contains(t, fs[0].Detail, "arrives before it was sent")
}

func TestSanitySequenceRestart(t *testing.T) {
	// 200 heartbeats, then the sender restarts at 0; times go on.
	var b strings.Builder
	for i := range 400 {
		seq := i % 200
		sent := int64(i) * int64(100*time.Millisecond)
		fmt.Fprintf(&b, "4 %d %d %d 1\n", seq, sent, sent+int64(time.Millisecond))
	}
	got := checkText(t, b.String(), Columns{})
	fs := findings(got)
	require.Len(t, fs, 1)
	assert.Equal(t, FindingRestart, fs[0].Kind)
	assert.Equal(t, 201, fs[0].Line)
	assert.False(t, fs[0].Excluded, "a restart keeps its record")
	assert.Contains(t, fs[0].Detail, "restarts at 0 where about 200 was due")
	for i, c := range got {
		assert.Equal(t, 1+i/200, c.Epoch, "line %d", c.Line)
	}
}

func TestSanityWildSequenceNumber(t *testing.T) {
	lines := lip6Lines(300)
	lines[150] = strings.Replace(lines[150], "4 150 ", "4 9000000 ", 1)
	lines[151] = strings.Replace(lines[151], "4 151 ", "4 3 ", 1) // not a restart: the next ones go on from 152
	fs := findings(checkText(t, strings.Join(lines, "\n")+"\n", Columns{}))
	require.Len(t, fs, 2)
	assert.Equal(t, []int{151, 152}, []int{fs[0].Line, fs[1].Line})
	for _, f := range fs {
		assert.Equal(t, FindingSeq, f.Kind)
		assert.True(t, f.Excluded)
	}
}

func TestSanityLastingShiftIsNotAnOutlier(t *testing.T) {
	// From record 100 on, every arrival is 1 h later (a clock step of the
	// monitor): more than k records agree, so none is an outlier.
	lines := lip6Lines(300)
	for i := 100; i < 300; i++ {
		var s, q, sent, arr, hops int64
		fmt.Sscan(lines[i], &s, &q, &sent, &arr, &hops)
		lines[i] = fmt.Sprintf("4 %d %d %d 14", q, sent, arr+int64(time.Hour))
	}
	// ...but a run of k shifted records is k outliers.
	for i := 200; i < 200+DefaultSanityNeighbours; i++ {
		var s, q, sent, arr, hops int64
		fmt.Sscan(lines[i], &s, &q, &sent, &arr, &hops)
		lines[i] = fmt.Sprintf("4 %d %d %d 14", q, sent, arr+int64(time.Hour))
	}
	fs := findings(checkText(t, strings.Join(lines, "\n")+"\n", Columns{}))
	require.Len(t, fs, DefaultSanityNeighbours-1+1)
	for i, f := range fs {
		assert.Equal(t, 201+i, f.Line)
		assert.Equal(t, FindingArrival, f.Kind)
	}
}

func TestSanityTruncatedLastLine(t *testing.T) {
	// fdkit lines end with the arrival: cut inside it, "...2001" became
	// "...20", which parses.
	text := "#fdkit-trace version=1 interval=1s unit=ms\nsender seq sent arrival\n"
	for i := range 100 {
		text += fmt.Sprintf("p %d %d %d\n", i, 1000*i, 1000*i+1)
	}
	text = strings.TrimSuffix(text, "1\n")
	got := checkText(t, text, Columns{})
	fs := findings(got)
	require.Len(t, fs, 1)
	assert.Equal(t, FindingTruncated, fs[0].Kind)
	assert.Equal(t, 102, fs[0].Line)
	assert.True(t, fs[0].Excluded)
	assert.Contains(t, fs[0].String(), "t:102: sender \"p\": last line has no line ending")

	// CSV cut inside the arrival column: "...,2" parses as a (wrong) number.
	csvText := "s,q,a\nx,1,100\nx,2,200\nx,3,2"
	cols := Columns{Sender: "s", Seq: "q", Arrival: "a"}
	fs = findings(checkText(t, csvText, cols))
	require.Len(t, fs, 1)
	assert.Equal(t, FindingTruncated, fs[0].Kind)
	assert.Equal(t, 4, fs[0].Line)
	// With its final newline the same file has no finding...
	assert.Empty(t, findings(checkText(t, csvText+"\n", cols)))
	// ...nor when the cut column is not read.
	assert.Empty(t, findings(checkText(t, "s,q,a,hops\nx,1,100,14\nx,2,200,14\nx,3,300,1", cols)))

	// A LIP6 line that parses has its times intact (a cut inside them
	// leaves too few fields); only the hops, which are not read, can be
	// cut: the record is kept. Our LIP6 excerpt ends this way.
	lines := lip6Lines(100)
	text = strings.Join(lines, "\n")
	assert.Empty(t, findings(checkText(t, text[:len(text)-1], Columns{})))
}

func TestSanitySendersAreIndependent(t *testing.T) {
	// Two interleaved senders with different offsets: neither is an
	// outlier of the other.
	var b bytes.Buffer
	for i := range 200 {
		for s, off := range []int64{0, int64(time.Hour)} {
			sent := int64(i) * int64(time.Second)
			fmt.Fprintf(&b, "%d %d %d %d 1\n", s, i, sent+off, sent+off+int64(time.Millisecond))
		}
	}
	assert.Empty(t, findings(checkText(t, b.String(), Columns{})))
}

// BenchmarkChecker measures the sanity check per record on a clean LIP6-like
// stream (the fast path) and on one with an outlier every 100 records.
func BenchmarkChecker(b *testing.B) {
	for _, every := range []int{0, 100} {
		recs := make([]Record, 100_000)
		for i := range recs {
			sent := time.Duration(i) * 100 * time.Millisecond
			recs[i] = Record{Sender: "4", Seq: uint64(i), HasSeq: true, Sent: sent, HasSent: true,
				Arrival: sent + 3*time.Second + time.Duration(i%3)*time.Millisecond, HasArrival: true}
			if every > 0 && i%every == 50 {
				recs[i].Arrival += time.Hour
			}
		}
		b.Run(fmt.Sprintf("outlier-every-%d", every), func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				ch := NewChecker(CheckerConfig{}, func(Checked) { n++ })
				for i, r := range recs {
					ch.Add(r, i+1, false)
				}
				ch.Flush()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/record")
		})
	}
}

// A row 205 ms late on a 100 ms stream with 1 ms of jitter is left out
// (an absolute floor such as max(100 × Δ, 2 s) would miss it), and the relative rule
// finds nothing on the LIP6 excerpt nor on fdgen's presets, whose delays
// (the jitter preset's heavy tail among them) are genuine.
func TestSanityRelativeThreshold(t *testing.T) {
	count := func(recs []Record) []*Finding {
		var fs []*Finding
		ch := NewChecker(CheckerConfig{File: "x"}, func(c Checked) {
			if c.Finding != nil {
				fs = append(fs, c.Finding)
			}
		})
		for i, r := range recs {
			ch.Add(r, i+1, false)
		}
		ch.Flush()
		return fs
	}
	var late []Record
	for i := range 2000 {
		a := time.Duration(i)*100*time.Millisecond + 30*time.Millisecond + time.Duration(i*7%11)*time.Millisecond/10
		if i == 1000 {
			a += 205 * time.Millisecond
		}
		late = append(late, Record{Sender: "a", Seq: uint64(i), HasSeq: true, Sent: time.Duration(i) * 100 * time.Millisecond, HasSent: true, Arrival: a, HasArrival: true})
	}
	fs := count(late)
	require.Len(t, fs, 1)
	assert.Equal(t, 1001, fs[0].Line)
	assert.True(t, fs[0].Excluded)

	for _, name := range Presets() {
		p, err := LookupPreset(name)
		require.NoError(t, err)
		p.Config.Duration = 30 * time.Minute
		recs, err := Generate(p.Config, NewRand(3))
		require.NoError(t, err)
		assert.Empty(t, count(recs), "preset %s", name)
	}
	path := tracetest.Shared(t, tracetest.LIP6Excerpt)
	recs, err := ReadFile(path, ReaderConfig{})
	require.NoError(t, err)
	assert.Empty(t, count(recs), "LIP6 excerpt")
}

// pushWindow keeps the window's records in order as it slides, and moves
// them only at the end of its array: about once per window length.
func TestPushWindowSlides(t *testing.T) {
	for _, k := range []int{1, 2, 8, 9} {
		var w, buf, want []pending
		moves := 0
		for i := range 1000 {
			if len(w) == k {
				w, want = w[1:], want[1:]
			}
			before := cap(w)
			w = pushWindow(w, &buf, pending{idx: int64(i)})
			want = append(want, pending{idx: int64(i)})
			if cap(w) != before {
				moves++
			}
			require.Equal(t, want, w, "k %d, record %d", k, i)
		}
		require.LessOrEqual(t, moves, 1000/max(k-1, 1)+8, "k %d", k)
		require.LessOrEqual(t, cap(buf), 2*k, "k %d", k)
	}
}

// Judging a record by its closest neighbours alone (timesAgree) gives the
// verdicts of judging every record in full: on streams with jitter, wild
// fields, lost and missing send times, sequence restarts and duplicates,
// two senders interleaved, at several neighbourhood sizes.
func TestSanityQuickVerdictsAsFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 40 {
		var recs []Record
		seq := [2]uint64{}
		for i := range 3000 {
			s := i % 2
			seq[s]++
			switch rng.IntN(200) {
			case 0:
				seq[s] = uint64(rng.IntN(5)) // a restart
			case 1:
				seq[s] += uint64(rng.IntN(100)) // a burst of losses
			}
			sent := time.Duration(seq[s]) * 10 * time.Millisecond
			r := Record{Sender: fmt.Sprint("s", s), Seq: seq[s], HasSeq: rng.IntN(50) != 0, Sent: sent, HasSent: rng.IntN(30) != 0,
				Arrival: sent + 3*time.Millisecond + time.Duration(rng.NormFloat64()*float64(time.Millisecond)), HasArrival: true}
			switch rng.IntN(100) {
			case 0:
				r.Arrival += time.Duration(rng.IntN(500)) * time.Millisecond
			case 1:
				r.Sent -= time.Duration(rng.IntN(500)) * time.Millisecond
			case 2:
				r.Seq += uint64(rng.IntN(1000))
			}
			recs = append(recs, r)
		}
		cfg := CheckerConfig{File: "x", Neighbours: 1 + round%9}
		verdicts := func(quick bool) []Checked {
			var out []Checked
			ch := NewChecker(cfg, func(c Checked) { out = append(out, c) })
			ch.full = !quick
			for i, r := range recs {
				ch.Add(r, i+1, false)
			}
			ch.Flush()
			return out
		}
		full, quick := verdicts(false), verdicts(true)
		found := 0
		for _, c := range full {
			if c.Finding != nil {
				found++
			}
		}
		require.Positive(t, found, "round %d: the stream has findings", round)
		require.Equal(t, full, quick, "round %d", round)
	}
}

// Checked.SenderIndex numbers the senders from 0 in the order of their
// first records, on the verdicts emitted by Add and by Flush alike, and
// Senders counts the senders given so far.
func TestCheckerSenderIndex(t *testing.T) {
	order := []string{"b", "a", "b", "c", "a", "c", "b"}
	want := map[string]int{"b": 0, "a": 1, "c": 2}
	var got []Checked
	ch := NewChecker(CheckerConfig{}, func(c Checked) { got = append(got, c) })
	seen := map[string]bool{}
	seq := map[string]uint64{}
	line := 0
	for range 20 {
		for _, s := range order {
			seen[s] = true
			line++
			at := time.Duration(line) * time.Second
			ch.Add(Record{Sender: s, Seq: seq[s], HasSeq: true, Arrival: at, HasArrival: true}, line, false)
			seq[s]++
			assert.Equal(t, len(seen), ch.Senders())
		}
	}
	emitted := len(got)
	require.Positive(t, emitted)
	ch.Flush()
	require.Len(t, got, line)
	require.Greater(t, len(got), emitted)
	for _, c := range got {
		assert.Equal(t, want[c.Record.Sender], c.SenderIndex, "line %d sender %s", c.Line, c.Record.Sender)
	}
}

// A sequence number near 2^64 is far from its neighbours, not a few below
// them (user44's F13, session 22: 2^64−1 among 0..299 was "-49 away", the
// difference taken modulo 2^64), and is left out near the start as well,
// where that modular difference fell within R and let it pass.
func TestSanitySequenceNumberNear2To64(t *testing.T) {
	for _, c := range []struct {
		at   int
		away string
	}{{150, "+18446744073709551465"}, {10, "+18446744073709551605"}} {
		lines := lip6Lines(300)
		lines[c.at] = strings.Replace(lines[c.at], fmt.Sprintf("4 %d ", c.at), "4 18446744073709551615 ", 1)
		fs := findings(checkText(t, strings.Join(lines, "\n")+"\n", Columns{}))
		require.Len(t, fs, 1, "at %d", c.at)
		assert.Equal(t, FindingSeq, fs[0].Kind)
		assert.Equal(t, c.at+1, fs[0].Line)
		assert.True(t, fs[0].Excluded)
		assert.Contains(t, fs[0].Detail, "sequence number 18446744073709551615 is "+c.away+" away from what its neighbours predict (more than 32)")
	}
}

// A 64-bit counter that wraps from 2^64 − 1 to 0 one Δ later is a restart
// whose message says the counter wrapped; it said "restarts at 0 where
// about 0 was due" (user48's F17).
func TestSanityRestartAtCounterWrap(t *testing.T) {
	assert.Equal(t, "where about 8 was due", dueText(5, 3))
	assert.Equal(t, "where about 2^64 + 3 was due: the 64-bit counter wrapped past 18446744073709551615", dueText(1<<64-2, 5))
	var b strings.Builder
	for i := range 600 {
		seq := uint64(1<<64-300) + uint64(i) // wraps to 0 at i = 300
		sent := int64(i) * int64(100*time.Millisecond)
		fmt.Fprintf(&b, "4 %d %d %d 14\n", seq, sent, sent+int64(time.Millisecond)*int64(1+i%2))
	}
	fs := findings(checkText(t, b.String(), Columns{}))
	require.Len(t, fs, 1)
	assert.Equal(t, FindingRestart, fs[0].Kind)
	assert.Equal(t, 301, fs[0].Line)
	assert.Equal(t, "sequence restarts at 0 where about 2^64 was due: the 64-bit counter wrapped past 18446744073709551615 (sent 100ms after 18446744073709551615): a new incarnation of the sender (epoch 2)", fs[0].Detail)
}
