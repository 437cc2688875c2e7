package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fdkit/fdkit/internal/outfile"
	"github.com/fdkit/fdkit/qos/figure"
)

// manifestName lists, in an --out directory, the files the last run wrote
// there (one name a line). It is a record for the user and, being one of
// fdreplay's own files, marks the directory as holding results; its list
// never decides what --force removes (resultPatterns does), so an edited or
// forged list cannot make --force delete a file fdreplay does not write.
const manifestName = ".fdreplay-files"

// The names of the files fdreplay writes into --out (the plots are named by
// figure.FileNames). writeOutputs and run use these constants, and
// resultPatterns is derived from them, so the files written and the files
// --force may remove cannot drift apart.
const (
	indexName      = "index.html"
	tableCSVName   = "table.csv"
	tableJSONName  = "table.json"
	curvesCSVName  = "curves.csv"
	curvesJSONName = "curves.json"
	// verdictJSONName holds each stream's qos.Verdict: the operating
	// points, the comparisons and the in-sample and held-out figures.
	verdictJSONName = "verdict.json"
	// plotPrefixSep ends a stream's name in its plot files'
	// names ("<sender>-mr-td.png").
	plotPrefixSep = "-"
	// lockName is the lock file that keeps a second run out of the
	// directory while one writes there (outLock); it holds the run's PID.
	lockName = ".fdreplay-lock"
)

// resultPatterns returns the filepath.Match patterns of every file fdreplay
// writes into --out: the fixed names and the plots of any sender.
func resultPatterns() []string {
	return append([]string{indexName, tableCSVName, tableJSONName, curvesCSVName, curvesJSONName, verdictJSONName, manifestName},
		figure.FileNames("*"+plotPrefixSep)...)
}

// isResultName reports whether name (a base name) is one fdreplay writes.
func isResultName(name string) bool {
	return slices.ContainsFunc(resultPatterns(), func(pat string) bool {
		ok, err := filepath.Match(pat, name)
		return err == nil && ok
	})
}

// outDir is an --out directory being written: results are staged (see
// package outfile) and moved in together by commit.
type outDir struct {
	dir     string
	staging *outfile.Staging
	lock    *outLock // held until the commit ends, or the run fails
	earlier []string // files of an earlier run found in dir
	stale   []string // those of them the commit removed
}

// prepareOut creates the output directory, takes its lock (another run
// writing there is refused), refuses a directory where the run would
// replace one of the inputs (a trace or --config file) or, unless force,
// one holding an earlier run's results, and starts staging. The lock is
// held until commit ends or release.
func prepareOut(dir string, force bool, inputs []string) (od *outDir, err error) {
	lock, err := lockNewOut(dir, os.Mkdir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.release()
		}
	}()
	if err := inputInOut(dir, inputs); err != nil {
		return nil, err
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
	return &outDir{dir: dir, staging: st, lock: lock, earlier: earlier}, nil
}

// lockNewOut creates dir and its missing parents with mkdir (see mkdirOwn)
// and takes its lock. A directory made by another run can be removed by
// that run, failing, between the two (it removes the empty directories it
// made): the lock's file then cannot be created, and both are done again.
func lockNewOut(dir string, mkdir func(string, os.FileMode) error) (*outLock, error) {
	for try := 0; ; try++ {
		created, err := mkdirOwn(dir, mkdir)
		if err != nil {
			return nil, fmt.Errorf("--out %s: cannot create the directory: %w", dir, unwrapPath(err))
		}
		lock, err := lockOut(dir, created)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || try == 9 {
			return lock, err
		}
	}
}

// release gives up the staged files, if not committed, and the lock.
func (o *outDir) release() {
	o.staging.Abort()
	o.lock.release()
}

// inputInOut refuses an --out directory holding an input under a name
// the run writes or --force removes (any name resultPatterns matches, as
// a file, a link to one or another name for it): the commit would rename
// a result onto it, or remove it as an earlier run's file. It is checked
// with or without force, so that the refusal of an earlier run's files
// does not suggest a --force that would lose the input.
func inputInOut(dir string, inputs []string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("--out %s: %w", dir, unwrapPath(err))
	}
	for _, e := range ents {
		if !isResultName(e.Name()) && e.Name() != lockName {
			continue
		}
		p := filepath.Join(dir, e.Name())
		in := sameAsInput(p, inputs)
		switch {
		case in == "":
			continue
		case filepath.Clean(in) == p:
			return fmt.Errorf("--out %s: the input %s has the name of a file --out writes or replaces; move it out of %s or choose another directory", dir, in, dir)
		default:
			return fmt.Errorf("--out %s: %s, a file --out writes or replaces, is the input %s; move it out of %s or choose another directory", dir, p, in, dir)
		}
	}
	return nil
}

// unwrapPath drops the *PathError's repetition of the path.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// earlierResults lists the regular files in dir whose names match
// resultPatterns: the files an earlier fdreplay run wrote there. The
// manifest's contents are not consulted (see manifestName): every name it
// could rightly hold matches a pattern and is found by the scan anyway.
func earlierResults(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && isResultName(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
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
	o.lock.release()
	return slices.DeleteFunc(files, func(p string) bool { return filepath.Base(p) == manifestName }), err
}
