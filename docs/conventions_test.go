package docs

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// detectorPackages are the packages whose configurations share knobs.
var detectorPackages = []string{"detector", "jacobson", "phi", "chen", "bertier", "sfd", "twowfd", "satzger", "kappa"}

// packageFiles parses the Go files of the package in dir, its tests left
// out.
func packageFiles(t *testing.T, dir string) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
	}
	return files
}

// configFields returns, for each exported struct type named *Config in the
// package in dir, its fields' types as written ("*time.Duration"), keyed
// by "pkg.Type" and field name.
func configFields(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, f := range packageFiles(t, dir) {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() || !strings.HasSuffix(ts.Name.Name, "Config") {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			fields := map[string]string{}
			for _, fl := range st.Fields.List {
				var b bytes.Buffer
				require.NoError(t, printer.Fprint(&b, token.NewFileSet(), fl.Type))
				for _, id := range fl.Names {
					fields[id.Name] = b.String()
				}
			}
			out[f.Name.Name+"."+ts.Name.Name] = fields
			return false
		})
	}
	return out
}

// TestAPIConventions checks api-conventions.md against the code: every
// shared knob of its table has the stated type in every detector
// configuration that has a field of that name, and exactly the listed
// configurations have it; no exported type outside package main is named
// Options.
func TestAPIConventions(t *testing.T) {
	text, err := os.ReadFile("api-conventions.md")
	require.NoError(t, err)
	configs := map[string]map[string]string{}
	for _, p := range detectorPackages {
		for k, v := range configFields(t, filepath.Join("..", p)) {
			configs[k] = v
		}
	}
	require.Contains(t, configs, "phi.AkkaConfig", "the detector packages were not parsed")
	row := regexp.MustCompile(`(?m)^\| ([A-Z]\w*) \| (\S+) \| [^|]+ \| ([^|]+) \|$`)
	rows := row.FindAllStringSubmatch(string(text), -1)
	require.NotEmpty(t, rows, "api-conventions.md has no knob table")
	for _, r := range rows {
		field, typ := r[1], r[2]
		listed := map[string]bool{}
		for _, c := range strings.Split(r[3], ",") {
			c = strings.TrimSpace(c)
			listed[c] = true
			got, ok := configs[c][field]
			if assert.True(t, ok, "api-conventions.md lists %s.%s, which does not exist", c, field) {
				assert.Equal(t, typ, got, "%s.%s", c, field)
			}
		}
		for c, fields := range configs {
			if _, ok := fields[field]; ok {
				assert.True(t, listed[c], "%s has a field %s that api-conventions.md does not list", c, field)
			}
		}
	}
	assert.Empty(t, optionsTypes(t), "exported types named Options (api-conventions.md: the word is Config)")
}

// optionsTypes returns the exported types outside package main whose name
// ends in Options, as "dir.Name".
func optionsTypes(t *testing.T) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != ".." && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil || f.Name.Name == "main" {
			return err
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					n := s.(*ast.TypeSpec).Name
					if n.IsExported() && strings.HasSuffix(n.Name, "Options") {
						found = append(found, filepath.Dir(path)+"."+n.Name)
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return found
}
