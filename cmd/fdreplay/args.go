// Checks of the command line's arguments that pflag does not make (a long
// flag after one dash, a flag given twice, a trace given twice), and
// --version's text.

package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/pflag"
)

// checkSingleDash refuses an argument that spells one of fs's long flags
// after a single dash ("-out", "-points=5"), as Go's own flag package
// takes them: pflag reads it as shorthands ("-o ut"), which wrote to a
// directory "ut" or failed on "oints" (user48's F30). Arguments after
// "--" are traces.
func checkSingleDash(fs *pflag.FlagSet, args []string) error {
	for _, a := range args {
		if a == "--" {
			return nil
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if len(name) > 1 && fs.Lookup(name) != nil {
			return usageErr("%s: did you mean --%s? (a long flag takes two dashes; one dash starts shorthands)", a, name)
		}
	}
	return nil
}

// onceValued returns pflag's ParseAll callback that sets each flag and
// refuses a flag that takes one value given twice with two values ("--out
// res3 --out res4"), storing that error in *repeated: the last one won
// silently, and two is more likely a mistake than intent (user48's F11).
// The same value twice is harmless; the flags that add up (--detectors,
// --sender, --range) may repeat. pflag has parsed the argument, bundled
// shorthands and "=" forms included, so the values compared are the ones
// it sets.
func onceValued(fs *pflag.FlagSet, repeated *error) func(*pflag.Flag, string) error {
	seen := map[string]string{}
	return func(f *pflag.Flag, val string) error {
		switch f.Value.Type() {
		case "stringArray", "stringSlice":
		default:
			if prev, ok := seen[f.Name]; ok && prev != val {
				*repeated = usageErr("--%s given twice (%q, then %q): give it once", f.Name, prev, val)
				return *repeated
			}
			seen[f.Name] = val
		}
		return fs.Set(f.Name, val)
	}
}

// checkSameTraces refuses a trace file given twice, under one name or
// two (a link, a path through another directory): it would be replayed
// twice, as two streams of identical rows (user48's F14; a shell glob
// overlapping another, say). A file that cannot be read is left to the
// read to report.
func checkSameTraces(files []string) error {
	var seen []os.FileInfo
	var at []int
	for i, f := range files {
		if f == "-" {
			continue
		}
		fi, err := os.Stat(f)
		if err != nil {
			continue
		}
		for k, prev := range seen {
			if os.SameFile(prev, fi) {
				j := at[k]
				return usageErr("traces %d and %d are the same file (%s, %s): it would be replayed twice; give it once", j+1, i+1, files[j], f)
			}
		}
		seen, at = append(seen, fi), append(at, i)
	}
	return nil
}

// versionText is what --version prints: the main module's version and,
// when the build recorded them (go build in a checkout), the source
// revision, its time and whether the tree had uncommitted changes, and the
// Go version (runtime/debug.ReadBuildInfo).
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "fdreplay (no build information)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	text := "fdreplay " + bi.Main.Version
	if rev := settings["vcs.revision"]; rev != "" {
		text += ", revision " + rev
		if t := settings["vcs.time"]; t != "" {
			text += " of " + t
		}
		if settings["vcs.modified"] == "true" {
			text += ", with uncommitted changes"
		}
	}
	return fmt.Sprintf("%s, %s", text, bi.GoVersion)
}
