package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/twowfd"
)

// detectorNames lists the detectors fdreplay knows, in table order.
var detectorNames = []string{"fixed", "jacobson", "phi-normal", "phi-akka", "phi-cassandra", "chen", "bertier", "sfd", "2w-fd", "satzger", "kappa"}

// aliases accepted by --detectors.
var detectorAliases = map[string]string{
	"fixed": "fixed", "timeout": "fixed",
	"jacobson": "jacobson", "jk": "jacobson",
	"phi": "phi-normal", "phi-normal": "phi-normal", "normal": "phi-normal",
	"phi-akka":      "phi-akka",
	"phi-cassandra": "phi-cassandra",
	"chen":          "chen", "nfd-e": "chen",
	"bertier": "bertier",
	"sfd":     "sfd",
	"2w-fd":   "2w-fd", "2wfd": "2w-fd", "twowfd": "2w-fd",
	"satzger": "satzger",
	"kappa":   "kappa", "κ": "kappa", "kappa-fd": "kappa", "κ-fd": "kappa",
}

// settings are the per-stream inputs of the detector configurations.
type settings struct {
	interval     time.Duration // Δ
	window       int           // n
	windowShrunk bool          // n was reduced for a short stream
	warmUp       int           // heartbeats excluded at the start
	timeout      time.Duration // fixed T for the table
	sync         bool          // sender and monitor clocks synchronized
	delay        time.Duration // d̄
	targets      qos.Targets   // SFD's targets
	sfdStep      time.Duration
	sfdMargin    time.Duration
}

// The defaults, for Δ = 100 ms traces and scaled with Δ otherwise:
//
//   - fixed: T = 10Δ (1 s at Δ = 100 ms, detector.DefaultTimeout), unless
//     --timeout is given.
//   - jacobson: package defaults (K = 4, RFC 6298 gains, no clamp).
//   - phi-normal: package defaults (Θ = 8) with the window n.
//   - phi-akka: Θ = 8; Akka's time settings are for 1 s heartbeats
//     (acceptable pause 3 s, min std 100 ms, first estimate 1 s), so they
//     are scaled by Δ/1 s: pause 3Δ, min std Δ/10, first estimate Δ.
//   - phi-cassandra: Θ = 8, gossip interval Δ (so the initial interval and
//     the interval cap are 2Δ, as 2 s is for Cassandra's 1 s gossip).
//   - chen: package defaults (α = Δ) with Δ and n.
//   - bertier: package defaults (γ = 0.1, β = 1, φ = 4) with Δ and n.
//   - 2w-fd: α = Δ, n1 = 1, n2 = n (the package defaults with Δ and n).
//   - satzger: θ = 0.99, c = 0.9 (package defaults), window n, bootstrap
//     interval Δ (the package's 1 s is for 1 s heartbeats).
//   - kappa: K = 2.5, normal contribution, σ_min = Δ/100 (package
//     defaults) with Δ and n.
//   - sfd: SM_1 = Δ, β = Δ/10, slots of 100 heartbeats, targets from
//     --td-max/--mr-max/--qap-min or else TD ≤ 10Δ, MR ≤ 1 per minute,
//     QAP ≥ 0.999.
func (s settings) akka() phi.AkkaConfig {
	scale := func(d time.Duration) time.Duration {
		return detector.RoundNanos(float64(d) * float64(s.interval) / float64(time.Second))
	}
	return phi.AkkaConfig{
		WindowSize:        s.window,
		MinStdDev:         new(scale(phi.DefaultAkkaMinStdDev)),
		AcceptablePause:   new(scale(phi.DefaultAkkaAcceptablePause)),
		BootstrapInterval: new(max(scale(phi.DefaultAkkaBootstrapInterval), 1)),
	}
}

func (s settings) cassandra() phi.CassandraConfig {
	return phi.CassandraConfig{WindowSize: s.window, BootstrapInterval: new(2 * s.interval), MaxInterval: new(2 * s.interval)}
}

func (s settings) normal() phi.NormalConfig { return phi.NormalConfig{WindowSize: s.window} }

