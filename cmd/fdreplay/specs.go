package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/spec"
)

// --detectors entries are either a bare family name (fixed, phi-akka, ...:
// the family at fdreplay's defaults for the trace's Δ and window, as
// before) or anything in the textual form of package spec: a family with
// parameters, a preset (akka, cassandra, scylla, hazelcast) or a sweep
// (spec key=lo..hi[:log]). Such entries are kept as their canonical text.

// splitTop splits a --detectors value at the commas that are not inside
// parentheses, so that "chen,phi-akka(threshold=10, pause=3s)" is two
// entries.
func splitTop(v string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range v {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, v[start:i])
				start = i + 1
			}
		}
	}
	return append(out, v[start:])
}

// isSpecEntry reports whether a --detectors entry is in the textual form
// (not a bare family name).
func isSpecEntry(e string) bool { return !slices.Contains(detectorNames, e) }

// parseSpecEntry checks a textual entry and returns its canonical text. A
// window in it (a value or a sweep's upper bound) is bounded like
// --window, by maxWindow.
func parseSpecEntry(e string) (string, error) {
	if strings.Contains(e, "..") {
		w, err := spec.ParseSweep(e)
		if err != nil {
			return "", err
		}
		if err := checkSpecWindows(w.Spec); err != nil {
			return "", fmt.Errorf("sweep %q: %w", e, err)
		}
		if p, ok := w.Spec.Algorithm().Param(w.Param); ok && p.Window && w.Hi > maxWindow {
			return "", fmt.Errorf("sweep %q: %s up to %s: %w", e, w.Param, strconv.FormatFloat(w.Hi, 'f', -1, 64), errWindowBound)
		}
		return w.String(), nil
	}
	s, err := spec.Parse(e)
	if err != nil {
		return "", err
	}
	if err := checkSpecWindows(s); err != nil {
		return "", fmt.Errorf("spec %q: %w", e, err)
	}
	return s.String(), nil
}

// errWindowBound says why a window over maxWindow is refused.
var errWindowBound = fmt.Errorf("over %d, the largest window fdreplay takes, in a spec as with --window (each detector and swept setting keeps n samples)", maxWindow)

// checkSpecWindows refuses a window parameter of s over maxWindow.
func checkSpecWindows(s spec.Spec) error {
	for _, p := range s.Algorithm().Params() {
		if !p.Window {
			continue
		}
		if v, set := s.Value(p.Name); set {
			if n, err := strconv.Atoi(v); err == nil && n > maxWindow {
				return fmt.Errorf("%s=%s: %w", p.Name, v, errWindowBound)
			}
		}
	}
	return nil
}

// specWindows lists the windows that textual entries set themselves
// ("chen(window=100000): window=100000"), which --window does not
// change, and reports whether other entries take their window from
// --window (a family name, or a spec that leaves a window unset).
func specWindows(entries []string) (own []string, others bool) {
	for _, e := range entries {
		if !isSpecEntry(e) {
			others = true
			continue
		}
		var s spec.Spec
		var swept string
		var hi float64
		if strings.Contains(e, "..") {
			w, err := spec.ParseSweep(e)
			if err != nil {
				continue
			}
			s, swept, hi = w.Spec, w.Param, w.Hi
		} else {
			var err error
			if s, err = spec.Parse(e); err != nil {
				continue
			}
		}
		var set []string
		unset := false
		for _, p := range s.Algorithm().Params() {
			if !p.Window {
				continue
			}
			switch v, ok := s.Value(p.Name); {
			case p.Name == swept:
				set = append(set, fmt.Sprintf("%s up to %s", p.Name, strconv.FormatFloat(hi, 'f', -1, 64)))
			case ok:
				set = append(set, p.Name+"="+v)
			case p.Name == "window": // the one --window fills in (ForStream)
				unset = true
			}
		}
		if len(set) > 0 {
			own = append(own, e+": "+strings.Join(set, ", "))
		}
		others = others || unset
	}
	return own, others
}

// resolved is a textual entry with fdreplay's defaults filled in.
type resolved struct {
	user   string    // the entry as given (canonical)
	spec   spec.Spec // the family with every fdreplay default the user left unset
	sweep  *spec.Sweep
	scaled []string // parameters filled with Akka's or Cassandra's defaults scaled by Δ
}

