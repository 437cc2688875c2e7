// Package worked reads the worked examples of docs/algorithms.md so that
// tests can check them against the code.
//
// A worked example is a Markdown table preceded by a line
//
//	<!-- check: NAME -->
//
// (blank lines between the marker and the table are allowed). The table's
// first row is its header, the second its |---| separator; every further row
// is data. Tests look tables up by NAME, read cells by header, and compare a
// printed number with what the code computes to within half a unit of its
// last printed digit, so that the document shows readable roundings and the
// test still fails when a digit is wrong.
//
// The package is for tests only; it parses the document fdkit ships and
// reports a malformed table with its line number rather than guessing.
package worked

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Table is one worked example.
type Table struct {
	Name   string
	Line   int // line of the marker, 1-based
	Header []string
	Rows   [][]string
}

var marker = regexp.MustCompile(`^<!--\s*check:\s*([A-Za-z0-9_.-]+)\s*-->\s*$`)

// Read returns the worked examples of the Markdown document at path, by
// name. A name used twice, a marker not followed by a table, or a row whose
// cell count differs from the header's is an error naming the line.
func Read(path string) (map[string]*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tabs, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tabs, nil
}

// Parse is Read on an open document.
func Parse(r io.Reader) (map[string]*Table, error) {
	tabs := map[string]*Table{}
	sc := bufio.NewScanner(r)
	var cur *Table
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if m := marker.FindStringSubmatch(text); m != nil {
			if cur != nil && cur.Header == nil {
				return nil, fmt.Errorf("line %d: check %q has no table", cur.Line, cur.Name)
			}
			if prev, dup := tabs[m[1]]; dup {
				return nil, fmt.Errorf("line %d: check %q already used on line %d", line, m[1], prev.Line)
			}
			cur = &Table{Name: m[1], Line: line}
			tabs[cur.Name] = cur
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case text == "" && cur.Header == nil:
			// blank lines between the marker and the table
		case strings.HasPrefix(text, "|"):
			cells := split(text)
			switch {
			case cur.Header == nil:
				cur.Header = cells
			case isSeparator(cells):
			case len(cells) != len(cur.Header):
				return nil, fmt.Errorf("line %d: check %q: %d cells, header has %d", line, cur.Name, len(cells), len(cur.Header))
			default:
				cur.Rows = append(cur.Rows, cells)
			}
		case cur.Header == nil:
			return nil, fmt.Errorf("line %d: check %q is not followed by a table", cur.Line, cur.Name)
		default:
			cur = nil // the table ended
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil && cur.Header == nil {
		return nil, fmt.Errorf("line %d: check %q has no table", cur.Line, cur.Name)
	}
	return tabs, nil
}

func split(row string) []string {
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	cells := strings.Split(row, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

func isSeparator(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" {
			return false
		}
	}
	return true
}

// Col returns the index of the column whose header is name, or an error.
func (t *Table) Col(name string) (int, error) {
	for i, h := range t.Header {
		if h == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("check %q (line %d): no column %q in %q", t.Name, t.Line, name, t.Header)
}

// Cell returns the cell of row i in column name.
func (t *Table) Cell(i int, name string) (string, error) {
	c, err := t.Col(name)
	if err != nil {
		return "", err
	}
	if i < 0 || i >= len(t.Rows) {
		return "", fmt.Errorf("check %q (line %d): no row %d", t.Name, t.Line, i)
	}
	return t.Rows[i][c], nil
}

// Number parses a printed number: an optional sign (ASCII or U+2212), digits
// with an optional decimal point, an optional e-exponent, and an optional
// unit or percent sign after a space, which is dropped ("25 ms", "99.5 %").
// It returns the value and the tolerance its printing implies: half a unit
// of the last printed digit.
func Number(s string) (value, tol float64, err error) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "−", "-"))
	if i := strings.IndexByte(s, ' '); i >= 0 {
		s = s[:i]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		if exp, err = strconv.Atoi(s[i+1:]); err != nil {
			return 0, 0, fmt.Errorf("number %q: bad exponent", s)
		}
	}
	value, err = strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(value) || math.IsInf(value, 0) {
		return 0, 0, fmt.Errorf("%q is not a finite number", s)
	}
	decimals := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		decimals = len(mant) - i - 1
	}
	return value, 0.5 * math.Pow(10, float64(exp-decimals)), nil
}

// Compare reports whether got shows as the printed value want: |got − want|
// is at most half a unit of want's last digit (plus a relative 1e-12 for
// the float64 rounding of the decimal itself).
func Compare(want string, got float64) error {
	v, tol, err := Number(want)
	if err != nil {
		return err
	}
	if math.Abs(got-v) > tol+1e-12*math.Abs(v) || math.IsNaN(got) {
		return fmt.Errorf("printed %s, computed %s", want, strconv.FormatFloat(got, 'f', -1, 64))
	}
	return nil
}
