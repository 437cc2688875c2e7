package qos

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/stretchr/testify/require"
)

// A linear family's Family.Apart points equal, field by field, the sweep
// of each value alone (the per-cell breakdown of the intervals and the TD
// percentiles included), in memory and past Spill.InMemory (the
// per-heartbeat data spilled and read back once per collector), and the
// curve's own points are those of the sweep without Apart. A value the
// family refuses (a negative margin) is left nil, for the caller to
// replay. The traces: jittered delays (Jacobson's RTTVAR is no integer,
// so sums taken with other values in between differ in their last bits)
// and a sender stopped for 20 s (TD floored at the small margins, below
// 30 s for Chen's).
func TestLinearApartSameAsAlone(t *testing.T) {
	n := 6000
	long := generate(genOpts{n: n, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, dup: 0.002, pause: 0.002, seed: 7})
	stopped := generate(genOpts{n: 3000, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, seed: 8})
	for k := range stopped {
		if stopped[k].Seq >= 1500 {
			stopped[k].Sent += 20 * time.Second
			stopped[k].Arrival += 20 * time.Second
		}
	}
	est := chen.EstimatorConfig{Interval: ms(100), WindowSize: 100}
	type apartCase struct {
		fam   Family
		apart []float64 // the last one refused by New
	}
	cases := []apartCase{
		{JacobsonFamily(jacobson.Config{}, []float64{0.5, 1, 2, 4, 8, 16}), []float64{3.3, 2, -1}},
		{ChenFamily(chen.Config{Estimator: est}, durs([]float64{0.1, 1, 10, 100, 1000})), []float64{7.7, 10, -1}},
		{FixedFamily(durs([]float64{50, 100, 200, 400})), []float64{150, 100, -5}},
		// On the stopped trace TD is floored at 10 ms, not from 30 s on:
		// the point apart is floored where the curve is not.
		{ChenFamily(chen.Config{Estimator: est}, durs([]float64{30000, 60000})), []float64{10, -1}},
	}
	for name, hbs := range map[string][]detector.Heartbeat{"long": long, "stopped": stopped} {
		src := spooled(t, hbs)
		for _, cfg := range []Config{{}, {WarmUp: 37, Intervals: true}, {Intervals: true, Spill: Spill{InMemory: 100}}} {
			stream := Stream{Name: name, Heartbeats: hbs}
			if cfg.Spill.InMemory > 0 {
				stream = Stream{Name: name, Source: src}
			}
			for _, tc := range cases {
				plain, err := Sweep([]Stream{stream}, []Family{tc.fam}, SweepConfig{Config: cfg})
				require.NoError(t, err)
				f := tc.fam
				f.Apart = tc.apart
				got, err := Sweep([]Stream{stream}, []Family{f}, SweepConfig{Config: cfg})
				require.NoError(t, err)
				label := name + " " + f.Name
				require.Equal(t, OnePass, got[0].Method, label)
				require.Equal(t, plain[0].Points, got[0].Points, "%s: the curve with Apart", label)
				require.Len(t, got[0].Apart, len(tc.apart), label)
				for j, v := range tc.apart {
					p := got[0].Apart[j]
					if j == len(tc.apart)-1 {
						require.Nil(t, p, "%s: %g is refused", label, v)
						continue
					}
					require.NotNil(t, p, "%s %g", label, v)
					alone := tc.fam
					alone.Values = []float64{v}
					want, err := Sweep([]Stream{stream}, []Family{alone}, SweepConfig{Config: cfg})
					require.NoError(t, err)
					require.Len(t, want[0].Points, 1)
					require.Equal(t, want[0].Points[0], *p, "%s %g, config %+v", label, v, cfg)
				}
			}
		}
	}
}
