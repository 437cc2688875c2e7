package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headings returns the titles of the headings (any level) of the Markdown
// file name in this directory.
func headings(t *testing.T, name string) map[string]bool {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	h := map[string]bool{}
	sc := bufio.NewScanner(f)
	fence := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(line, "#") {
			h[strings.TrimSpace(strings.TrimLeft(line, "#"))] = true
		}
	}
	require.NoError(t, sc.Err())
	return h
}

// citation matches `docs/algorithms.md, “Title”` (or experiments.md) and
// the titles joined to
// it by "and" (`“A” and “B”`), across comment line breaks.
var (
	citation = regexp.MustCompile(`(algorithms|experiments)\.md(?:,| from)\s+“[^”]+”(?:\s+and\s+“[^”]+”)*`)
	title    = regexp.MustCompile(`“([^”]+)”`)
	comment  = regexp.MustCompile(`\n\s*(?://|\*)?\s*`)
)

// pending are sections that code already cites and that the helpers adding
// the code are writing now; a citation of one of them is reported, not
// failed, until the section exists. Remove an entry when its section lands.
var pending = map[string]bool{}

// TestCitedSectionsExist checks that every section of docs/algorithms.md
// and docs/experiments.md
// that a Go file or a Markdown page of the repository cites by title exists,
// and that nothing cites the reference that lived outside the repository.
func TestCitedSectionsExist(t *testing.T) {
	h := map[string]map[string]bool{
		"algorithms":  headings(t, "algorithms.md"),
		"experiments": headings(t, "experiments.md"),
	}
	cited := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() == "cite_test.go" || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := comment.ReplaceAllString(string(b), " ")
		assert.NotContains(t, text, "ALGORITHMS"+".md", "%s cites a file outside the repository", path)
		for _, c := range citation.FindAllStringSubmatch(text, -1) {
			doc := c[1]
			for _, m := range title.FindAllStringSubmatch(c[0], -1) {
				cited++
				if !h[doc][m[1]] && pending[m[1]] {
					t.Logf("%s cites docs/%s.md, “%s”, still being written", path, doc, m[1])
					continue
				}
				assert.True(t, h[doc][m[1]], "%s cites docs/%s.md, “%s”, which has no such heading", path, doc, m[1])
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, cited, 100, "the walk found too few citations to be looking at the repository")
}
