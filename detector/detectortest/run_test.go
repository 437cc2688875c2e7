package detectortest

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// recorder is a reporter that records the first failure and stops the
// goroutine, as testing.T does.
type recorder struct{ msg string }

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failures runs every scenario on newDet and returns the failure messages.
func failures(newDet func() detector.Detector, o Config) []string {
	o = o.withDefaults(true)
	var msgs []string
	for _, sc := range scenarios {
		for _, seed := range seeds {
			r := &recorder{}
			done := make(chan struct{})
			go func() {
				defer close(done)
				check(r, newDet, o, sc.clean, stream(sc, seed, o), seed)
			}()
			<-done
			if r.msg != "" {
				msgs = append(msgs, sc.name+": "+r.msg)
			}
		}
	}
	return msgs
}

// linearAccrual is a correct accrual detector (the Cassandra shape, level
// = elapsed/scale with a fixed scale) whose faults the tests switch on.
type linearAccrual struct {
	last, scale time.Duration
	seen        bool
	fault       string
	queries     int
}

func (d *linearAccrual) Observe(hb detector.Heartbeat) {
	if d.fault == "panic" && hb.HasSeq && hb.Seq == 0 {
		panic("seq 0")
	}
	if d.seen && hb.Arrival < d.last {
		return
	}
	d.last, d.seen = hb.Arrival, true
	if d.fault == "side-effect" && d.queries > 100 {
		d.last++
	}
}

func (d *linearAccrual) e(level float64) time.Duration {
	e := time.Duration(math.Ceil(max(0, level) * float64(d.scale)))
	if d.fault == "elapsed-late" && e > 0 {
		e += 10
	}
	return e
}

func (d *linearAccrual) FreshnessPoint() (time.Duration, bool) {
	tau := detector.AddSat(d.last, d.e(d.Threshold()))
	if d.fault == "tau-off" {
		tau = detector.AddSat(tau, time.Millisecond)
	}
	return tau, d.seen
}

func (d *linearAccrual) WarmingUp() bool { return false }

func (d *linearAccrual) Suspected(now time.Duration) bool {
	d.queries++
	tau, ok := d.FreshnessPoint()
	if d.fault == "not-strict" {
		return ok && now >= tau
	}
	return ok && now > tau
}

func (d *linearAccrual) Level(now time.Duration) float64 {
	if !d.seen {
		return 0
	}
	if d.fault == "nan" && now == d.last+1 {
		return math.NaN()
	}
	if now <= d.last {
		return 0
	}
	l := float64(uint64(now)-uint64(d.last)) / float64(d.scale)
	if d.fault == "decreasing" && l > 5 {
		return 5 - l/1e6
	}
	return l
}

func (d *linearAccrual) Threshold() float64 { return 3 }

func (d *linearAccrual) ElapsedFor(level float64) (time.Duration, bool) {
	if !d.seen || math.IsNaN(level) {
		return 0, false
	}
	return d.e(level), true
}

func (d *linearAccrual) LinearForm() (time.Duration, float64, bool) {
	off := d.last
	if d.fault == "never-linear" {
		return 0, 0, false
	}
	if d.fault == "linear-off" {
		off += 5
	}
	return off, float64(d.scale), d.seen
}

func TestRunPassesCorrectDetectors(t *testing.T) {
	assertNone := func(t *testing.T, msgs []string) {
		t.Helper()
		if len(msgs) > 0 {
			t.Fatalf("%d failures, first: %s", len(msgs), msgs[0])
		}
	}
	assertNone(t, failures(func() detector.Detector { return &linearAccrual{scale: 40 * time.Millisecond} },
		Config{LinearParam: 3, TauNonDecreasing: true, NoWarmUp: true}))
	assertNone(t, failures(func() detector.Detector {
		d, _ := detector.NewFixed(detector.FixedConfig{})
		return d
	}, Config{LinearParam: float64(time.Second), TauNonDecreasing: true, NoWarmUp: true}))
}

// Each fault of linearAccrual is caught, with a message saying what is
// wrong.
func TestRunCatchesFaults(t *testing.T) {
	for fault, want := range map[string]string{
		"panic":        "panic: seq 0",
		"not-strict":   "want now > τ",
		"tau-off":      "is not T_last + ElapsedFor",
		"nan":          "want a number ≥ 0",
		"decreasing":   "Level decreases in now",
		"elapsed-late": "not the smallest elapsed time",
		"linear-off":   "LinearForm: Offset",
		"side-effect":  "never-queried twin",
		"never-linear": "LinearForm was never ok",
	} {
		t.Run(fault, func(t *testing.T) {
			msgs := failures(func() detector.Detector {
				return &linearAccrual{scale: 40 * time.Millisecond, fault: fault}
			}, Config{LinearParam: 3})
			if len(msgs) == 0 {
				t.Fatalf("fault %q not caught", fault)
			}
			if !strings.Contains(msgs[0], want) {
				t.Errorf("fault %q: first failure %q does not say %q", fault, msgs[0], want)
			}
		})
	}
	t.Run("linear param forgotten", func(t *testing.T) {
		msgs := failures(func() detector.Detector { return &linearAccrual{scale: 40 * time.Millisecond} }, Config{})
		if len(msgs) == 0 || !strings.Contains(msgs[0], "LinearForm") {
			t.Fatalf("a forgotten LinearParam is not reported: %q", msgs)
		}
	})
}

// τ moving backwards is caught only when the detector promises it does not.
func TestRunTauNonDecreasingIsOptIn(t *testing.T) {
	shrinking := func() detector.Detector { return &shrinkingTimeout{to: time.Second} }
	if msgs := failures(shrinking, Config{}); len(msgs) > 0 {
		t.Fatalf("without the option: %s", msgs[0])
	}
	msgs := failures(shrinking, Config{TauNonDecreasing: true})
	if len(msgs) == 0 || !strings.Contains(msgs[0], "moved backwards") {
		t.Fatalf("with the option: %q", msgs)
	}
}

// shrinkingTimeout halves its timeout on every heartbeat down to 1 ms, as
// an adaptive detector may: τ = T_last + TO moves backwards.
type shrinkingTimeout struct {
	last, to time.Duration
	seen     bool
}

func (d *shrinkingTimeout) Observe(hb detector.Heartbeat) {
	if d.seen && hb.Arrival < d.last {
		return
	}
	if d.seen {
		d.to = max(d.to/2, time.Millisecond)
	}
	d.last, d.seen = hb.Arrival, true
}

func (d *shrinkingTimeout) FreshnessPoint() (time.Duration, bool) {
	return detector.AddSat(d.last, d.to), d.seen
}
func (d *shrinkingTimeout) WarmingUp() bool { return false }
func (d *shrinkingTimeout) Suspected(now time.Duration) bool {
	tau, ok := d.FreshnessPoint()
	return ok && now > tau
}

func TestStreamsAreReproducible(t *testing.T) {
	o := Config{}.withDefaults(true)
	for _, sc := range scenarios {
		a, b := stream(sc, 1, o), stream(sc, 1, o)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("%s: two streams with seed 1 differ", sc.name)
		}
		if len(a) < o.Heartbeats {
			t.Fatalf("%s: %d heartbeats, want ≥ %d", sc.name, len(a), o.Heartbeats)
		}
	}
}
