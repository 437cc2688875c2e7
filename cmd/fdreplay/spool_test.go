package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fdkit/fdkit/trace/tracetest"
	"github.com/stretchr/testify/require"
)

// An input larger than memHeartbeats is replayed from spools (temporary
// files) with the same table, curves and exports, byte for byte, as in
// memory: on the embedded trace and on LIP6 senders (arrival-based TD,
// reordered heartbeats).
func TestSpooledInputSameOutputs(t *testing.T) {
	cases := map[string][]string{"default": nil}
	if path := tracetest.Shared(t, tracetest.LIP6Excerpt); path != "" {
		cases["lip6"] = []string{path, "--sender", "4", "--sender", "7"}
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			outputs := func(limit int) (string, map[string][]byte) {
				defer func(m int) { memHeartbeats = m }(memHeartbeats)
				memHeartbeats = limit
				code, out, errOut := runCmd(append(append([]string{}, in...), "--points", "6", "--no-progress", "--force", "--out", dir)...)
				require.Equal(t, 0, code, errOut)
				files := map[string][]byte{}
				for _, f := range []string{"table.csv", "table.json", "curves.csv", "curves.json"} {
					b, err := os.ReadFile(filepath.Join(dir, f))
					require.NoError(t, err)
					files[f] = b
				}
				return out, files
			}
			memOut, memFiles := outputs(memHeartbeats)
			spOut, spFiles := outputs(100)
			require.Equal(t, memOut, spOut)
			for f, b := range memFiles {
				require.Equal(t, string(b), string(spFiles[f]), f)
			}
		})
	}
}
