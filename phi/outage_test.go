package phi_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/satzger"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Safe defaults: under default settings no φ model learns an outage as an
// ordinary sample. (Satzger's detector does learn it, but a single sample
// moves its order statistic by one rank only.) Heartbeats every 1 s ± 50 ms (uniform) for
// 1,200 heartbeats, a 30 s outage, 300 more (the outage's interval is
// still in a window of 1,000): the detection time of a crash
// right after the last heartbeat (τ − T_last) is within 10 % of what it was
// right before the outage. With SkipIfSuspected new(false), the normal
// model's default before fdkit adopted Akka's rule, the 30 s interval enters
// the window and the detection time grows from 1.16 s to 6.35 s (this test
// then fails).
func TestDefaultsDoNotLearnOutages(t *testing.T) {
	type det interface {
		detector.Detector
		BackwardArrivals() uint64
	}
	cases := map[string]func() (det, error){
		"phi-normal":    func() (det, error) { return phi.NewNormal(phi.NormalConfig{}) },
		"phi-akka":      func() (det, error) { return phi.NewAkka(phi.AkkaConfig{}) },
		"phi-cassandra": func() (det, error) { return phi.NewCassandra(phi.CassandraConfig{}) },
		"satzger":       func() (det, error) { return satzger.New(satzger.Config{}) },
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			d, err := mk()
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(11, 12))
			at, seq := time.Duration(0), uint64(0)
			beat := func(n int) {
				for range n {
					at += time.Second + time.Duration(r.Int64N(int64(100*time.Millisecond))) - 50*time.Millisecond
					d.Observe(detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at})
					seq++
				}
			}
			detection := func() time.Duration {
				tau, ok := d.FreshnessPoint()
				require.True(t, ok)
				return tau - at
			}
			beat(1200)
			before := detection()
			at += 30 * time.Second // the outage: 30 heartbeats lost
			seq += 30
			beat(300)
			after := detection()
			assert.InEpsilon(t, float64(before), float64(after), 0.10, "detection time %v before the outage, %v after", before, after)
		})
	}
}
