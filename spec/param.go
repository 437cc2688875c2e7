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
// the kind of its value, its unit, its default and where the default comes
// from, and the configuration field it sets.
type Param struct {
	Name    string
	Kind    Kind
	Unit    string   // "" for dimensionless values
	Default string   // as documented, e.g. "3s" or "μ/100"
	Source  string   // where the default (or the parameter) comes from
	Doc     string   // one line
	Field   string   // the Go field it sets, e.g. AcceptablePause
	Choices []string // for Enum
}

// param is a Param with its accessors on a configuration (a pointer to the
// family's config struct, as any).
type param struct {
	Param
	min    float64 // smallest valid value for numbers (durations in ns)
	minOK  bool    // min itself is valid (else values must exceed it)
	max    float64 // largest valid value, when hasMax
	hasMax bool
	sample string // a valid non-default value, for tests
	get    func(cfg any) (v any, set bool)
	set    func(cfg any, v any)
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
	if num < p.min || (num == p.min && !p.minOK) || (p.hasMax && num > p.max) {
		return nil, fmt.Errorf("%s: %s is out of range (expected %s)", p.Name, text, p.rangeText())
	}
	return v, nil
}

func (p *param) rangeText() string {
	f := func(x float64) string {
		if p.Kind == Duration {
			return time.Duration(x).String()
		}
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatFloat(x, 'f', -1, 64) // 1048576, not 1.048576e+06
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	lo := "≥ " + f(p.min)
	if !p.minOK {
		lo = "> " + f(p.min)
	}
	if p.hasMax {
		return lo + " and ≤ " + f(p.max)
	}
	return lo
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

type meta struct {
	name, unit, def, source, doc, field string
	sample                              string
}

func durPtr[C any](m meta, min float64, minOK bool, f func(*C) **time.Duration) param {
	return param{Param: m.param(Duration), min: min, minOK: minOK, sample: m.sample,
		get: func(c any) (any, bool) {
			if p := *f(c.(*C)); p != nil {
				return *p, true
			}
			return nil, false
		},
		set: func(c any, v any) { d := v.(time.Duration); *f(c.(*C)) = &d },
	}
}

func dur[C any](m meta, min float64, minOK bool, f func(*C) *time.Duration) param {
	return param{Param: m.param(Duration), min: min, minOK: minOK, sample: m.sample,
		get: func(c any) (any, bool) { v := *f(c.(*C)); return v, v != 0 },
		set: func(c any, v any) { *f(c.(*C)) = v.(time.Duration) },
	}
}

func intPtr[C any](m meta, min float64, f func(*C) **int) param {
	return param{Param: m.param(Int), min: min, minOK: true, sample: m.sample,
		get: func(c any) (any, bool) {
			if p := *f(c.(*C)); p != nil {
				return *p, true
			}
			return nil, false
		},
		set: func(c any, v any) { n := v.(int); *f(c.(*C)) = &n },
	}
}

func intPlain[C any](m meta, min float64, f func(*C) *int) param {
	return param{Param: m.param(Int), min: min, minOK: true, sample: m.sample,
		get: func(c any) (any, bool) { v := *f(c.(*C)); return v, v != 0 },
		set: func(c any, v any) { *f(c.(*C)) = v.(int) },
	}
}

func uintPtr[C any](m meta, f func(*C) **uint64) param {
	return param{Param: m.param(Uint), sample: m.sample, minOK: true,
		get: func(c any) (any, bool) {
			if p := *f(c.(*C)); p != nil {
				return *p, true
			}
			return nil, false
		},
		set: func(c any, v any) { n := v.(uint64); *f(c.(*C)) = &n },
	}
}

func floatPtr[C any](m meta, min float64, minOK bool, f func(*C) **float64) param {
	return param{Param: m.param(Float), min: min, minOK: minOK, sample: m.sample,
		get: func(c any) (any, bool) {
			if p := *f(c.(*C)); p != nil {
				return *p, true
			}
			return nil, false
		},
		set: func(c any, v any) { x := v.(float64); *f(c.(*C)) = &x },
	}
}

func floatPlain[C any](m meta, min float64, minOK bool, f func(*C) *float64) param {
	return param{Param: m.param(Float), min: min, minOK: minOK, sample: m.sample,
		get: func(c any) (any, bool) { v := *f(c.(*C)); return v, v != 0 },
		set: func(c any, v any) { *f(c.(*C)) = v.(float64) },
	}
}

func boolPlain[C any](m meta, f func(*C) *bool) param {
	return param{Param: m.param(Bool), sample: m.sample,
		get: func(c any) (any, bool) { v := *f(c.(*C)); return v, v },
		set: func(c any, v any) { *f(c.(*C)) = v.(bool) },
	}
}

func boolPtr[C any](m meta, f func(*C) **bool) param {
	return param{Param: m.param(Bool), sample: m.sample,
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
// choice (the default).
func enum[C any, E ~int](m meta, choices []string, f func(*C) *E) param {
	p := m.param(Enum)
	p.Choices = choices
	return param{Param: p, sample: m.sample,
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

func (m meta) param(k Kind) Param {
	return Param{Name: m.name, Kind: k, Unit: m.unit, Default: m.def, Source: m.source, Doc: m.doc, Field: m.field}
}

// atMost bounds a number parameter from above.
func atMost(p param, max float64) param {
	p.max, p.hasMax = max, true
	return p
}
