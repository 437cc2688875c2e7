package spec

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
)

// Sweep is a detector spec with one parameter swept over a range, written
// as the spec followed by key=lo..hi, for example
//
//	chen(window=1000) alpha=10ms..1s
//	phi-akka(pause=0) threshold=1..16:log
//
// Lo and Hi are in qos units: milliseconds for durations.
type Sweep struct {
	Spec   Spec
	Param  string
	Lo, Hi float64
	Log    bool // geometric spacing (":log"); else even (":lin", the default)
}

// ParseSweep reads a sweep. Errors name the part that is wrong.
func ParseSweep(text string) (Sweep, error) {
	t := strings.TrimSpace(text)
	cut := strings.LastIndexByte(t, ')') + 1
	if cut == 0 {
		cut = strings.IndexAny(t, " \t")
		if cut < 0 {
			return Sweep{}, fmt.Errorf("sweep %q: missing the swept parameter (expected e.g. chen(window=1000) alpha=10ms..1s)", text)
		}
	}
	s, err := Parse(t[:cut])
	if err != nil {
		return Sweep{}, err
	}
	rest := strings.TrimSpace(t[cut:])
	k, r, ok := strings.Cut(rest, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return Sweep{}, fmt.Errorf("sweep %q: %q is not key=lo..hi", text, rest)
	}
	p := s.fam.param(k)
	if p == nil {
		return Sweep{}, fmt.Errorf("sweep %q: %s has no parameter %q (its parameters: %s)", text, s.fam.Name, k, s.fam.paramNames())
	}
	if p.Kind == Bool || p.Kind == Enum {
		return Sweep{}, fmt.Errorf("sweep %q: %s is not a number and cannot be swept", text, k)
	}
	sw := Sweep{Spec: s, Param: p.Name} // the parameter's own spelling: names ignore case
	if i := strings.LastIndexByte(r, ':'); i >= 0 {
		switch strings.TrimSpace(r[i+1:]) {
		case "log":
			sw.Log = true
		case "lin":
		default:
			return Sweep{}, fmt.Errorf("sweep %q: spacing %q is not log or lin", text, r[i+1:])
		}
		r = r[:i]
	}
	lo, hi, ok := strings.Cut(r, "..")
	if !ok {
		return Sweep{}, fmt.Errorf("sweep %q: %s: %q is not a range lo..hi", text, k, strings.TrimSpace(r))
	}
	lv, err := p.parseValue(lo)
	if err != nil {
		return Sweep{}, fmt.Errorf("sweep %q: lower bound: %w", text, err)
	}
	hv, err := p.parseValue(hi)
	if err != nil {
		return Sweep{}, fmt.Errorf("sweep %q: upper bound: %w", text, err)
	}
	sw.Lo, sw.Hi = asFloat(lv), asFloat(hv)
	if sw.Hi < sw.Lo {
		return Sweep{}, fmt.Errorf("sweep %q: %s: upper bound %s is below lower bound %s", text, k, strings.TrimSpace(hi), strings.TrimSpace(lo))
	}
	if sw.Hi == sw.Lo {
		// Every point would be the same setting, replayed again and
		// drawn as one.
		return Sweep{}, fmt.Errorf("sweep %q: %s: both bounds are %s: a sweep needs lo < hi; for that one setting give %s(%s=%s) without a range",
			text, k, strings.TrimSpace(lo), s.fam.Name, p.Name, strings.TrimSpace(lo))
	}
	if sw.Log && sw.Lo <= 0 {
		return Sweep{}, fmt.Errorf("sweep %q: %s: a log range needs a lower bound > 0", text, k)
	}
	return sw, nil
}

// String returns the sweep's textual form.
func (w Sweep) String() string {
	p := w.Spec.fam.param(w.Param)
	b := func(x float64) string {
		v, err := fromFloat(p.Kind, x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return formatValue(v)
	}
	s := w.Spec.String() + " " + w.Param + "=" + b(w.Lo) + ".." + b(w.Hi)
	if w.Log {
		s += ":log"
	}
	return s
}

// Family returns the qos family of the sweep with the given number of
// points. Sweeping the family's main parameter (Algorithm.Swept) uses its
// one-pass qos family; any other parameter is replayed once per point. The
// family's Name is the spec's text.
func (w Sweep) Family(points int) (qos.Family, error) {
	values, err := qos.Range(w.Lo, w.Hi, points, w.Log)
	if err != nil {
		return qos.Family{}, fmt.Errorf("sweep %s: %w", w, err)
	}
	p := w.Spec.fam.param(w.Param)
	if p.Kind == Int || p.Kind == Uint { // integer parameters take integer points
		for i := range values {
			values[i] = math.Round(values[i])
		}
		// Rounding can repeat a point (window=1..3 over 10 points): replay
		// each integer once.
		values = slices.Compact(values)
	}
	if w.Param == w.Spec.fam.Swept && w.Spec.fam.sweep != nil {
		f := w.Spec.fam.sweep(w.Spec.built(), values)
		f.Name = w.Spec.String()
		return f, nil
	}
	base := w.Spec.clone()
	unit := p.Unit
	if p.Kind == Duration {
		unit = "ms"
	}
	return qos.Family{Name: base.String(), Param: w.Param, Unit: unit, Values: values,
		New: func(x float64) (detector.Detector, error) {
			v, err := fromFloat(p.Kind, x)
			if err != nil {
				return nil, err
			}
			c := base.clone()
			p.set(c.cfg, v)
			return c.New()
		}}, nil
}
