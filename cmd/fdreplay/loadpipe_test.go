package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The load's stages hand their errors on in file order: the run fails
// with the error a load on one goroutine meets first, whichever stage
// finds it, on any number of cores, and the stages stop. A receiver clock
// stepped back at line 1501 (found by the last stage, once the input
// check has passed the record on, eight records later) against a line
// that cannot be parsed (found by the first stage) after it or before it.
func TestLoadErrorsInFileOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	trace := func(badLine int) string {
		var b strings.Builder
		for i := range 3000 {
			if i+1 == badLine {
				b.WriteString("4 not a record\n")
				continue
			}
			at := int64(i) * int64(100*time.Millisecond)
			if i >= 1500 {
				at -= int64(time.Hour)
			}
			fmt.Fprintf(&b, "4 %d %d %d 14\n", i, int64(9e15)+int64(i)*int64(100*time.Millisecond), int64(5e16)+at)
		}
		return b.String()
	}
	const step = `:1501: sender "4": arrival 59m59.9s before the one at `
	for _, c := range []struct {
		badLine int
		want    string
	}{
		{1000, ":1000:"},
		{1505, ":1505:"}, // read before the input check passed line 1501 on
		{2000, step},
		{0, step},
	} {
		path := writeFile(t, "back.txt", trace(c.badLine))
		for _, procs := range []int{1, 2} {
			runtime.GOMAXPROCS(procs)
			before := runtime.NumGoroutine()
			code, _, errOut := runCmd("--no-progress", "-d", "fixed", path)
			assert.Equal(t, 1, code, errOut)
			assert.Contains(t, errOut, c.want, "bad line %d on %d cores", c.badLine, procs)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one error: %s", errOut)
			// Polled here: assert.Eventually's own goroutines would count.
			for deadline := time.Now().Add(time.Minute); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					buf := make([]byte, 1<<20)
					t.Fatalf("%d goroutines, %d before the run:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
				}
			}
		}
	}
}
