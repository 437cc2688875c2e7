package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
)

// startProfile starts a CPU profile of one run's measurement window when
// path is set (-cpuprofile), into path with -LIB-SCENARIO-RUN inserted
// before its extension (cpu.pprof: cpu-fdkit-steady-0.pprof), and returns
// the function that stops it and closes the file. With path empty both do
// nothing.
//
// hz above 100 raises the sampling rate (-cpuprofile-hz): an idle group
// uses a few milliseconds of CPU per second, which 100 samples per second
// of CPU time resolve poorly. runtime/pprof offers no rate, so the rate is
// set with runtime.SetCPUProfileRate first; pprof's own attempt to set 100
// then fails and the runtime prints "cannot set cpu profile rate until
// previous profile has finished" on stderr, which is expected.
func startProfile(path string, hz int, lib, scenario string, run int) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	name := profileName(path, lib, scenario, run)
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if hz > 100 {
		runtime.SetCPUProfileRate(hz)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("-cpuprofile %s: %w", name, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("-cpuprofile %s: %w", name, err)
		}
		return nil
	}, nil
}

// profileName inserts -lib-scenario-run before path's extension.
func profileName(path, lib, scenario string, run int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-%s-%s-%d%s", strings.TrimSuffix(path, ext), lib, scenario, run, ext)
}
