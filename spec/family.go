package spec

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
)

// Algorithm is one failure-detector algorithm of the registry, a family in
// the textual form (chen, phi-akka, ...): its name, its parameters, and how
// to build a detector, a single-point qos.Family and a sweep of its main
// parameter from its configuration. (A qos.Family is something else: an
// algorithm's detectors over the values of one parameter.)
type Algorithm struct {
	Name    string
	Aliases []string
	Doc     string // one line, with the source
	// Swept is the parameter a sweep varies by default, whose one-pass
	// qos family (qos.PhiAkkaFamily, qos.ChenFamily, ...) is used when a
	// sweep names it; "" for a family without one (bertier).
	Swept string
	// Outages is the rule by which the family keeps an outage out of what
	// it learns (NoOutageRule for the families without one).
	Outages OutageRule
	// UsesTargets says the family tunes itself to the stream's QoS
	// targets (Stream.Targets), so a replay names them.
	UsesTargets bool

	params []param
	typ    reflect.Type // the config struct type
	build  func(cfg any) (detector.Detector, error)
	// sweep returns the one-pass qos family over values of Swept (in qos
	// units: milliseconds for durations).
	sweep func(cfg any, values []float64) qos.Family
	// point returns the effective value of Swept for cfg (its default
	// resolved), in qos units.
	point func(cfg any) float64
	// stream sets cfg for a replayed stream (ForStream).
	stream     func(cfg any, st Stream)
	sweepRange SweepRange
	brief      []string
}

// OutageRule is how a family leaves the interval of an outage out of its
// history, so that the outage does not raise its estimate of the next
// inter-arrival time.
type OutageRule int

const (
	// NoOutageRule: every interval is recorded.
	NoOutageRule OutageRule = iota
	// SkipSuspected: an interval that ends after τ is not recorded (Akka's
	// PhiAccrualFailureDetector: the first heartbeat after a suspicion is
	// left out of the history).
	SkipSuspected
	// SkipAboveMax: an interval above the max-interval parameter is not
	// recorded (Cassandra's fd_max_interval_ms).
	SkipAboveMax
)

// Params returns the family's parameters in their printing order.
func (f *Algorithm) Params() []Param {
	out := make([]Param, len(f.params))
	for i := range f.params {
		out[i] = f.params[i].Param
	}
	return out
}

// Param returns the family's parameter called name (or one of its
// aliases, in any case), if it has one.
func (f *Algorithm) Param(name string) (Param, bool) {
	if p := f.param(name); p != nil {
		return p.Param, true
	}
	return Param{}, false
}

func (f *Algorithm) param(name string) *param {
	for i := range f.params {
		if f.params[i].is(name) {
			return &f.params[i]
		}
	}
	return nil
}

func (f *Algorithm) paramNames() string {
	names := make([]string, len(f.params))
	for i := range f.params {
		names[i] = f.params[i].Name
	}
	return strings.Join(names, ", ")
}

var (
	families = map[string]*Algorithm{} // by name and alias
	byType   = map[reflect.Type]*Algorithm{}
	order    []*Algorithm
)

// Row is one family's entry in the registry, as families.go writes it: the
// family, its constructor, how its swept parameter is swept, and its
// parameters.
type Row[C any] struct {
	Algorithm
	// New builds a detector from a configuration (build(chen.New)).
	New func(C) (detector.Detector, error)
	// Sweep returns the qos family sweeping Algorithm.Swept over values, in
	// qos units (milliseconds for durations); nil for a family without a
	// swept parameter.
	Sweep func(C, []float64) qos.Family
	// Point returns the effective value of Algorithm.Swept for a
	// configuration (its default resolved), in qos units.
	Point func(C) float64
	// Range is the swept parameter's default range.
	Range SweepRange
	// ForStream returns the configuration for a replayed stream (see
	// Algorithm.ForStream); nil: the defaults.
	ForStream func(Stream) C
	// Brief names the parameters a table cell shows (Spec.Brief).
	Brief []string
	// Params are the parameters in their printing order.
	Params []param
}

