package spec

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
)

// Stream is what a family's configuration for one replayed heartbeat
// stream depends on (Algorithm.ForStream): the nominal heartbeat interval Δ,
// the window n of the adaptive detectors, and for the detectors that
// measure their own QoS (SFD) the targets and how TD is measured.
type Stream struct {
	Interval time.Duration // Δ; must be positive
	Window   int           // n; must be positive
	// Timeout is the fixed detector's timeout T; 0 means 10Δ.
	Timeout time.Duration
	// Targets are SFD's QoS targets; Targets.NoMistakes asks for MR = 0.
	Targets qos.Targets
	// SendTime says TD is measured from send times (synchronized
	// clocks); else from arrivals plus OneWayDelay d̄.
	SendTime    bool
	OneWayDelay time.Duration
	// Incarnation says the stream holds one incarnation of its sender,
	// split from the others at its restarts (as fdreplay's input check
	// does), so that no backwards jump in it is a sender restart: a
	// number far below the largest seen is a late heartbeat. The families
	// with a restart rule (a restart-jump parameter) are then built with
	// it off (RestartsOff) unless restart-jump is set, and print as the
	// live setting, without it (Spec.Effective names what is built).
	Incarnation bool
}

// scale returns d, a default for 1 s heartbeats, scaled by Δ/1s.
func (st Stream) scale(d time.Duration) time.Duration {
	return detector.RoundNanos(float64(d) * float64(st.Interval) / float64(time.Second))
}

// ForStream returns the family configured for a stream: its package's
// defaults with the interval and window of st, and the defaults documented
// for 1 s heartbeats (Akka's, Cassandra's) scaled by Δ/1s; the parameters
// so scaled are those with Param.Scaled. A family without a row for
// streams gets its defaults. For a stream of one incarnation
// (Stream.Incarnation) the spec builds its restart rule off while
// restart-jump is unset, also after With sets other parameters.
func (f *Algorithm) ForStream(st Stream) Spec {
	s := f.Spec()
	if f.stream != nil {
		f.stream(s.cfg, st)
	}
	s.noRestarts = st.Incarnation && f.param(RestartJump) != nil
	return s
}

// SweepRange is a swept parameter's default range, in qos units
// (milliseconds for durations).
type SweepRange struct {
	// Lo and Hi bound the range; with PerInterval they are multiples of
	// the stream's Δ.
	Lo, Hi      float64
	PerInterval bool
	Log         bool // geometric spacing
}

// DefaultSweep returns the sweep of the spec's swept parameter over its
// family's default range for a stream with heartbeat interval Δ. It fails
// for a family without a swept parameter.
func (s Spec) DefaultSweep(interval time.Duration) (Sweep, error) {
	f := s.fam
	if f.Swept == "" {
		return Sweep{}, fmt.Errorf("%s has no parameter to sweep", f.Name)
	}
	r := f.sweepRange
	lo, hi := r.Lo, r.Hi
	if r.PerInterval {
		d := float64(interval) / float64(time.Millisecond)
		lo, hi = d*lo, d*hi
	}
	return Sweep{Spec: s, Param: f.Swept, Lo: lo, Hi: hi, Log: r.Log}, nil
}

// DefaultRange returns the family's default sweep range in the units of
// its swept parameter, e.g. "Δ/100..20Δ log" or "0.5..16", or "" for a
// family without a swept parameter.
func (f *Algorithm) DefaultRange() string {
	if f.Swept == "" {
		return ""
	}
	r := f.sweepRange
	b := func(x float64) string {
		if !r.PerInterval {
			return fmt.Sprint(x)
		}
		switch {
		case x == 1:
			return "Δ"
		case x < 1:
			return fmt.Sprintf("Δ/%g", 1/x)
		}
		return fmt.Sprintf("%gΔ", x)
	}
	text := b(r.Lo) + ".." + b(r.Hi)
	if r.Log {
		text += " log"
	}
	return text
}

// LogSpaced reports whether the family's default sweep spaces its points
// geometrically (DefaultRange's "log").
func (f *Algorithm) LogSpaced() bool { return f.sweepRange.Log }

// CheckRange refuses a sweep range of the family's swept parameter, in qos
// units, that leaves the parameter's range or that its qos family rejects
// at a bound (a φ threshold below log10 2 for the normal model, whose
// crossing would precede the mean).
func (f *Algorithm) CheckRange(lo, hi float64) error {
	if f.Swept == "" {
		return fmt.Errorf("%s has no parameter to sweep", f.Name)
	}
	p := f.param(f.Swept)
	toParam := func(x float64) float64 { // qos units to the parameter's
		if p.Kind == Duration {
			return x * float64(time.Millisecond)
		}
		return x
	}
	must := fmt.Sprintf("%s's %s must be %s", f.Name, f.Swept, p.RangeText())
	if p.Kind == Duration {
		must = fmt.Sprintf("%s's %s must be %s", f.Name, f.Swept, strings.ReplaceAll(p.RangeText(), "0s", "0"))
	}
	if x := toParam(lo); x < p.Min || x == p.Min && p.MinOpen {
		return fmt.Errorf("lower bound %g out of range: %s", lo, must)
	}
	if x := toParam(hi); p.Max != 0 && x > p.Max {
		return fmt.Errorf("upper bound %g out of range: %s", hi, must)
	}
	if longest := time.Duration(math.MaxInt64); p.Kind == Duration && hi > float64(longest)/float64(time.Millisecond) {
		return fmt.Errorf("upper bound %g ms is beyond the longest duration (%v)", hi, longest)
	}
	s := f.Spec()
	q := f.sweep(s.cfg, []float64{lo, hi})
	for i, what := range []string{"lower", "upper"} {
		if _, err := q.New(q.Values[i]); err != nil {
			return fmt.Errorf("%s bound %g out of range: %w", what, q.Values[i], err)
		}
	}
	return nil
}

// Brief returns the spec's setting as a table cell shows it: the
// parameters its family lists for that, by symbol, at their effective
// values ("Φ=8 n=1000 minσ=μ/100"): the swept parameter's resolved default,
// and for another parameter left unset its documented default.
func (s Spec) Brief() string {
	var parts []string
	for _, name := range s.fam.brief {
		p := s.fam.param(name)
		sym := cmp.Or(p.Symbol, p.Name)
		v, ok := p.get(s.cfg)
		switch {
		case ok:
			parts = append(parts, sym+"="+formatValue(v))
		case name == s.fam.Swept && s.fam.point != nil:
			x := s.fam.point(s.cfg)
			if fv, err := fromFloat(p.Kind, x); err == nil {
				parts = append(parts, sym+"="+formatValue(fv))
				continue
			}
			parts = append(parts, sym+"="+p.Default)
		default:
			parts = append(parts, sym+"="+p.Default)
		}
	}
	return strings.Join(parts, " ")
}

// SweptParam returns the family's swept parameter, if it has one.
func (f *Algorithm) SweptParam() (Param, bool) {
	if f.Swept == "" {
		return Param{}, false
	}
	return f.param(f.Swept).Param, true
}