// resolve fills a textual entry's unset parameters with fdreplay's
// defaults for the stream. Parameters the entry sets (all of them for a
// preset) are kept as given. A sweep of restart-jump has it at the live
// default in its spec (the table row's setting).
func resolve(s settings, entry string) (resolved, error) {
	r := resolved{user: entry}
	var user spec.Spec
	if strings.Contains(entry, "..") {
		w, err := spec.ParseSweep(entry)
		if err != nil {
			return r, err
		}
		user, r.sweep = w.Spec, &w
	} else {
		var err error
		if user, err = spec.Parse(entry); err != nil {
			return r, err
		}
	}
	fam := user.Algorithm()
	base := fam.ForStream(s.stream())
	var err error
	for _, p := range fam.Params() {
		v, set := user.Value(p.Name)
		if !set {
			if p.Scaled {
				if sv, ok := base.Value(p.Name); ok {
					r.scaled = append(r.scaled, p.Name+" "+sv)
				}
			}
			continue
		}
		if base, err = base.With(p.Name, v); err != nil {
			return r, err
		}
	}
	if r.sweep != nil && r.sweep.Param == spec.RestartJump && !base.IsSet(spec.RestartJump) {
		// A sweep of restart-jump studies the restart rule itself: its
		// table row, the family's default setting, runs the rule at its
		// live default (the parameter's documented one, 100), not off as an
		// unset restart-jump replays on a stream of one incarnation
		// (spec.Stream.Incarnation), and its setting text names it.
		p, _ := fam.Param(spec.RestartJump)
		if base, err = base.With(spec.RestartJump, p.Default); err != nil {
			return r, err
		}
	}
	r.spec = base
	if r.sweep != nil {
		w := *r.sweep
		w.Spec = base
		r.sweep = &w
	}
	return r, nil
}

// specTableFamily is a textual entry's table row: the spec at the effective
// value of its main parameter (a sweep entry's row is its spec as given).
func specTableFamily(s settings, entry string) (qos.Family, string, error) {
	r, err := resolve(s, entry)
	if err != nil {
		return qos.Family{}, "", err
	}
	f, err := r.spec.Point()
	if err != nil {
		return qos.Family{}, "", err
	}
	f.Name = r.user
	setting := settingText(r.spec)
	if r.sweep != nil {
		f.Name = r.sweep.Spec.Algorithm().Name
		if u, err := spec.ParseSweep(r.user); err == nil {
			f.Name = u.Spec.String()
		}
		setting = sweepRowSetting(r, f)
	}
	return f, setting, nil
}

// sweepRowSetting is a sweep entry's table setting: its parameters, the
// swept parameter at the value the row uses, and the swept range
// ("window=100, alpha=100ms; swept alpha=10ms..300ms").
func sweepRowSetting(r resolved, row qos.Family) string {
	w, p := *r.sweep, r.sweep.Param
	v, ok := r.spec.Value(p)
	if !ok && p == r.spec.Algorithm().Swept && len(row.Values) == 1 {
		v, ok = strconv.FormatFloat(row.Values[0], 'g', 4, 64)+row.Unit, true
	}
	text := settingText(r.spec)
	if ok && !strings.Contains(","+strings.ReplaceAll(text, " ", "")+",", ","+p+"=") {
		if text == "defaults" {
			text = p + "=" + v
		} else {
			text += ", " + p + "=" + v
		}
	}
	return text + "; swept " + strings.TrimPrefix(w.String(), w.Spec.String()+" ")
}

// settingText is a spec's parameter list without the family name.
func settingText(s spec.Spec) string {
	t := s.String()
	if i := strings.IndexByte(t, '('); i >= 0 {
		return t[i+1 : len(t)-1]
	}
	return "defaults"
}

// specSweepFamily is a textual entry's sweep: its own range when it is a
// sweep, else its main parameter over the family's default range.
func specSweepFamily(s settings, entry string, points int, ranges map[string]span) (qos.Family, error) {
	r, err := resolve(s, entry)
	if err != nil {
		return qos.Family{}, err
	}
	var f qos.Family
	fam := r.spec.Algorithm()
	switch {
	case r.sweep != nil:
		f, err = r.sweep.Family(points)
	case fam.Swept == "" || setsSwept(entry):
		f, err = r.spec.Point()
	default:
		var w spec.Sweep
		if w, err = familySweep(r.spec, ranges, s.interval); err == nil {
			f, err = w.Family(points)
		}
	}
	if err != nil {
		return qos.Family{}, err
	}
	f.Name = r.user
	return f, nil
}

// setsSwept reports whether a textual entry in its family's own form
// (not a preset) gives the parameter its family's sweep varies: it names one
// setting, which is replayed alone, as a family without a swept parameter
// is, and not swept under the name of the value it fixed (user48's F22:
// jacobson(k=1e300) was drawn and tuned over k = 0.5..64, "K = 6.817
// meets"). A sweep is asked for with a range, "chen alpha=1ms..1s".
func setsSwept(entry string) bool {
	s, err := spec.Parse(entry)
	if err != nil {
		return false
	}
	fam := s.Algorithm()
	name, _, _ := strings.Cut(entry, "(")
	_, family := spec.Lookup(strings.TrimSpace(name))
	return family && fam.Swept != "" && s.IsSet(fam.Swept)
}

