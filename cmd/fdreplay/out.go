package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fdkit/fdkit/internal/outfile"
	"github.com/fdkit/fdkit/qos"
)

// manifestName lists, in an --out directory, the files the last run wrote
// there (one name a line), so that the next run knows which files are
// earlier results: --force removes those it does not write again.
const manifestName = ".fdreplay-files"

// resultPatterns match the files fdreplay writes, for directories written
// before the manifest existed.
var resultPatterns = []string{"index.html", "table.csv", "table.json", "curves.csv", "curves.json",
	"*-mr-td.png", "*-mr-td.svg", "*-qap-td.png", "*-qap-td.svg"}

// outDir is an --out directory being written: results are staged (see
// package outfile) and moved in together by commit.
type outDir struct {
	dir     string
	staging *outfile.Staging
	earlier []string // files of an earlier run found in dir
	stale   []string // those of them the commit removed
}

// prepareOut creates the output directory, refuses one holding an earlier
// run's results unless force, and starts staging.
func prepareOut(dir string, force bool) (*outDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out %s: cannot create the directory: %w", dir, unwrapPath(err))
	}
	earlier, err := earlierResults(dir)
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w", dir, unwrapPath(err))
	}
	if len(earlier) > 0 && !force {
		names := make([]string, 0, 3)
		for _, p := range earlier[:min(3, len(earlier))] {
			names = append(names, filepath.Base(p))
		}
		more := ""
		if len(earlier) > 3 {
			more = fmt.Sprintf(" and %d more", len(earlier)-3)
		}
		return nil, usageErr("--out %s already holds results of an earlier run (%s%s): give --force to replace them (its files this run does not write are removed), or choose another directory",
			dir, strings.Join(names, ", "), more)
	}
	st, err := outfile.New(dir, "fdreplay")
	if err != nil {
		return nil, fmt.Errorf("--out %s: cannot write there: %w", dir, unwrapPath(err))
	}
	return &outDir{dir: dir, staging: st, earlier: earlier}, nil
}

// unwrapPath drops the *PathError's repetition of the path.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// earlierResults lists the files in dir that an earlier fdreplay run wrote:
// those its manifest names, and those matching resultPatterns.
func earlierResults(dir string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if f, err := os.Open(filepath.Join(dir, manifestName)); err == nil {
		sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
		for sc.Scan() {
			name := strings.TrimSpace(sc.Text())
			if name != "" && name == filepath.Base(name) && name != "." && name != ".." {
				add(filepath.Join(dir, name))
			}
		}
		f.Close()
		add(filepath.Join(dir, manifestName))
	}
	for _, pat := range resultPatterns {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		for _, p := range m {
			add(p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// commit writes the manifest, moves the staged files into the directory and
// removes the earlier run's files this run did not write. It returns the
// result files (the manifest left out).
func (o *outDir) commit() ([]string, error) {
	ents, err := os.ReadDir(o.staging.Dir())
	if err != nil {
		return nil, err
	}
	written := map[string]bool{manifestName: true}
	var names []string
	for _, e := range ents {
		written[e.Name()] = true
		names = append(names, e.Name())
	}
	err = o.staging.Write(manifestName, func(w io.Writer) error {
		_, err := io.WriteString(w, strings.Join(names, "\n")+"\n")
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, p := range o.earlier {
		if !written[filepath.Base(p)] {
			o.stale = append(o.stale, p)
		}
	}
	files, err := o.staging.Commit(o.stale)
	return slices.DeleteFunc(files, func(p string) bool { return filepath.Base(p) == manifestName }), err
}

// writeOutputs stages the tables, the curves and the plots of every stream.
func writeOutputs(st *outfile.Staging, table, curves []qos.Curve, titles map[string]string, stderr io.Writer) error {
	for _, w := range []struct {
		name string
		fn   func(io.Writer) error
	}{
		{"table.csv", func(w io.Writer) error { return qos.WriteCSV(w, table) }},
		{"table.json", func(w io.Writer) error { return qos.WriteJSON(w, table) }},
		{"curves.csv", func(w io.Writer) error { return qos.WriteCSV(w, curves) }},
		{"curves.json", func(w io.Writer) error { return qos.WriteJSON(w, curves) }},
	} {
		if err := st.Write(w.name, w.fn); err != nil {
			return err
		}
	}
	// Plots per stream.
	for start := 0; start < len(curves); {
		end := start
		for end < len(curves) && curves[end].Stream == curves[start].Stream {
			end++
		}
		name := curves[start].Stream
		safe := strings.Map(func(r rune) rune {
			if r == '/' || r == '\\' || r == ':' || r == ' ' {
				return '_'
			}
			return r
		}, name)
		title := titles[name]
		if title == "" {
			title = "sender " + name
		}
		p, err := qos.SavePlots(curves[start:end], st.Dir(), safe+"-", title)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(p, func(f string) bool { return strings.HasSuffix(f, "-mr-td.png") }) {
			// SavePlots skips a plot with nothing to draw; say so rather
			// than leave the user looking for the file. Without a mistake
			// there is no suspicion either (1 − QAP = 0).
			fmt.Fprintf(stderr, "fdreplay: note: no MR or 1 − QAP plot for sender %s: no swept point made a mistake (0 has no place on a log scale)\n", name)
		}
		start = end
	}
	return nil
}