// build adapts a package's constructor to Row.New.
func build[C any, D detector.Detector](f func(C) (D, error)) func(C) (detector.Detector, error) {
	return func(c C) (detector.Detector, error) {
		d, err := f(c)
		if err != nil {
			return nil, err // not a typed nil in an interface
		}
		return d, nil
	}
}

// define registers the family of row r with config type C: one call per
// family, in families.go.
func define[C any](r Row[C]) {
	f := r.Algorithm
	for i := range r.Params {
		// Windows are bounded by detector.MaxWindowSize: say so when
		// the spec is parsed rather than when the detector is built.
		if p := &r.Params[i]; p.Kind == Int && (p.Name == "window" || strings.HasSuffix(p.Name, "-window")) {
			p.Window = true
			if p.Max == 0 {
				p.Max = detector.MaxWindowSize
			}
		}
	}
	f.params = r.Params
	f.typ = reflect.TypeFor[C]()
	f.build = func(cfg any) (detector.Detector, error) { return r.New(*cfg.(*C)) }
	if r.Sweep != nil {
		f.sweep = func(cfg any, v []float64) qos.Family { return r.Sweep(*cfg.(*C), v) }
		f.point = func(cfg any) float64 { return r.Point(*cfg.(*C)) }
	}
	if r.ForStream != nil {
		f.stream = func(cfg any, st Stream) { *cfg.(*C) = r.ForStream(st) }
	}
	f.sweepRange, f.brief = r.Range, r.Brief
	register(&f)
}

// register adds a family to the registry, so that Parse, Format, LoadFile
// and the commands know it. It panics on a name, alias or config type
// already registered (a programming error). Families are added by one
// define call each, in families.go.
func register(f *Algorithm) {
	for _, n := range append([]string{f.Name}, f.Aliases...) {
		if _, dup := families[n]; dup {
			panic("spec: family name " + n + " registered twice")
		}
		if _, dup := presets[n]; dup {
			panic("spec: family name " + n + " is a preset")
		}
		families[n] = f
	}
	if _, dup := byType[f.typ]; dup {
		panic("spec: config type " + f.typ.String() + " registered twice")
	}
	byType[f.typ] = f
	order = append(order, f)
}

// Algorithms returns every registered family in registration order.
func Algorithms() []*Algorithm { return slices.Clone(order) }

// Lookup returns the family with the given name or alias.
func Lookup(name string) (*Algorithm, bool) {
	f, ok := families[strings.ToLower(name)]
	return f, ok
}

func knownNames() string {
	var names []string
	for _, f := range order {
		names = append(names, f.Name)
	}
	var ps []string
	for n := range presets {
		ps = append(ps, n)
	}
	sort.Strings(ps)
	return strings.Join(names, ", ") + "; presets: " + strings.Join(ps, ", ")
}

// Spec is a detector family with a configuration. The zero Spec is not
// usable; get one from Parse, Format's input or Algorithm.Spec.
type Spec struct {
	fam *Algorithm
	cfg any // *C, never shared with another Spec
	// noRestarts: built for a stream without sender restarts
	// (Stream.Incarnation): an unset restart-jump is built off, not at its
	// default, and printed unset (Effective).
	noRestarts bool
}

// Spec returns the family with its default configuration.
func (f *Algorithm) Spec() Spec { return Spec{fam: f, cfg: reflect.New(f.typ).Interface()} }

// Algorithm returns the spec's family.
func (s Spec) Algorithm() *Algorithm { return s.fam }

// Config returns a copy of the configuration, of the family's config type
// (phi.AkkaConfig, chen.Config, ...): the one its text names, which for a
// spec of a stream of one incarnation (Stream.Incarnation) leaves
// restart-jump unset; Effective().Config() is what New builds.
func (s Spec) Config() any { return reflect.ValueOf(s.cfg).Elem().Interface() }

func (s Spec) clone() Spec {
	c := reflect.New(s.fam.typ)
	c.Elem().Set(reflect.ValueOf(s.cfg).Elem())
	return Spec{fam: s.fam, cfg: c.Interface(), noRestarts: s.noRestarts}
}

