package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/spec"
)

// detectorNames lists the families of package spec's registry, in table
// order: a bare --detectors name is one of them or an alias.
var detectorNames = familyNames()

func familyNames() []string {
	var names []string
	for _, f := range spec.Algorithms() {
		names = append(names, f.Name)
	}
	return names
}

// familyAliases lists every family's aliases, for the help text.
func familyAliases() []string {
	var out []string
	for _, f := range spec.Algorithms() {
		out = append(out, f.Aliases...)
	}
	return out
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
}

// stream is what the registry's configuration of a family for the stream
// (spec.Algorithm.ForStream) depends on: every family runs at its package's
// defaults with the stream's Δ and window n, Akka's and Cassandra's
// settings for 1 s heartbeats scaled by Δ/1s, and SFD with the targets
// of settings and TD measured the way the replay measures it
// (docs/detectors.md lists each family's row). Every replayed stream is one
// incarnation of its sender (the input check splits a sender's records at
// its restarts), so the families with a restart rule run with it off
// unless the entry gives restart-jump (spec.Stream.Incarnation;
// docs/fdreplay.md).
func (s settings) stream() spec.Stream {
	return spec.Stream{Interval: s.interval, Window: s.window, Timeout: s.timeout,
		Targets: s.targets, SendTime: s.sync, OneWayDelay: s.delay, Incarnation: true}
}

// familySpec returns the family named (a family or alias) at fdreplay's
// defaults for the stream.
func familySpec(s settings, name string) (spec.Spec, error) {
	f, ok := spec.Lookup(name)
	if !ok {
		return spec.Spec{}, fmt.Errorf("unknown detector family %q", name)
	}
	return f.ForStream(s.stream()), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// tableFamilies returns, for each selected detector, a single-point family
// at its default setting, and a description of that setting.
func tableFamilies(s settings, names []string) ([]qos.Family, []string, error) {
	var fams []qos.Family
	var desc []string
	for _, n := range names {
		var f qos.Family
		var d string
		var err error
		if isSpecEntry(n) {
			f, d, err = specTableFamily(s, n)
		} else {
			f, d, err = familyTableRow(s, n)
		}
		if err != nil {
			return nil, nil, err
		}
		f.WarmUp = max(f.WarmUp, s.warmUp)
		fams = append(fams, f)
		desc = append(desc, d)
	}
	// A sweep entry's row is named by its spec ("chen" for "chen
	// alpha=10ms..1s"); where that name is another row's too (two ranges
	// of one family, or the sweep beside the bare family), it is named by
	// the whole entry, as its curve is (atk25's F6: two rows "chen").
	count := map[string]int{}
	for _, f := range fams {
		count[f.Name]++
	}
	for i, n := range names {
		if count[fams[i].Name] > 1 && isSpecEntry(n) && strings.Contains(n, "..") {
			fams[i].Name = n
		}
	}
	return fams, desc, nil
}

// familyTableRow is a bare family's table row: the family at fdreplay's
// defaults, its swept parameter at its effective value.
func familyTableRow(s settings, name string) (qos.Family, string, error) {
	base, err := familySpec(s, name)
	if err != nil {
		return qos.Family{}, "", err
	}
	f, err := base.Point()
	if err != nil {
		return qos.Family{}, "", err
	}
	f.Name = name
	return f, base.Brief(), nil
}

// span is a sweep range.
type span struct {
	lo, hi float64
	log    bool
}

// familySweep is the sweep of the spec's swept parameter over the range
// --range gives its family, else over the family's default range for a
// stream with nominal interval Δ (docs/algorithms.md, “Sweeping a parameter
// in one pass”).
func familySweep(base spec.Spec, ranges map[string]span, interval time.Duration) (spec.Sweep, error) {
	w, err := base.DefaultSweep(interval)
	if err != nil {
		return w, err
	}
	if sp, ok := ranges[base.Algorithm().Name]; ok {
		w.Lo, w.Hi, w.Log = sp.lo, sp.hi, sp.log
	}
	return w, nil
}

// checkRangesUsed refuses a --range (args, each parsed by parseRange
// already) that no entry of --detectors would sweep over: none is of its
// family, or each one of it gives its own range or setting (a sweep
// entry, or an entry setting the swept parameter, setsSwept). The range
// would be dropped without a word (user48's F28: --range phi=1:2 with -d
// chen, and --range chen=0:500ms beside -d 'chen alpha=10ms..1s').
func checkRangesUsed(args []string, entries []string) error {
	for _, a := range args {
		name, _, err := parseRange(a)
		if err != nil {
			return nil // parseRanges reported it
		}
		var own []string
		used := false
		for _, e := range entries {
			fam := entryFamily(e)
			if f, ok := spec.Lookup(fam); ok {
				fam = f.Name
			}
			if fam != name {
				continue
			}
			if strings.Contains(e, "..") || setsSwept(e) {
				own = append(own, e)
				continue
			}
			used = true
		}
		switch {
		case used:
		case len(own) == 0:
			return usageErr("--range %q: no detector of the run is %s (--detectors %s): add it there or drop the range", a, name, strings.Join(entries, ","))
		default:
			param := "PARAM"
			if f, ok := spec.Lookup(name); ok {
				if p, ok := f.SweptParam(); ok {
					param = p.Name
				}
			}
			return usageErr("--range %q: the %s entries give their own range or setting (%s), which the range would not change: drop it, or give the range in the entry (%s %s=LO..HI)", a, name, strings.Join(own, "; "), name, param)
		}
	}
	return nil
}

// rangeFamily returns the family a --range name stands for: a family, an
// alias, or a preset (a range is per family: a preset's name stands for
// its family's).
func rangeFamily(name string) (*spec.Algorithm, bool) {
	if strings.ContainsAny(name, "() ") {
		return nil, false
	}
	s, err := spec.Parse(name)
	if err != nil {
		return nil, false
	}
	return s.Algorithm(), true
}

// parseRange parses NAME=LO:HI[:log|:lin]; durations may carry a unit
// (100ms, 2s), plain numbers are milliseconds for duration parameters.
// Without a spacing the family's default sweep's applies (log-spaced for
// all but the normal and Akka φ's thresholds and Satzger's θ; linear from
// a LO of 0 or below), so
// that a range widened as the verdict advises keeps the default's density
// where it matters.
func parseRange(arg string) (string, span, error) {
	name, rest, ok := strings.Cut(arg, "=")
	if !ok {
		return "", span{}, fmt.Errorf("--range %q: want NAME=LO:HI[:log]", arg)
	}
	fam, ok := rangeFamily(strings.TrimSpace(name))
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
		if unit && !sweptIsDuration(fam) {
			// Φ = 100ms is refused, not read as Φ = 100.
			return "", span{}, fmt.Errorf("--range %q: %s's parameter has no unit: got %s", arg, fam.Name, strings.TrimSpace(parts[i]))
		}
		*dst = v
	}
	// The family's default spacing (docs/fdreplay.md's table), but linear
	// from a LO of 0 or below, where no geometric spacing starts.
	sp.log = fam.LogSpaced() && sp.lo > 0
	if len(parts) == 3 {
		switch parts[2] {
		case "log":
			sp.log = true
		case "lin", "linear":
			sp.log = false
		default:
			return "", span{}, fmt.Errorf("--range %q: spacing must be log or lin, got %q", arg, parts[2])
		}
	}
	return fam.Name, sp, nil
}

