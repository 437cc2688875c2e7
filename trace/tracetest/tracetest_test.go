package tracetest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/trace/tracetest"
)

func TestSharedFindsAboveAndSkipsWhenAbsent(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "shared", "traces", "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "shared", "traces", "x", "t.txt"), nil, 0o644))
	deep := filepath.Join(root, "repo", "pkg")
	require.NoError(t, os.MkdirAll(deep, 0o755))
	t.Chdir(deep)
	assert.Equal(t, filepath.Join(root, "shared", "traces", "x", "t.txt"), tracetest.Shared(t, "x/t.txt"))

	skipped := true
	t.Run("absent", func(t *testing.T) {
		tracetest.Shared(t, "x/missing.txt")
		skipped = false
	})
	assert.True(t, skipped, "a missing trace skips the test")
}
