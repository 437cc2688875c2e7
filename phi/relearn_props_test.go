package phi_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/require"
)

// The level stays a suspicion level while the relearn rule fires: never NaN
// or negative, never decreasing while no heartbeat arrives, and τ never
// before the last arrival. The traces switch at random between steady
// stretches, runs of late intervals (some long enough to fire the rule, K =
// 3), pairs and single outages, so that runs start, fire and end many times
// (a window larger than the trace, so that a recorded run shows as growth).
func TestRelearnKeepsLevelProperties(t *testing.T) {
	k := 3
	type accrual interface {
		detector.Accrual
		Window() *detector.Window
	}
	mks := map[string]func() (accrual, error){
		"normal": func() (accrual, error) {
			return phi.NewNormal(phi.NormalConfig{WindowSize: 2000, RelearnAfter: &k, MaxInterval: new(3 * time.Second)})
		},
		"akka": func() (accrual, error) {
			return phi.NewAkka(phi.AkkaConfig{WindowSize: 2000, RelearnAfter: &k, AcceptablePause: new(200 * time.Millisecond)})
		},
		"cassandra": func() (accrual, error) {
			return phi.NewCassandra(phi.CassandraConfig{WindowSize: 2000, RelearnAfter: &k, MaxInterval: new(500 * time.Millisecond)})
		},
	}
	for name, mk := range mks {
		for seed := range uint64(4) {
			d, err := mk()
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(seed, 99))
			at := time.Duration(0)
			fired := 0 // runs recorded
			for i := range 2000 {
				var iv time.Duration
				switch mode := (i / 25) % 4; {
				case mode == 0:
					iv = 100*time.Millisecond + time.Duration(r.IntN(10))*time.Millisecond
				case mode == 1 && r.IntN(2) == 0:
					iv = time.Duration(1+r.IntN(5)) * time.Second
				case mode == 2:
					iv = []time.Duration{10 * time.Millisecond, 990 * time.Millisecond}[i%2]
				default:
					iv = time.Duration(r.IntN(4000)) * time.Millisecond
				}
				before := d.Window().Len()
				at += iv
				d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: at})
				if d.Window().Len() > before+1 {
					fired++
				}
				tau, ok := d.FreshnessPoint()
				require.True(t, ok)
				require.GreaterOrEqual(t, tau, at, "%s seed %d heartbeat %d: τ before the last arrival", name, seed, i)
				prev := -1.0
				for _, dt := range []time.Duration{0, 1, time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second, time.Hour, math.MaxInt64 - at} {
					l := d.Level(at + dt)
					require.False(t, math.IsNaN(l) || l < 0, "%s seed %d heartbeat %d: level %v at +%v", name, seed, i, l, dt)
					require.GreaterOrEqual(t, l, prev, "%s seed %d heartbeat %d: level decreased at +%v", name, seed, i, dt)
					prev = l
				}
			}
			require.Positive(t, fired, "%s seed %d: the rule never recorded a run", name, seed)
		}
	}
}
