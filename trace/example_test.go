package trace_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/fdkit/fdkit/trace"
)

// Read a LIP6 reception log, split it per sender and summarise each stream.
func Example() {
	const log = `4 101 9301432084211090 47816110312853897 14
2 102 10261903556925963 47816110315646805 15
4 102 9301432184211090 47816110412853897 14
2 104 10261903756925963 47816110515646805 15
4 103 9301432284211090 47816110512853897 14
`
	r, err := trace.NewReader(strings.NewReader(log), trace.ReaderConfig{Name: "recv_node1.txt"})
	if err != nil {
		fmt.Println(err)
		return
	}
	streams, err := r.Streams()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Format())
	for _, s := range streams {
		st := trace.Summarize(s.Records)
		fmt.Printf("sender %s: %d heartbeats, lost %d, mean inter-arrival %v, interval %v\n",
			s.Sender, st.Records, st.Lost, st.InterArrival.Mean, st.Interval)
	}
	hb := streams[0].Records[0].Heartbeat()
	fmt.Println(hb.Seq, hb.Arrival)
	// Output:
	// lip6
	// sender 2: 2 heartbeats, lost 1, mean inter-arrival 200ms, interval 100ms
	// sender 4: 3 heartbeats, lost 0, mean inter-arrival 100ms, interval 100ms
	// 102 13282h15m10.315646805s
}

// Generate a preset trace, deterministic for the seed, and write it in
// fdkit format.
func ExampleGenerate() {
	p, err := trace.LookupPreset("gc-pause")
	if err != nil {
		fmt.Println(err)
		return
	}
	recs, err := trace.Generate(p.Config, trace.NewRand(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	st := trace.Summarize(recs)
	fmt.Printf("%d heartbeats, %d lost, longest silence %v\n", st.Records, st.Lost, st.InterArrival.Max.Round(time.Millisecond))

	var sb strings.Builder
	w, _ := trace.NewWriter(&sb, trace.Header{Interval: p.Config.Interval}, trace.NoCompression)
	for _, rec := range recs[:2] {
		w.Write(rec)
	}
	w.Close()
	fmt.Print(sb.String())
	// Output:
	// 1185 heartbeats, 0 lost, longest silence 698ms
	// #fdkit-trace version=1 interval=100ms unit=ns
	// sender seq sent arrival
	// p 0 453179 6341106
	// p 1 99608381 105930270
}

// Generate two senders' streams merged by arrival time and write them as
// they come, in memory that does not grow with the trace's length.
func ExampleNewMergedGenerator() {
	p, err := trace.LookupPreset("stable")
	if err != nil {
		fmt.Println(err)
		return
	}
	a, b := p.Config, p.Config
	a.Sender, b.Sender = "a", "b"
	a.Duration, b.Duration = 300*time.Millisecond, 300*time.Millisecond
	g, err := trace.NewMergedGenerator([]trace.GenConfig{a, b}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	var sb strings.Builder
	w, _ := trace.NewWriter(&sb, trace.Header{Interval: p.Config.Interval}, trace.NoCompression)
	for {
		r, ok, err := g.Next()
		if err != nil || !ok {
			break
		}
		w.Write(r)
	}
	w.Close()
	fmt.Print(sb.String())
	// Output:
	// #fdkit-trace version=1 interval=100ms unit=ns
	// sender seq sent arrival
	// b 0 0 3122321
	// a 0 453179 6341106
	// a 1 99608381 105930270
	// b 1 100345078 106226012
	// a 2 199951959 202925769
	// b 2 200186685 204742001
}

// A malformed line gives a *ParseError naming file, line, field and what
// was expected; a lenient reader skips and counts such lines.
func ExampleParseError() {
	const log = "4 101 9301432084211090 47816110312853897 14\n4 1O2 9301432184211090 47816110412853897 14\n"
	r, _ := trace.NewReader(strings.NewReader(log), trace.ReaderConfig{Name: "recv.txt"})
	_, err := r.ReadAll()
	fmt.Println(err)

	r, _ = trace.NewReader(strings.NewReader(log), trace.ReaderConfig{Name: "recv.txt", Lenient: true})
	recs, err := r.ReadAll()
	fmt.Println(len(recs), err, r.Skipped())
	// Output:
	// recv.txt:2: field seq: want unsigned integer, got "1O2"
	// 1 <nil> 1
}