// scaledNotes says, for each entry, which parameters fdreplay filled with
// a system's defaults for 1 s heartbeats scaled by Δ (spec.Param.Scaled).
func scaledNotes(s settings, entries []string) []string {
	var notes []string
	for _, e := range entries {
		r, err := resolve(s, e)
		if err != nil || len(r.scaled) == 0 {
			continue
		}
		notes = append(notes, fmt.Sprintf("scaled by Δ/1s: %s: %s (not given; the system's defaults are for 1 s heartbeats)", e, strings.Join(r.scaled, ", ")))
	}
	return notes
}

// entryFamily returns the detector family of a --detectors entry.
func entryFamily(e string) string {
	if !isSpecEntry(e) {
		return e
	}
	if strings.Contains(e, "..") {
		if w, err := spec.ParseSweep(e); err == nil {
			return w.Spec.Algorithm().Name
		}
		return ""
	}
	if s, err := spec.Parse(e); err == nil {
		return s.Algorithm().Name
	}
	return ""
}

// sameDetector refuses two entries of the run (entries: --detectors and
// --config) that are one detector on the stream in: their settings, with
// fdreplay's defaults for the stream filled in (s), are equal though their
// texts differ ("chen(alpha=100ms)" and "chen" on a 100 ms stream, where
// α defaults to Δ): the detector would run twice, as two identical rows
// (user48's F10). Texts of one spec are refused when the flags are parsed
// (selectDetectors); this compares what runs, known once Δ is.
func sameDetector(s settings, entries []string, in *input) error {
	seen := make(map[string]string, len(entries))
	for _, e := range entries {
		key, err := resolvedKey(s, e)
		if err != nil {
			return nil // tableFamilies reports it
		}
		if first, ok := seen[key]; ok {
			return usageErr("--detectors: %s and %s are the same detector for sender %s (%s), whose Δ is %v: both run %s; name each detector once",
				first, e, displaySender(in), in.where(), s.interval, key)
		}
		seen[key] = e
	}
	return nil
}

// resolvedKey is what entry runs on a stream of settings s: its spec with
// fdreplay's defaults for the stream and its swept parameter at its
// effective value (unset, it is the package's default, which may depend
// on others: Chen's α is Δ), or its sweep when it sweeps; in either,
// canonical (the parameters left at a documented default written out,
// a sweep's varied parameter left out of its spec).
func resolvedKey(s settings, entry string) (string, error) {
	var sp spec.Spec
	var sweep *spec.Sweep
	if !isSpecEntry(entry) {
		var err error
		if sp, err = familySpec(s, entry); err != nil {
			return "", err
		}
	} else {
		r, err := resolve(s, entry)
		if err != nil {
			return "", err
		}
		sp, sweep = r.spec, r.sweep
	}
	varied := ""
	if sweep != nil {
		varied = sweep.Param
	}
	if name := sp.Algorithm().Swept; name != "" && name != varied && !sp.IsSet(name) {
		f, err := sp.Point()
		if err != nil {
			return "", err
		}
		if len(f.Values) == 1 {
			if set, err := sp.With(name, strconv.FormatFloat(f.Values[0], 'g', -1, 64)+f.Unit); err == nil {
				sp = set
			}
		}
	}
	// What runs: an unset restart-jump is off in a replay, so that "chen"
	// and "chen(restart-jump=100)" are two detectors.
	sp = canonical(sp.Effective(), varied, true)
	if sweep != nil {
		w := *sweep
		w.Spec = sp
		return w.String(), nil
	}
	return sp.String(), nil
}

// canonical returns sp without the parameter varied ("" for none): a
// sweep sets it at every point, so its value in the sweep's spec changes
// nothing the sweep replays (atk25's F6: "chen(alpha=100ms)
// alpha=10ms..1s" and "chen alpha=10ms..1s" ran twice). With defaults,
// every other parameter left unset whose documented default is a value
// (spec.Param.Default up to a parenthesis: "0.125", "0 (none)"; not a rule
// such as "Δ" or "the window size") is set to it: Spec.String lists the
// parameters set, so "jacobson" and "jacobson(gain=0.125)", one detector
// (0.125 is the default gain), had two texts and ran twice.
func canonical(sp spec.Spec, varied string, defaults bool) spec.Spec {
	fam := sp.Algorithm()
	out := fam.Spec()
	for _, p := range fam.Params() {
		if p.Name == varied {
			continue
		}
		v, ok := sp.Value(p.Name)
		if !ok && defaults {
			v, _, _ = strings.Cut(p.Default, " (")
			ok = true
		}
		if !ok {
			continue
		}
		if next, err := out.With(p.Name, v); err == nil {
			out = next
		}
	}
	return out
}

// sweepKey is the text by which the flags compare a sweep entry (text, in
// its canonical form) with the others: the sweep with its varied
// parameter left out of its spec (canonical), so that a value there, which
// the sweep overrides, does not make two texts of one sweep.
func sweepKey(text string) string {
	w, err := spec.ParseSweep(text)
	if err != nil {
		return text
	}
	w.Spec = canonical(w.Spec, w.Param, false)
	return w.String()
}