// RestartJump names the parameter of the families with a restart rule: a
// sequence number more than it below the largest seen is a sender restart.
const RestartJump = "restart-jump"

// RestartsOff is the restart-jump that turns the restart rule off: no
// backwards jump exceeds it.
const RestartsOff = math.MaxUint64

// Effective returns the spec as it is built: for a spec of a stream
// without sender restarts (Stream.Incarnation) whose family has a restart
// rule and leaves restart-jump unset, the spec with restart-jump set to
// RestartsOff; else s. Its text names what a replay ran, where s's text is
// the live setting (which has the rule at its default).
func (s Spec) Effective() Spec {
	c := s.clone()
	c.noRestarts = false
	if !s.noRestarts {
		return c
	}
	if p := s.fam.param(RestartJump); p != nil {
		if _, set := p.get(c.cfg); !set {
			p.set(c.cfg, uint64(RestartsOff))
		}
	}
	return c
}

// built returns a copy of the configuration that building the spec uses
// (Effective's).
func (s Spec) built() any { return s.Effective().cfg }

// New builds the detector. Errors are those of the family's constructor
// (a combination of values it rejects), prefixed by the spec.
func (s Spec) New() (detector.Detector, error) {
	d, err := s.fam.build(s.built())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	return d, nil
}

// IsSet reports whether the parameter is set (not left at its default).
func (s Spec) IsSet(name string) bool {
	p := s.fam.param(name)
	if p == nil {
		return false
	}
	_, ok := p.get(s.cfg)
	return ok
}

// Value returns the parameter's value as printed, and whether it is set.
func (s Spec) Value(name string) (string, bool) {
	p := s.fam.param(name)
	if p == nil {
		return "", false
	}
	v, ok := p.get(s.cfg)
	if !ok {
		return "", false
	}
	return formatValue(v), true
}

// key is the name a parameter is known by in s's family, so that an alias
// and the name count as one key; an unknown name is returned lower-cased.
func (s Spec) key(name string) string {
	if p := s.fam.param(name); p != nil {
		return p.Name
	}
	return strings.ToLower(name)
}

// With returns a copy of s with the parameter set to the value written as
// text (as in the textual form). name may be the parameter's name or one of
// its aliases.
func (s Spec) With(name, text string) (Spec, error) {
	p := s.fam.param(name)
	if p == nil {
		return Spec{}, fmt.Errorf("%s has no parameter %q (its parameters: %s)", s.fam.Name, name, s.fam.paramNames())
	}
	v, err := p.parseValue(text)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", s.fam.Name, err)
	}
	c := s.clone()
	p.set(c.cfg, v)
	return c, nil
}

