package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of a parameter's value.
type Kind int

// The kinds of parameter values.
const (
	Duration Kind = iota // a Go duration: 3s, 250ms, 0
	Int                  // a signed count
	Uint                 // an unsigned count (sequence-number jumps)
	Float                // a finite real number
	Bool                 // true or false
	Enum                 // one of Param.Choices
)

func (k Kind) expected() string {
	switch k {
	case Duration:
		return "a duration such as 3s, 250ms or 0"
	case Int:
		return "an integer"
	case Uint:
		return "a non-negative integer"
	case Float:
		return "a finite number"
	case Bool:
		return "true or false"
	}
	return "one of the listed names"
}

// Param describes one parameter of a family: its name in the textual form,
// the kind of its value, its unit and range, its default and where the
// default comes from, and the configuration field it sets. The rows of
// families.go write one Param literal per parameter; Kind is set by the
// accessor that ties it to its field (durPtr, intPlain, ...).
type Param struct {
	Name string
	// Aliases are earlier names of the parameter that specs and files may
	// still use; Name is the one fdkit prints.
	Aliases []string
	Kind    Kind
	Unit    string   // "" for dimensionless values
	Default string   // as documented, e.g. "3s" or "μ/100"
	Source  string   // where the default (or the parameter) comes from
	Doc     string   // one line
	Field   string   // the Go field it sets, e.g. AcceptablePause
	Choices []string // for Enum
	// Symbol is the parameter's symbol in the papers and in plots (Φ, α,
	// SM1), for the swept parameter; "" for the others.
	Symbol string
	// Window marks a window size (window, short-window): samples a
	// detector keeps, at most detector.MaxWindowSize.
	Window bool
	// Scaled marks a parameter whose value for a stream (Algorithm.ForStream)
	// is a system's default for 1 s heartbeats scaled by Δ/1s.
	Scaled bool
	// Min is the smallest valid value of a number (a duration in
	// nanoseconds); with MinOpen, values must exceed it.
	Min     float64
	MinOpen bool
	// Max is the largest valid value of a number; 0: no upper bound.
	Max float64
	// Sample is a valid value other than the default, which the tests
	// set alone to check that it prints and parses back.
	Sample string
}

// param is a Param with its accessors on a configuration (a pointer to the
// family's config struct, as any).
type param struct {
	Param
	get func(cfg any) (v any, set bool)
	set func(cfg any, v any)
}

// is reports whether name names p, by its name or an alias; as with family
// names, case does not matter.
func (p Param) is(name string) bool {
	if strings.EqualFold(p.Name, name) {
		return true
	}
	for _, a := range p.Aliases {
		if strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// RangeText describes the valid values of a number parameter ("> 0",
// "≥ 1 and ≤ 100000"), or is "" for a boolean or a choice.
func (p Param) RangeText() string {
	switch p.Kind {
	case Bool, Enum:
		return ""
	}
	f := func(x float64) string {
		if p.Kind == Duration {
			return time.Duration(x).String()
		}
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatFloat(x, 'f', -1, 64) // 1048576, not 1.048576e+06
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	lo := "≥ " + f(p.Min)
	if p.MinOpen {
		lo = "> " + f(p.Min)
	}
	if p.Max != 0 {
		return lo + " and ≤ " + f(p.Max)
	}
	return lo
}

// parseValue parses text as the parameter's value and checks its range.
func (p *param) parseValue(text string) (any, error) {
	text = strings.TrimSpace(text)
	bad := func(extra string) error {
		return fmt.Errorf("%s: %q is not %s%s", p.Name, text, p.Kind.expected(), extra)
	}
	var v any
	var num float64
	switch p.Kind {
	case Duration:
		d, err := time.ParseDuration(text)
		if err != nil {
			return nil, bad("")
		}
		v, num = d, float64(d)
	case Int:
		n, err := strconv.Atoi(text)
		if err != nil {
			return nil, bad("")
		}
		v, num = n, float64(n)
	case Uint:
		n, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			return nil, bad("")
		}
		v, num = n, float64(n)
	case Float:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, bad("")
		}
		v, num = f, f
	case Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, bad("")
		}
		return b, nil
	case Enum:
		for _, c := range p.Choices {
			if strings.EqualFold(text, c) {
				return c, nil
			}
		}
		return nil, fmt.Errorf("%s: %q is not one of %s", p.Name, text, strings.Join(p.Choices, ", "))
	}
	if num < p.Min || (num == p.Min && p.MinOpen) || (p.Max != 0 && num > p.Max) {
		return nil, fmt.Errorf("%s: %s is out of range (expected %s)", p.Name, text, p.RangeText())
	}
	return v, nil
}

