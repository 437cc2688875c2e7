package trace

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace/tracetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// The common example trace of docs/algorithms.md, “Conventions and the common
// trace”.
func exampleTrace() []Record {
	arr := []time.Duration{120, 225, 318, 440, 522, 630}
	var recs []Record
	for k, a := range arr {
		recs = append(recs, Record{Sender: "p", Seq: uint64(k + 1), HasSeq: true,
			Sent: time.Duration(k+1) * 100 * ms, HasSent: true, Arrival: a * ms, HasArrival: true})
	}
	return recs
}

func TestStatsExampleTrace(t *testing.T) {
	s := Summarize(exampleTrace())
	assert.Equal(t, 6, s.Records)
	assert.Equal(t, 510*ms, s.Span)
	assert.Equal(t, [4]time.Duration{120 * ms, 630 * ms, 100 * ms, 600 * ms}, [4]time.Duration{s.FirstArrival, s.LastArrival, s.FirstSent, s.LastSent})
	ia := s.InterArrival
	assert.Equal(t, 5, ia.N)
	assert.Equal(t, 102*ms, ia.Mean)
	// sample s.d. 15.215124 ms (docs/algorithms.md, “Conventions and the common
	// trace”)
	assert.Equal(t, time.Duration(15215124), ia.SD)
	assert.Equal(t, 82*ms, ia.Min)
	assert.Equal(t, 105*ms, ia.P50) // sorted 82 93 105 108 122: CDF(105) = 0.6
	assert.Equal(t, 122*ms, ia.P90)
	assert.Equal(t, 122*ms, ia.P99)
	assert.Equal(t, 122*ms, ia.Max)
	assert.Equal(t, uint64(0), s.Lost)
	assert.Equal(t, 0, s.LossBursts)
	assert.Equal(t, 100*ms, s.Interval)
	assert.Equal(t, 100*ms, s.SendInterval.Mean)
	assert.Equal(t, time.Duration(0), s.SenderJitter)
	// A − σ = 20 25 18 40 22 30 ms against A: least squares by hand.
	x := []float64{0, 0.105, 0.198, 0.320, 0.402, 0.510}
	y := []float64{0, 5e6, -2e6, 20e6, 2e6, 10e6}
	var mx, my float64
	for i := range x {
		mx += x[i] / 6
		my += y[i] / 6
	}
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	beta := sxy / sxx
	alpha := my - beta*mx
	require.True(t, s.HasClock)
	assert.InDelta(t, beta/1e3, s.DriftPPM, 1e-6)
	assert.Equal(t, 20*ms+time.Duration(math.Round(alpha)), s.ClockOffset)
}

func TestStatsSequence(t *testing.T) {
	var recs []Record
	at := time.Duration(0)
	for _, seq := range []uint64{10, 11, 12, 15, 16, 14, 16, 20, 11, 21} {
		at += 100 * ms
		recs = append(recs, Record{Seq: seq, HasSeq: true, Arrival: at, HasArrival: true})
	}
	s := Summarize(recs)
	assert.Equal(t, uint64(10), s.FirstSeq)
	assert.Equal(t, uint64(21), s.LastSeq)
	assert.Equal(t, uint64(12), s.Expected)
	// received 10 11 12 14 15 16 20 21: lost 13, 17 18 19
	assert.Equal(t, uint64(4), s.Lost)
	assert.InDelta(t, 4.0/12, s.LossRate, 1e-12)
	assert.Equal(t, 2, s.LossBursts)
	assert.Equal(t, uint64(3), s.LongestBurst)
	assert.Equal(t, 2, s.Duplicates) // 16 and 11 again
	assert.Equal(t, 1, s.Reordered)  // 14 after 16
	assert.False(t, s.HasSent)
	assert.False(t, s.HasClock)
	// Steps between records with increasing sequence numbers (arrivals
	// 100 ms apart): 10→11 100, 11→12 100, 12→15 100/3, 15→16 100, 14→16
	// 50, 16→20 25, 11→21 10 ms; median 50 ms; the mean of those within
	// [25, 100] ms is (25 + 100/3 + 50 + 3·100)/6.
	assert.Equal(t, time.Duration(math.Round((25+100.0/3+50+300)/6*1e6)), s.Interval)
}

func TestStatsSparseSequence(t *testing.T) {
	s := Summarize([]Record{{Seq: 5, HasSeq: true}, {Seq: 1 << 40, HasSeq: true}, {Seq: 1<<40 + 2, HasSeq: true}})
	assert.Equal(t, uint64(1<<40+2-5+1-3), s.Lost)
	assert.Equal(t, 2, s.LossBursts)
	assert.Equal(t, uint64(1<<40-5-1), s.LongestBurst)
	s = Summarize([]Record{{Seq: math.MaxUint64 - 2, HasSeq: true}, {Seq: math.MaxUint64, HasSeq: true}})
	assert.Equal(t, uint64(1), s.Lost)
	assert.Equal(t, 1, s.LossBursts)
}

