package worked_test

import (
	"fmt"
	"strings"

	"github.com/fdkit/fdkit/internal/worked"
)

// A worked example is a table after a check marker; a test reads it by
// name and compares each printed number with the computed value.
func Example() {
	doc := `Chen's NFD-E on the common trace, n = 6:

<!-- check: chen -->
| α (ms) | τ_7 (ms) |
|---|---|
| 50 | 775.833333 |
`
	tabs, err := worked.Parse(strings.NewReader(doc))
	if err != nil {
		panic(err)
	}
	cell, _ := tabs["chen"].Cell(0, "τ_7 (ms)")
	fmt.Println(worked.Compare(cell, 700+155.0/6+50))
	fmt.Println(worked.Compare(cell, 775.834))
	// Output:
	// <nil>
	// printed 775.833333, computed 775.834
}