func (s settings) chenEst() chen.EstimatorConfig {
	return chen.EstimatorConfig{Interval: s.interval, WindowSize: s.window}
}

func (s settings) bertier() bertier.Config { return bertier.Config{Estimator: s.chenEst()} }

func (s settings) twowfd() twowfd.Config {
	return twowfd.Config{Interval: s.interval, LongWindowSize: s.window}
}

func (s settings) satzger() satzger.Config {
	return satzger.Config{WindowSize: s.window, BootstrapInterval: new(s.interval)}
}

func (s settings) kappa() kappa.Config { return kappa.Config{Estimator: s.chenEst()} }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// tableFamilies returns, for each selected detector, a single-point family
// at its default setting, and a description of that setting.
func tableFamilies(s settings, names []string) ([]qos.Family, []string, error) {
	var fams []qos.Family
	var desc []string
	for _, n := range names {
		var f qos.Family
		var d string
		switch n {
		case "fixed":
			f, d = qos.FixedFamily([]time.Duration{s.timeout}), "T="+s.timeout.String()
		case "jacobson":
			f, d = qos.JacobsonFamily(jacobson.Config{}, []float64{jacobson.DefaultK}), fmt.Sprintf("K=%g", jacobson.DefaultK)
		case "phi-normal":
			f, d = qos.PhiNormalFamily(s.normal(), []float64{phi.DefaultThreshold}), fmt.Sprintf("Φ=%g n=%d minσ=μ/100", phi.DefaultThreshold, s.window)
		case "phi-akka":
			a := s.akka()
			f = qos.PhiAkkaFamily(a, []float64{phi.DefaultThreshold})
			d = fmt.Sprintf("Φ=%g pause=%v minσ=%v", phi.DefaultThreshold, *a.AcceptablePause, *a.MinStdDev)
		case "phi-cassandra":
			f, d = qos.PhiCassandraFamily(s.cassandra(), []float64{phi.DefaultThreshold}), fmt.Sprintf("Φ=%g cap=%v", phi.DefaultThreshold, 2*s.interval)
		case "chen":
			f, d = qos.ChenFamily(chen.Config{Estimator: s.chenEst()}, []time.Duration{s.interval}), fmt.Sprintf("α=%v n=%d", s.interval, s.window)
		case "bertier":
			f, d = qos.BertierFamily(s.bertier()), fmt.Sprintf("γ=%g β=%g φ=%g", bertier.DefaultGain, bertier.DefaultBeta, bertier.DefaultPhi)
		case "sfd":
			f, d = sfdTableFamily(s)
		case "2w-fd":
			f = qos.TwoWFDFamily(s.twowfd(), []time.Duration{s.interval})
			d = fmt.Sprintf("α=%v n1=%d n2=%d", s.interval, twowfd.DefaultShortWindowSize, s.window)
		case "satzger":
			f = qos.SatzgerFamily(s.satzger(), []float64{satzger.DefaultThreshold})
			d = fmt.Sprintf("θ=%g c=%g n=%d", satzger.DefaultThreshold, satzger.DefaultScale, s.window)
		case "kappa":
			f, d = qos.KappaFamily(s.kappa(), []float64{kappa.DefaultThreshold}), fmt.Sprintf("K=%g n=%d", kappa.DefaultThreshold, s.window)
		default:
			var err error
			if f, d, err = specTableFamily(s, n); err != nil {
				return nil, nil, err
			}
		}
		f.WarmUp = max(f.WarmUp, s.warmUp)
		fams = append(fams, f)
		desc = append(desc, d)
	}
	return fams, desc, nil
}

// span is a sweep range.
type span struct {
	lo, hi float64
	log    bool
}

