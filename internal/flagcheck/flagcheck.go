// Package flagcheck gives the fdkit commands numeric pflag values that refuse,
// while the command line is parsed, what their flag cannot mean: NaN, ±Inf,
// unparsable text and anything outside a stated range. pflag wraps the error
// as `invalid argument "X" for "--name" flag: want ...`, so the message names
// the flag as the user typed it, and an invalid value never falls back to a
// default (docs/fdreplay.md, "Flags").
package flagcheck

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// checked is a numeric flag value accepting only finite values in [lo, hi].
// want says what is accepted, in words ("a fraction in [0, 1)"), and is the
// text of every error.
type checked[T int | time.Duration | float64] struct {
	p      *T
	lo, hi T
	want   string
}

func (c *checked[T]) Set(s string) error {
	var v T
	switch p := any(&v).(type) {
	case *int:
		n, err := strconv.ParseInt(s, 0, strconv.IntSize)
		if err != nil {
			return fmt.Errorf("want %s", c.want)
		}
		*p = int(n)
	case *time.Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("want %s, as a duration with a unit (e.g. 250ms)", c.want)
		}
		*p = d
	case *float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("want %s", c.want)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("not a finite number: want %s", c.want)
		}
		*p = x
	}
	if v < c.lo || v > c.hi {
		return fmt.Errorf("want %s", c.want)
	}
	*c.p = v
	return nil
}

// String gives the value for pflag's help; "0" for zero, which pflag then
// leaves out of "(default ...)".
func (c *checked[T]) String() string {
	if c.p == nil || *c.p == 0 {
		return "0"
	}
	switch v := any(*c.p).(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

func (c *checked[T]) Type() string {
	switch any(*new(T)).(type) {
	case int:
		return "int"
	case time.Duration:
		return "duration"
	default:
		return "float"
	}
}

// Var defines flag --name (shorthand short, "" for none) with default def
// stored in p, accepting only finite values in [lo, hi]; want says in words
// what is accepted and usage is the help text.
func Var[T int | time.Duration | float64](fs *pflag.FlagSet, p *T, name, short string, def, lo, hi T, want, usage string) {
	*p = def
	fs.VarP(&checked[T]{p: p, lo: lo, hi: hi, want: want}, name, short, usage)
}
