package qos

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
)

// rateSteps is a stream whose sender changes its interval for good several
// times (100 ms, 400 ms, 150 ms, 1.2 s, each ± 5 %), so that φ's relearn rule
// records runs of late intervals, at different heartbeats for different
// thresholds.
func rateSteps() []detector.Heartbeat {
	r := rand.New(rand.NewPCG(26, 4))
	var hbs []detector.Heartbeat
	at, seq := time.Duration(0), uint64(0)
	for _, step := range []struct {
		iv time.Duration
		n  int
	}{{100 * time.Millisecond, 300}, {400 * time.Millisecond, 120}, {150 * time.Millisecond, 200}, {1200 * time.Millisecond, 60}} {
		for range step.n {
			at += step.iv + time.Duration(r.Int64N(int64(step.iv/10))) - step.iv/20
			seq++
			hbs = append(hbs, detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at, Sent: at - 2*time.Millisecond, HasSent: true})
		}
	}
	return hbs
}

// The grouped Akka sweep equals one replay per threshold on a stream where
// the relearn rule records runs of late intervals, with K of 1, 3 and the
// default; the thresholds part into several groups.
func TestAkkaOnePassEqualsReplaysRelearn(t *testing.T) {
	for _, k := range []int{1, 3, phi.DefaultRelearnAfter} {
		acfg := phi.AkkaConfig{AcceptablePause: new(time.Duration(0)), MinStdDev: new(ms(5)), BootstrapInterval: new(ms(100)), WindowSize: 100, RelearnAfter: &k}
		groups := checkAkkaOnePass(t, acfg, rateSteps(), Config{})
		assert.Greater(t, groups, 1, "K = %d", k)
		off := acfg
		off.RelearnAfter = new(0)
		assert.NotEqual(t, lateArrivals(t, acfg), lateArrivals(t, off), "K = %d: the rule changes this stream's outcome at Θ = 8", k)
	}
}

// lateArrivals counts the heartbeats of rateSteps that arrive after τ of an
// Akka detector with acfg.
func lateArrivals(t *testing.T, acfg phi.AkkaConfig) int {
	d, err := phi.NewAkka(acfg)
	if err != nil {
		t.Fatal(err)
	}
	late := 0
	for _, hb := range rateSteps() {
		if d.Suspected(hb.Arrival) {
			late++
		}
		d.Observe(hb)
	}
	return late
}