// defaultSpans are the sweep ranges, in the family's unit (ms for durations),
// for a trace with nominal interval Δ (docs/algorithms.md, “Sweeping a
// parameter in one pass”).
func defaultSpans(interval time.Duration) map[string]span {
	d := ms(interval)
	return map[string]span{
		"fixed":         {d, 30 * d, true},
		"jacobson":      {0.5, 64, true},
		"phi-normal":    {0.5, 16, false},
		"phi-akka":      {0.5, 16, false},
		"phi-cassandra": {0.25, 16, true}, // t* ∝ Φ: log spacing puts points where TD is small
		"chen":          {d / 100, 20 * d, true},
		"sfd":           {d / 100, 20 * d, true},
		"2w-fd":         {d / 100, 20 * d, true},
		"satzger":       {0.5, 1, false},
		"kappa":         {0.5, 16, true},
	}
}

// parseRange parses NAME=LO:HI[:log|:lin]; durations may carry a unit
// (100ms, 2s), plain numbers are milliseconds for duration parameters.
func parseRange(arg string) (string, span, error) {
	name, rest, ok := strings.Cut(arg, "=")
	if !ok {
		return "", span{}, fmt.Errorf("--range %q: want NAME=LO:HI[:log]", arg)
	}
	low := strings.ToLower(strings.TrimSpace(name))
	canon, ok := detectorAliases[low]
	if !ok { // a range is per family: the presets' names stand for theirs
		canon, ok = map[string]string{"akka": "phi-akka", "hazelcast": "phi-akka", "cassandra": "phi-cassandra", "scylla": "phi-cassandra"}[low]
	}
	if !ok {
		return "", span{}, fmt.Errorf("--range %q: unknown detector %q (known: %s)", arg, name, strings.Join(detectorNames, ", "))
	}
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return "", span{}, fmt.Errorf("--range %q: want NAME=LO:HI[:log]", arg)
	}
	var sp span
	for i, dst := range []*float64{&sp.lo, &sp.hi} {
		v, unit, err := parseValue(parts[i])
		if err != nil {
			return "", span{}, fmt.Errorf("--range %q: %w", arg, err)
		}
		if unit && !isDuration(canon) {
			// Φ = 100ms was read as Φ = 100.
			return "", span{}, fmt.Errorf("--range %q: %s's parameter has no unit: got %s", arg, canon, strings.TrimSpace(parts[i]))
		}
		*dst = v
	}
	if len(parts) == 3 {
		switch parts[2] {
		case "log":
			sp.log = true
		case "lin", "linear":
		default:
			return "", span{}, fmt.Errorf("--range %q: spacing must be log or lin, got %q", arg, parts[2])
		}
	}
	return canon, sp, nil
}

// checkDomain rejects a sweep range that leaves the parameter's domain:
// T, Jacobson's K and the Akka and Cassandra thresholds must be positive,
// Chen's α and SFD's SM₁ non-negative, the normal φ threshold at least
// log10 2 (its crossing would precede the mean). Out-of-domain points used
// to fail one by one at replay time, dropping the curve with a warning.
func checkDomain(name string, sp span) error {
	var lo float64
	var strict bool
	var what string
	switch name {
	case "fixed":
		strict, what = true, "the timeout T must be positive"
	case "jacobson":
		strict, what = true, "K must be positive"
	case "phi-akka", "phi-cassandra":
		strict, what = true, "the threshold Φ must be positive"
	case "phi-normal":
		lo, what = math.Log10(2), "the threshold Φ must be at least log10 2 ≈ 0.301"
	case "chen", "sfd", "2w-fd":
		what = "the margin must not be negative"
	case "satzger":
		strict, what = true, "the threshold θ must be in (0, 1]"
		if sp.hi > 1 {
			return fmt.Errorf("upper bound %g out of range: %s", sp.hi, what)
		}
	case "kappa":
		strict, what = true, "the threshold K must be positive"
	case "bertier":
		return fmt.Errorf("bertier has no parameter to sweep")
	default:
		return nil
	}
	if sp.lo < lo || strict && sp.lo <= lo {
		return fmt.Errorf("lower bound %g out of range: %s", sp.lo, what)
	}
	// Durations in ms: beyond time.Duration they were clamped to 292
	// years without a word, several points to the same value.
	if longest := time.Duration(math.MaxInt64); isDuration(name) && sp.hi > ms(longest) {
		return fmt.Errorf("upper bound %g ms is beyond the longest duration (%v)", sp.hi, longest)
	}
	return nil
}

