// Package tracetest helps tests find the real heartbeat traces that fdkit
// never copies into its repository: they live, read-only, in a shared/traces
// directory beside the checkout (../shared/traces from the repository root;
// see its SOURCES.md). Like net/http/httptest, it is for tests only.
package tracetest

import (
	"os"
	"path/filepath"
	"testing"
)

// LIP6Excerpt is the reception log of node 1 of the LIP6 PlanetLab traces
// (9 senders, 30,035 heartbeats), relative to shared/traces.
const LIP6Excerpt = "planetlab-lip6/recv_node1_excerpt.txt"

// Shared returns the path of rel (slash-separated, relative to
// shared/traces) found in the nearest shared/traces directory above the
// working directory (a package directory under go test). When there is none,
// or it lacks rel, it skips the test with a message saying what is missing.
func Shared(tb testing.TB, rel string) string {
	tb.Helper()
	start, err := os.Getwd()
	if err != nil {
		tb.Fatalf("tracetest: %v", err)
	}
	for dir := start; ; {
		p := filepath.Join(dir, "shared", "traces", filepath.FromSlash(rel))
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skipf("real trace shared/traces/%s not found above %s (the shared traces are absent): skipping", rel, start)
		}
		dir = parent
	}
}
