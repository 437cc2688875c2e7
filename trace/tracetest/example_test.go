package tracetest_test

import (
	"fmt"
	"path"
	"testing"

	"github.com/fdkit/fdkit/trace/tracetest"
)

// A test that needs the LIP6 excerpt asks Shared for its path; when the
// shared traces are absent, Shared skips the test with a message saying
// where they were looked for.
func ExampleShared() {
	test := func(t *testing.T) {
		p := tracetest.Shared(t, tracetest.LIP6Excerpt)
		_ = p // open it with trace.Open
	}
	_ = test // in a _test.go file: func TestOnLIP6(t *testing.T) { … }

	fmt.Println(path.Dir(tracetest.LIP6Excerpt))
	// Output: planetlab-lip6
}