// isDuration reports whether the swept parameter of the detector is a
// duration (given in ms or with a unit).
func isDuration(name string) bool {
	return name == "fixed" || name == "chen" || name == "sfd" || name == "2w-fd"
}

// parseValue reads a range bound: a duration with a unit (returned in ms,
// unit true) or a plain number.
func parseValue(s string) (v float64, unit bool, err error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil && strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r == 'µ' }) >= 0 {
		return ms(d), true, nil
	}
	v, err = strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false, fmt.Errorf("bad value %q: want a number or a duration such as 250ms", s)
	}
	return v, false, nil
}

// sweptDetectors returns the entries of --detectors whose curves a run
// draws. A sweep entry ("chen alpha=10ms..1s") scopes the sweep to itself:
// the other entries are then swept only when --sweep says so or a --range
// names their family, and otherwise appear in the table alone. Without a
// sweep entry every entry is swept.
func sweptDetectors(o options) []string {
	isSweep := func(e string) bool { return strings.Contains(e, "..") }
	if o.sweepFlag || !slices.ContainsFunc(o.detectors, isSweep) {
		return o.detectors
	}
	var out []string
	for _, e := range o.detectors {
		if _, ranged := o.ranges[entryFamily(e)]; isSweep(e) || ranged {
			out = append(out, e)
		}
	}
	return out
}

// unsweptDetectors returns the entries of --detectors that
// sweptDetectors leaves out.
func unsweptDetectors(o options) []string {
	swept := sweptDetectors(o)
	var out []string
	for _, e := range o.detectors {
		if !slices.Contains(swept, e) {
			out = append(out, e)
		}
	}
	return out
}

// sweepFamilies returns the swept families for the selected detectors.
func sweepFamilies(s settings, names []string, points int, spans map[string]span) ([]qos.Family, error) {
	var fams []qos.Family
	for _, n := range names {
		if n == "bertier" {
			fams = append(fams, qos.BertierFamily(s.bertier()))
			continue
		}
		if isSpecEntry(n) {
			f, err := specSweepFamily(s, n, points, spans)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
			fams = append(fams, f)
			continue
		}
		sp := spans[n]
		vals, err := qos.Range(sp.lo, sp.hi, points, sp.log)
		if err != nil {
			return nil, fmt.Errorf("%s sweep: %w", n, err)
		}
		switch n {
		case "fixed":
			fams = append(fams, qos.FixedFamily(durations(vals)))
		case "jacobson":
			fams = append(fams, qos.JacobsonFamily(jacobson.Config{}, vals))
		case "phi-normal":
			fams = append(fams, qos.PhiNormalFamily(s.normal(), vals))
		case "phi-akka":
			fams = append(fams, qos.PhiAkkaFamily(s.akka(), vals))
		case "phi-cassandra":
			fams = append(fams, qos.PhiCassandraFamily(s.cassandra(), vals))
		case "chen":
			fams = append(fams, qos.ChenFamily(chen.Config{Estimator: s.chenEst()}, durations(vals)))
		case "sfd":
			fams = append(fams, qos.SFDFamily(s.sfdConfig(), durations(vals)))
		case "2w-fd":
			fams = append(fams, qos.TwoWFDFamily(s.twowfd(), durations(vals)))
		case "satzger":
			fams = append(fams, qos.SatzgerFamily(s.satzger(), vals))
		case "kappa":
			fams = append(fams, qos.KappaFamily(s.kappa(), vals))
		}
	}
	for i := range fams {
		fams[i].WarmUp = max(fams[i].WarmUp, s.warmUp)
	}
	return fams, nil
}

// durations converts parameter values in milliseconds to durations,
// saturating (detector.RoundNanos) rather than wrapping to a negative
// duration for a huge bound such as --range fixed=100:1e20.
func durations(msv []float64) []time.Duration {
	d := make([]time.Duration, len(msv))
	for i, v := range msv {
		d[i] = detector.RoundNanos(v * float64(time.Millisecond))
	}
	return d
}
