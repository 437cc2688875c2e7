package trace

import (
	"bytes"
	"fmt"
	"math"
	"time"
)

// Hand-written byte parsers: the hot path allocates nothing.

// isBlank reports whether c separates fields in whitespace-separated formats.
func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// allBlank reports whether line holds only blanks (or nothing): what
// len(bytes.Trim(line, " \t")) == 0 tells, without building a set of
// the cut characters and trimming both ends of every record's line.
func allBlank(line []byte) bool {
	for _, c := range line {
		if !isBlank(c) {
			return false
		}
	}
	return true
}

// nextField returns the next blank-separated field of p and the rest after
// it; field is empty when p holds only blanks.
func nextField(p []byte) (field, rest []byte) {
	i := 0
	for i < len(p) && isBlank(p[i]) {
		i++
	}
	j := i
	for j < len(p) && !isBlank(p[j]) {
		j++
	}
	return p[i:j], p[j:]
}

// parseUint parses a non-empty run of ASCII digits into a uint64. Up to 19
// significant digits cannot overflow, so only the 20th is checked.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	if len(b) > 20 {
		return 0, false
	}
	head := b
	if len(b) == 20 {
		head = b[:19]
	}
	var n uint64
	for _, c := range head {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + uint64(d)
	}
	if len(b) == 20 {
		d := uint64(b[19] - '0')
		if d > 9 || n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// parseInt parses an optionally signed decimal integer into an int64.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	u, ok := parseUint(b)
	if !ok {
		return 0, false
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// parseTime parses an integer count of unit into an exact Duration.
func parseTime(b []byte, unit time.Duration) (time.Duration, bool) {
	v, ok := parseInt(b)
	if !ok {
		return 0, false
	}
	if unit == time.Nanosecond {
		return time.Duration(v), true
	}
	if v > math.MaxInt64/int64(unit) || v < math.MinInt64/int64(unit) {
		return 0, false
	}
	return time.Duration(v) * unit, true
}

// parseDecimalTime parses "[-+]digits[.digits]" in unit (a power of ten
// nanoseconds) into a Duration, exactly: the integer part is scaled in integer
// arithmetic and the fraction rounded to the nearest nanosecond, half away
// from zero. At least one digit is required.
func parseDecimalTime(b []byte, unit time.Duration) (time.Duration, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	intPart, frac := b, []byte(nil)
	for i, c := range b {
		if c == '.' {
			intPart, frac = b[:i], b[i+1:]
			break
		}
	}
	if len(intPart) == 0 && len(frac) == 0 {
		return 0, false
	}
	var ip uint64
	if len(intPart) > 0 {
		var ok bool
		if ip, ok = parseUint(intPart); !ok {
			return 0, false
		}
	}
	u := uint64(unit)
	if ip > math.MaxInt64/u {
		return 0, false
	}
	total := ip * u
	// The fraction's first e digits are whole nanoseconds (unit = 10^e ns);
	// the next digit decides the rounding; the rest must be digits.
	var ns uint64
	e := 0
	for p := u; p > 1; p /= 10 {
		e++
	}
	for i, c := range frac {
		d := uint64(c - '0')
		if d > 9 {
			return 0, false
		}
		switch {
		case i < e:
			ns = ns*10 + d
		case i == e && d >= 5:
			ns++
		}
	}
	for i := len(frac); i < e; i++ {
		ns *= 10
	}
	if ns > math.MaxInt64-total {
		return 0, false
	}
	total += ns
	if neg {
		return -time.Duration(total), true
	}
	return time.Duration(total), true
}

// intTimeWant says what an integer time field in unit must be, for an
// error about v, which parseTime refused: an integer too large for a
// time.Duration is told the bound (user48's F17: "want integer s, got
// \"9223372136\"" for an integer in s), anything else the syntax, with
// orDash when "-" (absent) is allowed.
func intTimeWant(v []byte, unit time.Duration, orDash bool) string {
	b := v
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	want := "integer " + unitName(unit)
	if orDash {
		want += " or -"
	}
	if len(b) == 0 || bytes.IndexFunc(b, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return want
	}
	return tooLargeWant(unit)
}

// tooLargeWant says, for a well-formed time in unit that does not fit in a
// time.Duration, that it is too large and what fits (user48's F17: an
// integer in s was told "want integer s").
func tooLargeWant(unit time.Duration) string {
	u := unitName(unit)
	want := fmt.Sprintf("a time within ±%d %s (int64 nanoseconds, 292 years); this one is too large", int64(math.MaxInt64/unit), u)
	if unit > time.Nanosecond {
		want += ", or in a smaller unit than " + u
	}
	return want
}

// decimalWant says what a CSV time field in unit must be, for an error
// about v, which parseDecimalTime refused: a well-formed number that does
// not fit in a time.Duration (most likely a file in a smaller unit than
// the one given) is told its bound, anything else the syntax.
func decimalWant(v []byte, unit time.Duration) string {
	u := unitName(unit)
	b := v
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	digits := 0
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && bytes.IndexByte(b[i+1:], '.') < 0:
		default:
			return "decimal number of " + u
		}
	}
	if digits == 0 {
		return "decimal number of " + u
	}
	return tooLargeWant(unit)
}

// onlyBlanks reports whether p holds nothing but blanks.
func onlyBlanks(p []byte) bool {
	for _, c := range p {
		if !isBlank(c) {
			return false
		}
	}
	return true
}

// scanUint skips blanks, parses the following digits up to a blank or the
// end, and returns the value and the rest. ok is false when the field is
// empty, holds a non-digit or may overflow (more than 19 digits: the caller
// then takes the careful path).
func scanUint(p []byte) (v uint64, rest []byte, ok bool) {
	i := 0
	for i < len(p) && isBlank(p[i]) {
		i++
	}
	start := i
	for ; i < len(p); i++ {
		d := p[i] - '0'
		if d > 9 {
			if !isBlank(p[i]) {
				return 0, p, false
			}
			break
		}
		v = v*10 + uint64(d)
	}
	n := i - start
	return v, p[i:], n > 0 && n <= 19
}

// scanInt is scanUint with an optional sign, for int64 values (at most 18
// digits on the fast path).
func scanInt(p []byte) (v int64, rest []byte, ok bool) {
	i := 0
	for i < len(p) && isBlank(p[i]) {
		i++
	}
	neg := false
	if i < len(p) && (p[i] == '-' || p[i] == '+') {
		neg = p[i] == '-'
		i++
	}
	start := i
	for ; i < len(p); i++ {
		d := p[i] - '0'
		if d > 9 {
			if !isBlank(p[i]) {
				return 0, p, false
			}
			break
		}
		v = v*10 + int64(d)
	}
	n := i - start
	if neg {
		v = -v
	}
	return v, p[i:], n > 0 && n <= 18
}
