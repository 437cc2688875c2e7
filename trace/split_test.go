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
