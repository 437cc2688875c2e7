package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeBrowser writes a shell script standing in for Chromium: on call k
// (1, 2, ...) it runs behaviour[k-1] (the last one repeats), after
// counting the call in the file calls.
func fakeBrowser(t *testing.T, behaviour ...string) (bin string, calls func() int) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake browser is a POSIX shell script")
	}
	dir := t.TempDir()
	count := filepath.Join(dir, "calls")
	var sb strings.Builder
	sb.WriteString("#!/bin/sh\nn=$(cat " + count + " 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > " + count + "\ncase $n in\n")
	for i, b := range behaviour {
		pat := strconv.Itoa(i + 1)
		if i == len(behaviour)-1 {
			pat = "*"
		}
		sb.WriteString(pat + ") " + b + " ;;\n")
	}
	sb.WriteString("esac\n")
	bin = filepath.Join(dir, "chromium")
	require.NoError(t, os.WriteFile(bin, []byte(sb.String()), 0o755))
	return bin, func() int {
		b, err := os.ReadFile(count)
		if err != nil {
			return 0
		}
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
}

func profiles(t *testing.T) func(int) string {
	dir := t.TempDir()
	return func(a int) string { return filepath.Join(dir, "profile"+strconv.Itoa(a)) }
}

// A browser that segfaults once is run again, and its second run counts.
func TestRunBrowserRetriesACrashOnce(t *testing.T) {
	for name, crash := range map[string]string{
		"killed by SIGSEGV":   "kill -SEGV $$",
		"wrapper exit 139":    "exit 139",
		"killed by SIGABRT":   "kill -ABRT $$",
		"wrapper exit 128+11": "exit $((128+11))",
	} {
		t.Run(name, func(t *testing.T) {
			bin, calls := fakeBrowser(t, crash, `echo '<body data-ready="1">'`)
			out, _, err := runBrowser(context.Background(), bin, nil, profiles(t))
			require.NoError(t, err)
			assert.Contains(t, out, `data-ready="1"`)
			assert.Equal(t, 2, calls())
		})
	}
}

// A browser that crashes twice fails the test, saying it crashed.
func TestRunBrowserCrashTwiceFails(t *testing.T) {
	bin, calls := fakeBrowser(t, "kill -SEGV $$")
	_, _, err := runBrowser(context.Background(), bin, nil, profiles(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "crashed on 2 attempts")
	assert.Equal(t, 2, calls())
}

// A browser that runs and fails (a bad flag, a page it cannot load) is not
// retried: only a crash of the process is.
func TestRunBrowserOrdinaryFailureNotRetried(t *testing.T) {
	bin, calls := fakeBrowser(t, "echo 'bad flag' >&2; exit 1")
	_, stderr, err := runBrowser(context.Background(), bin, nil, profiles(t))
	require.Error(t, err)
	assert.Contains(t, stderr, "bad flag")
	assert.NotContains(t, err.Error(), "crashed")
	assert.Equal(t, 1, calls())
}
