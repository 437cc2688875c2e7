package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// updateDocs, when set in the environment, makes the docs tests rewrite
// the docs instead of failing: FDKIT_UPDATE_DOCS=1 go test -run TestDocs
// ./cmd/fdreplay.
const updateDocs = "FDKIT_UPDATE_DOCS"

// outputBlock is a block of the docs that shows a command's output: the
// line "<!-- output of: fdreplay ARGS -->" right before a ``` block.
var outputBlock = regexp.MustCompile("(?m)^<!-- output of: fdreplay([^>]*) -->\n```\n((?s:.*?))```\n")

// The docs' tables are fdreplay's current output: the README's and
// docs/fdreplay.md's first table showed 8 detectors where the output has
// 11.
func TestDocsShowCurrentOutput(t *testing.T) {
	blocks := 0
	for _, doc := range []string{"../../README.md", "../../docs/fdreplay.md"} {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		changed := false
		b = outputBlock.ReplaceAllFunc(b, func(m []byte) []byte {
			blocks++
			sub := outputBlock.FindSubmatch(m)
			args := strings.Fields(string(sub[1]))
			code, out, errOut := runCmd(append([]string{"--no-progress"}, args...)...)
			require.Equal(t, 0, code, errOut)
			if out == string(sub[2]) {
				return m
			}
			if os.Getenv(updateDocs) == "" {
				t.Errorf("%s: the output of fdreplay%s has changed; run %s=1 go test -run TestDocs ./cmd/fdreplay and review the diff", doc, sub[1], updateDocs)
				return m
			}
			changed = true
			return bytes.Replace(m, sub[2], []byte(out), 1)
		})
		if changed {
			require.NoError(t, os.WriteFile(doc, b, 0o644))
		}
	}
	assert.GreaterOrEqual(t, blocks, 2, "the README's and docs/fdreplay.md's tables")
}

// The MR figure of the README and docs/fdreplay.md is the one `fdreplay
// --out` draws today (docs/img/fdreplay-mr-td.png is not left stale). Drawing it
// sweeps every detector: not with -short.
func TestDocsFigureCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps every detector on the default trace")
	}
	dir := t.TempDir()
	code, _, errOut := runCmd("--no-progress", "--out", dir)
	require.Equal(t, 0, code, errOut)
	got, err := os.ReadFile(filepath.Join(dir, "p-mr-td.png"))
	require.NoError(t, err)
	const doc = "../../docs/img/fdreplay-mr-td.png"
	want, err := os.ReadFile(doc)
	require.NoError(t, err)
	if bytes.Equal(got, want) {
		return
	}
	if os.Getenv(updateDocs) == "" {
		t.Fatalf("%s is not what fdreplay --out draws today; run %s=1 go test -run TestDocs ./cmd/fdreplay", doc, updateDocs)
	}
	require.NoError(t, os.WriteFile(doc, got, 0o644))
}
