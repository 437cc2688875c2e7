package trace

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Numbers inside ids compare as numbers, however long; the rest byte by
// byte.
func TestCompareSenders(t *testing.T) {
	ordered := []string{"", "a", "a, sender p", "a, sender p0", "a, sender p1", "a, sender p02", "a, sender p2", "a, sender p2x", "a, sender p10", "a, sender p100", "a, sender q", "a10", "b"}
	for i := range ordered {
		for j := range ordered {
			assert.Equal(t, cmp.Compare(i, j), CompareSenders(ordered[i], ordered[j]), "%q %q", ordered[i], ordered[j])
		}
	}
	assert.Equal(t, -1, CompareSenders("p99999999999999999999998", "p99999999999999999999999"), "runs longer than a uint64")
	// atk25's F7: decimal ids beyond 2^64 sorted as text on stdout, in
	// CSV and JSON (123…890 before 2^64 before 99…9).
	ids := []string{"y", "10", "9", "123456789012345678901234567890", "99999999999999999999999999999", "18446744073709551616", "18446744073709551615", "7", "007", "x"}
	slices.SortFunc(ids, CompareSenders)
	assert.Equal(t, []string{"007", "7", "9", "10", "18446744073709551615", "18446744073709551616", "99999999999999999999999999999", "123456789012345678901234567890", "x", "y"}, ids)
}

// CompareSenders is a total order (the streams' order does not depend on
// the order they were found in): on every string of up to 4 bytes from
// "0", "1" and "a", it is 0 only for equal strings, antisymmetric and
// transitive.
func TestCompareSendersTotalOrder(t *testing.T) {
	var all []string
	var grow func(s string)
	grow = func(s string) {
		all = append(all, s)
		if len(s) == 4 {
			return
		}
		for _, c := range "01a" {
			grow(s + string(c))
		}
	}
	grow("")
	sorted := slices.Clone(all)
	slices.SortFunc(sorted, CompareSenders)
	rank := map[string]int{}
	for i, s := range sorted {
		rank[s] = i
	}
	for _, a := range all {
		for _, b := range all {
			if got, want := CompareSenders(a, b), cmp.Compare(rank[a], rank[b]); got != want {
				t.Fatalf("CompareSenders(%q, %q) = %d, but the sorted order puts them %d", a, b, got, want)
			}
		}
	}
}
