package phi_test

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
)

// FuzzPureFunctions checks that the level functions and their inverses never
// panic and that levels are never negative or NaN for non-NaN input.
func FuzzPureFunctions(f *testing.F) {
	for _, v := range []float64{0, -1, 1, 8, 37, 38, -38.5, 300, 1e300, math.MaxFloat64, 5e-324, math.Inf(1), math.Inf(-1)} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) {
			return
		}
		for name, l := range map[string]float64{"LevelOfZ": phi.LevelOfZ(v), "AkkaLevelOfY": phi.AkkaLevelOfY(v)} {
			if math.IsNaN(l) || l < 0 {
				t.Fatalf("%s(%v) = %v", name, v, l)
			}
		}
		z, y := phi.ZOfLevel(v), phi.AkkaYOfLevel(v)
		if math.IsNaN(z) || math.IsNaN(y) {
			t.Fatalf("inverses of %v: z %v, y %v", v, z, y)
		}
		if v > 1e-300 && v < 1e299 {
			if l := phi.LevelOfZ(z); math.Abs(l-v) > 1e-12*v {
				t.Fatalf("LevelOfZ(ZOfLevel(%v)) = %v", v, l)
			}
			if l := phi.AkkaLevelOfY(y); math.Abs(l-v) > 1e-12*v {
				t.Fatalf("AkkaLevelOfY(AkkaYOfLevel(%v)) = %v", v, l)
			}
		}
	})
}

// FuzzDetectors feeds arbitrary heartbeat sequences (steps of up to ±35 min,
// any sequence numbers, with or without them) to every model and checks the
// accrual invariants after each one.
func FuzzDetectors(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 100, 1, 0, 0, 0, 100, 1, 0, 0, 0, 200})
	f.Add([]byte{1, 255, 255, 255, 255, 0, 0, 0, 0, 0, 3, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		ds := []detector.Accrual{}
		n, _ := phi.NewNormal(phi.NormalConfig{WindowSize: 8, MinStdDev: new(time.Duration(1))})
		r, _ := phi.NewNormal(phi.NormalConfig{WindowSize: 4, DivideBySeqGap: true, MaxInterval: new(time.Second), Threshold: 300})
		a, _ := phi.NewAkka(phi.AkkaConfig{WindowSize: 5, AcceptablePause: new(time.Duration(0)), MinStdDev: new(time.Duration(1)), BootstrapInterval: new(time.Duration(1))})
		c, _ := phi.NewCassandra(phi.CassandraConfig{WindowSize: 3, MaxInterval: new(time.Duration(0)), Threshold: 0.5})
		ds = append(ds, n, r, a, c)
		at, newest := time.Duration(0), time.Duration(math.MinInt64)
		var seq uint64
		for len(data) >= 5 {
			flags := data[0]
			step := time.Duration(int32(binary.BigEndian.Uint32(data[1:5]))) * time.Microsecond
			data = data[5:]
			at += step
			newest = max(newest, at)
			seq += uint64(flags >> 2)
			hb := detector.Heartbeat{Seq: seq, HasSeq: flags&1 == 1, Arrival: at}
			for _, d := range ds {
				d.Observe(hb)
				tau, ok := d.FreshnessPoint()
				if !ok {
					t.Fatal("no freshness point after a heartbeat")
				}
				prev := 0.0
				for _, dt := range []time.Duration{-time.Second, 0, time.Millisecond, time.Second, time.Hour} {
					l := d.Level(at + dt)
					if math.IsNaN(l) || l < prev {
						t.Fatalf("%T: level %v after %v (previous %v)", d, l, prev, dt)
					}
					prev = l
					if d.Suspected(at+dt) != (at+dt > tau) {
						t.Fatalf("%T: Suspected disagrees with τ", d)
					}
				}
				if e, ok := d.ElapsedFor(d.Threshold()); ok && tau-e > newest {
					t.Fatalf("%T: T_last %v after the latest arrival %v", d, tau-e, newest)
				}
			}
		}
	})
}