// checkDomain rejects a sweep range that leaves the domain of the family's
// swept parameter (spec.Algorithm.CheckRange): out-of-domain points would
// fail one by one at replay time, dropping the curve with a warning.
func checkDomain(name string, sp span) error {
	f, ok := spec.Lookup(name)
	if !ok {
		return nil
	}
	return f.CheckRange(sp.lo, sp.hi)
}

// sweptIsDuration reports whether the family's swept parameter is a
// duration (given in ms or with a unit).
func sweptIsDuration(f *spec.Algorithm) bool {
	p, ok := f.SweptParam()
	return ok && p.Kind == spec.Duration
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

// sweepFamilies returns the swept families for the selected detectors,
// over the --range ranges or the families' defaults.
func sweepFamilies(s settings, names []string, points int, ranges map[string]span) ([]qos.Family, error) {
	var fams []qos.Family
	for _, n := range names {
		var f qos.Family
		var err error
		if isSpecEntry(n) {
			f, err = specSweepFamily(s, n, points, ranges)
		} else {
			f, err = familySweepFamily(s, n, points, ranges)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		f.WarmUp = max(f.WarmUp, s.warmUp)
		fams = append(fams, f)
	}
	return fams, nil
}

// familySweepFamily is a bare family's sweep at fdreplay's defaults; a
// family without a swept parameter (bertier) is its single point.
func familySweepFamily(s settings, name string, points int, ranges map[string]span) (qos.Family, error) {
	base, err := familySpec(s, name)
	if err != nil {
		return qos.Family{}, err
	}
	var f qos.Family
	if base.Algorithm().Swept == "" {
		f, err = base.Point()
	} else {
		var w spec.Sweep
		if w, err = familySweep(base, ranges, s.interval); err == nil {
			f, err = w.Family(points)
		}
	}
	f.Name = name
	return f, err
}

// parseRanges reads the --range flags, one per detector.
func parseRanges(args []string) (map[string]span, error) {
	ranges := map[string]span{}
	for _, a := range args {
		name, sp, err := parseRange(a)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		if sp.hi < sp.lo {
			// Named as written: the values are in the family's unit
			// (milliseconds for a duration), which "1s:0" does not show.
			_, bounds, _ := strings.Cut(a, "=") // parseRange read it
			parts := strings.Split(bounds, ":")
			return nil, usageErr("--range %q: the upper bound %s is below the lower bound %s: give LO:HI", a, strings.TrimSpace(parts[1]), strings.TrimSpace(parts[0]))
		}
		if _, err := qos.Range(sp.lo, sp.hi, 2, sp.log); err != nil {
			return nil, usageErr("--range %q: %v", a, strings.TrimPrefix(err.Error(), "qos: "))
		}
		if sp.lo == sp.hi {
			// Every point would be the same setting, replayed again and
			// drawn as one.
			one := name
			if f, ok := spec.Lookup(name); ok {
				if p, ok := f.SweptParam(); ok {
					_, bounds, _ := strings.Cut(a, "=") // parseRange read it
					lo, _, _ := strings.Cut(bounds, ":")
					one = fmt.Sprintf("%s(%s=%s)", name, p.Name, strings.TrimSpace(lo))
				}
			}
			return nil, usageErr("--range %q: both bounds are the same value: a range needs LO < HI; for that one setting give -d '%s'", a, one)
		}
		if err := checkDomain(name, sp); err != nil {
			return nil, usageErr("--range %q: %v", a, err)
		}
		if _, dup := ranges[name]; dup {
			return nil, usageErr("--range %q: %s has a range already (give one --range per detector)", a, name)
		}
		ranges[name] = sp
	}
	return ranges, nil
}
