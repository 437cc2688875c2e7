package trace

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedTraces returns the path of the read-only shared/traces directory,
// found by walking up from the package directory, or skips the test.
func sharedTraces(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", "traces")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("shared/traces not found in any parent directory (expected ../../shared/traces from trace/): skipping the real-trace test")
		}
		dir = parent
	}
}
