package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEExample builds and runs the README's "Using fdkit from your own
// Go module" program as an outside module would (a module of its own whose
// go.mod replaces fdkit by this checkout), and compares its output with the
// results the README prints in its comments.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)## Using fdkit from your own Go module.*?```go\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, m, "README.md: no Go program under “Using fdkit from your own Go module”")
	src := string(m[1])

	// The expected output, from the program's comments: the value after
	// "// " on the Printf line, and the "// at ..." lines.
	var want []string
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "fmt.Printf(\"suspected after %v\\n\", tau) // "); i >= 0 {
			want = append(want, "suspected after "+strings.TrimPrefix(line[i:], "fmt.Printf(\"suspected after %v\\n\", tau) // "))
		}
		if strings.HasPrefix(line, "// at ") {
			want = append(want, strings.TrimPrefix(line, "// "))
		}
	}
	require.NotEmpty(t, want, "README.md: the program's comments give no expected output")

	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	mod := "module example.com/readme\n\ngo 1.26\n\nrequire github.com/fdkit/fdkit v0.0.0\n\nreplace github.com/fdkit/fdkit => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))

	cmd := exec.Command("go", "run", ".") // go test puts its own GOROOT/bin first on PATH
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "README.md's program does not build or run as written:\n%s", out)
	require.Equal(t, strings.Join(want, "\n")+"\n", string(out), "README.md's program prints something else than its comments say")
}