// formatValue prints a value the way parseValue reads it.
func formatValue(v any) string {
	switch x := v.(type) {
	case time.Duration:
		return x.String()
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// asFloat returns a number parameter's value in qos sweep units: durations
// in milliseconds, other numbers as they are.
func asFloat(v any) float64 {
	switch x := v.(type) {
	case time.Duration:
		return float64(x) / float64(time.Millisecond)
	case int:
		return float64(x)
	case uint64:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

// fromFloat is asFloat's inverse for a parameter of kind k.
func fromFloat(k Kind, f float64) (any, error) {
	switch k {
	case Duration:
		ns := math.Round(f * float64(time.Millisecond))
		if !(math.Abs(ns) < math.MaxInt64) {
			return nil, fmt.Errorf("%g ms does not fit in a duration", f)
		}
		return time.Duration(ns), nil
	case Int:
		if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
			return nil, fmt.Errorf("%g is not an integer", f)
		}
		return int(f), nil
	case Uint:
		if f != math.Trunc(f) || f < 0 || f >= math.MaxUint64 {
			return nil, fmt.Errorf("%g is not a non-negative integer", f)
		}
		return uint64(f), nil
	case Float:
		return f, nil
	}
	return nil, fmt.Errorf("a %v parameter cannot be swept", k)
}

// The constructors below tie a parameter to a field of config type C. A
// pointer field is set when not nil; a plain field is set when not zero.

func durPtr[C any](p Param, f func(*C) **time.Duration) param {
	p.Kind = Duration
	return param{Param: p,
		get: func(c any) (any, bool) {
			if p := *f(c.(*C)); p != nil {
				return *p, true
			}
			return nil, false
		},
		set: func(c any, v any) { d := v.(time.Duration); *f(c.(*C)) = &d },
	}
}

func dur[C any](p Param, f func(*C) *time.Duration) param {
	p.Kind = Duration
	return param{Param: p,
		get: func(c any) (any, bool) { v := *f(c.(*C)); return v, v != 0 },
		set: func(c any, v any) { *f(c.(*C)) = v.(time.Duration) },
	}
}

func intPtr[C any](p Param, f func(*C) **int) param {
	p.Kind = Int
	return param{Param: p,
		get: func(c any) (any, bool) {
			if p := *f(c.(*C)); p != nil {
				return *p, true
			}
			return nil, false
		},
		set: func(c any, v any) { n := v.(int); *f(c.(*C)) = &n },
	}
}

func intPlain[C any](p Param, f func(*C) *int) param {
	p.Kind = Int
	return param{Param: p,
		get: func(c any) (any, bool) { v := *f(c.(*C)); return v, v != 0 },
		set: func(c any, v any) { *f(c.(*C)) = v.(int) },
	}
}

func uintPtr[C any](p Param, f func(*C) **uint64) param {
	p.Kind = Uint
	return param{Param: p,
		get: func(c any) (any, bool) {
			if p := *f(c.(*C)); p != nil {
				return *p, true
			}
			return nil, false
		},
		set: func(c any, v any) { n := v.(uint64); *f(c.(*C)) = &n },
	}
}

func floatPtr[C any](p Param, f func(*C) **float64) param {
	p.Kind = Float
	return param{Param: p,
		get: func(c any) (any, bool) {
			if p := *f(c.(*C)); p != nil {
				return *p, true
			}
			return nil, false
		},
		set: func(c any, v any) { x := v.(float64); *f(c.(*C)) = &x },
	}
}

func floatPlain[C any](p Param, f func(*C) *float64) param {
	p.Kind = Float
	return param{Param: p,
		get: func(c any) (any, bool) { v := *f(c.(*C)); return v, v != 0 },
		set: func(c any, v any) { *f(c.(*C)) = v.(float64) },
	}
}

func boolPlain[C any](p Param, f func(*C) *bool) param {
	p.Kind = Bool
	return param{Param: p,
		get: func(c any) (any, bool) { v := *f(c.(*C)); return v, v },
		set: func(c any, v any) { *f(c.(*C)) = v.(bool) },
	}
}

func boolPtr[C any](p Param, f func(*C) **bool) param {
	p.Kind = Bool
	return param{Param: p,
		get: func(c any) (any, bool) {
			if p := *f(c.(*C)); p != nil {
				return *p, true
			}
			return nil, false
		},
		set: func(c any, v any) { b := v.(bool); *f(c.(*C)) = &b },
	}
}

// enum ties a parameter to an integer-like field whose zero is the first
// of p.Choices (the default).
func enum[C any, E ~int](p Param, f func(*C) *E) param {
	p.Kind = Enum
	choices := p.Choices
	return param{Param: p,
		get: func(c any) (any, bool) {
			v := int(*f(c.(*C)))
			if v <= 0 || v >= len(choices) {
				return nil, false
			}
			return choices[v], true
		},
		set: func(c any, v any) {
			for i, ch := range choices {
				if ch == v.(string) {
					*f(c.(*C)) = E(i)
				}
			}
		},
	}
}