// String returns the textual form: the family name and, in parentheses,
// every parameter that is set, in the family's order.
func (s Spec) String() string {
	if s.fam == nil {
		return "<no detector>"
	}
	var parts []string
	for i := range s.fam.params {
		p := &s.fam.params[i]
		if v, ok := p.get(s.cfg); ok {
			parts = append(parts, p.Name+"="+formatValue(v))
		}
	}
	if len(parts) == 0 {
		return s.fam.Name
	}
	return s.fam.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Format returns the textual form of a configuration of a registered
// family (phi.AkkaConfig, *chen.Config, ...): printing a config gives its
// spec.
func Format(cfg any) (string, error) {
	s, err := FromConfig(cfg)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}

// FromConfig returns the Spec of a configuration of a registered family.
func FromConfig(cfg any) (Spec, error) {
	v := reflect.ValueOf(cfg)
	if !v.IsValid() {
		return Spec{}, fmt.Errorf("spec: no configuration (nil)")
	}
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	f, ok := byType[v.Type()]
	if !ok {
		return Spec{}, fmt.Errorf("spec: %T is not the configuration of a registered family", cfg)
	}
	s := f.Spec()
	reflect.ValueOf(s.cfg).Elem().Set(v)
	return s, nil
}

// Point returns a single-point qos family for the spec: its main parameter
// at its effective value (for a table row), named by the spec's text.
func (s Spec) Point() (qos.Family, error) {
	if s.fam.sweep == nil {
		return qos.Family{Name: s.String(), Values: []float64{0},
			New: func(float64) (detector.Detector, error) { return s.New() }}, nil
	}
	f := s.fam.sweep(s.built(), []float64{s.fam.point(s.cfg)})
	f.Name = s.String()
	return f, nil
}

// maxSpecLen bounds the text Parse accepts (a spec is one line).
const maxSpecLen = 4096

// Parse reads the textual form of a detector or preset. Errors name the
// parameter and say what was expected.
func Parse(text string) (Spec, error) {
	if len(text) > maxSpecLen {
		return Spec{}, fmt.Errorf("spec: %d bytes is too long for a detector spec (at most %d)", len(text), maxSpecLen)
	}
	t := strings.TrimSpace(text)
	if name, k, lo, ok := sweepShape(t); ok {
		return Spec{}, fmt.Errorf("spec %q is a sweep (a parameter's range); one setting is wanted here, e.g. %s(%s=%s)", text, name, k, lo)
	}
	name, args, hasArgs := t, "", false
	if i := strings.IndexByte(t, '('); i >= 0 {
		if !strings.HasSuffix(t, ")") {
			return Spec{}, fmt.Errorf("spec %q: missing the closing parenthesis after the parameters", text)
		}
		name, args, hasArgs = strings.TrimSpace(t[:i]), t[i+1:len(t)-1], true
		if strings.ContainsAny(args, "()") {
			return Spec{}, fmt.Errorf("spec %q: unbalanced parentheses (expected name(key=value, ...))", text)
		}
	} else if strings.ContainsRune(t, ')') {
		return Spec{}, fmt.Errorf("spec %q: ')' without '('", text)
	}
	if name == "" {
		return Spec{}, fmt.Errorf("spec %q: no detector name (known: %s)", text, knownNames())
	}
	s, err := base(name)
	if err != nil {
		return Spec{}, fmt.Errorf("spec %q: %w", text, err)
	}
	if !hasArgs || strings.TrimSpace(args) == "" {
		return s, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(args, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return Spec{}, fmt.Errorf("spec %q: %q is not key=value", text, strings.TrimSpace(kv))
		}
		if seen[s.key(k)] {
			return Spec{}, fmt.Errorf("spec %q: %s is given twice", text, k)
		}
		seen[s.key(k)] = true
		if s, err = s.With(k, v); err != nil {
			return Spec{}, fmt.Errorf("spec %q: %w", text, err)
		}
	}
	return s, nil
}

// base returns the spec a name stands for: a family with its defaults, or
// a preset.
func base(name string) (Spec, error) {
	if p, ok := presets[strings.ToLower(name)]; ok {
		return p.spec(), nil
	}
	if f, ok := Lookup(name); ok {
		return f.Spec(), nil
	}
	return Spec{}, fmt.Errorf("unknown detector %q (known: %s)", name, knownNames())
}

// sweepShape reports whether t is written as a sweep, "name(...) k=lo..hi"
// or "name k=lo..hi" (ParseSweep's form), and returns the detector's name,
// the swept key and the range's lower end, so that Parse can say that a
// sweep was given where one setting is wanted.
func sweepShape(t string) (name, key, lo string, ok bool) {
	cut := strings.LastIndexByte(t, ')') + 1
	if cut == 0 {
		if cut = strings.IndexAny(t, " \t"); cut < 0 {
			return "", "", "", false
		}
	}
	k, r, found := strings.Cut(strings.TrimSpace(t[cut:]), "=")
	lo, _, dots := strings.Cut(r, "..")
	k, lo = strings.TrimSpace(k), strings.TrimSpace(lo)
	if !found || !dots || k == "" || lo == "" || strings.ContainsAny(k, " \t") {
		return "", "", "", false
	}
	name, _, _ = strings.Cut(t[:cut], "(")
	return strings.TrimSpace(name), k, lo, true
}