func TestStatsBackwardsAndEmpty(t *testing.T) {
	s := Summarize([]Record{{Arrival: 10, HasArrival: true}, {Arrival: 5, HasArrival: true}, {Arrival: 8, HasArrival: true}})
	assert.Equal(t, 1, s.Backwards)
	assert.Equal(t, 1, s.InterArrival.N)
	assert.Equal(t, time.Duration(3), s.InterArrival.Mean)
	assert.Equal(t, time.Duration(5), s.Span)
	assert.Equal(t, Stats{}, Summarize(nil))
	// Send instants out of order: the smallest and largest, not the
	// first and last given.
	s = Summarize([]Record{{Sent: 7, HasSent: true}, {Sent: -3, HasSent: true}, {Sent: 9, HasSent: true}, {Sent: 4, HasSent: true}})
	assert.Equal(t, [2]time.Duration{-3, 9}, [2]time.Duration{s.FirstSent, s.LastSent})
	assert.Equal(t, time.Duration(12), s.Span, "without arrivals, the send instants' span")
}

func TestStatsDrift(t *testing.T) {
	// Receiver clock = 1 h + sender clock·(1 + 40 ppm), constant 5 ms delay.
	var recs []Record
	for k := range 1000 {
		sent := time.Duration(k) * 100 * ms
		arr := time.Hour + sent + time.Duration(float64(sent)*40e-6) + 5*ms
		recs = append(recs, Record{Seq: uint64(k), HasSeq: true, Sent: sent, HasSent: true, Arrival: arr, HasArrival: true})
	}
	s := Summarize(recs)
	assert.InDelta(t, 40*(1-40e-6), s.DriftPPM, 0.01) // slope against receiver time
	assert.InDelta(t, float64(time.Hour+5*ms), float64(s.ClockOffset), 2)
}

func TestStatsLIP6Excerpt(t *testing.T) {
	path := tracetest.Shared(t, "planetlab-lip6/recv_node1_excerpt.txt")
	r, err := Open(path, ReaderConfig{})
	require.NoError(t, err)
	defer r.Close()
	all, err := SummarizeReader(r)
	require.NoError(t, err)
	require.Len(t, all, 9)
	by := map[string]Stats{}
	for _, s := range all {
		by[s.Sender] = s
	}
	// SOURCES.md table: records, lost, longest burst, ia mean / sd / max (ms).
	for sender, w := range map[string]struct {
		n, lost, longest int
		mean, sd, max    float64
	}{
		"0": {3340, 0, 0, 100.000, 1.723, 120.4},
		"2": {3325, 16, 1, 100.481, 10.149, 201.4},
		"4": {3332, 9, 1, 100.267, 17.066, 284.9},
		"7": {3339, 1, 1, 100.030, 1.765, 200.0},
	} {
		s := by[sender]
		assert.Equal(t, w.n, s.Records, sender)
		assert.Equal(t, uint64(w.lost), s.Lost, sender)
		assert.Equal(t, uint64(w.longest), s.LongestBurst, sender)
		assert.Equal(t, w.lost, s.LossBursts, sender) // all bursts have length 1 here
		assert.Equal(t, 0, s.Duplicates, sender)
		assert.Equal(t, 0, s.Reordered, sender)
		assert.InDelta(t, w.mean, float64(s.InterArrival.Mean)/1e6, 0.0006, sender)
		// SOURCES.md gives the population s.d.; Stats gives the sample s.d.
		n := float64(s.InterArrival.N)
		assert.InDelta(t, w.sd, float64(s.InterArrival.SD)/1e6*math.Sqrt((n-1)/n), 0.0006, sender)
		assert.InDelta(t, w.max, float64(s.InterArrival.Max)/1e6, 0.06, sender)
		assert.InDelta(t, 100, float64(s.Interval)/1e6, 0.1, sender)
		assert.True(t, s.HasClock)
	}
}

// A sender that pauses for an hour in the middle of a ten-minute 100 ms
// stream does not move the Δ estimate (the span divided by the sequence
// span gave 0.7 s here), with send times or only arrivals, and a jittered
// step whose median is off the mean still gives the mean.
func TestIntervalIgnoresSenderPause(t *testing.T) {
	var withSent, arrOnly []Record
	sent := time.Duration(0)
	for i := range 6000 {
		sent += 100*ms + time.Duration(i%5)*ms/10 - 2*ms/10 // steps 99.8..100.2 ms, mean 100 ms
		if i == 3000 {
			sent += time.Hour
		}
		r := Record{Seq: uint64(i), HasSeq: true, Sent: sent, HasSent: true, Arrival: sent + 5*ms + time.Duration(i*7%11)*ms/10, HasArrival: true}
		withSent = append(withSent, r)
		r.HasSent, r.Sent = false, 0
		arrOnly = append(arrOnly, r)
	}
	assert.Equal(t, 100*ms, Summarize(withSent).Interval.Round(time.Microsecond))
	assert.InDelta(t, float64(100*ms), float64(Summarize(arrOnly).Interval), float64(ms)/10)
}
