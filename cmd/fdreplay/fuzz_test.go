package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var leftOut = regexp.MustCompile(`left out (\d+) record\(s\)`)
var andMore = regexp.MustCompile(`\.\.\. and (\d+) more`)

// FuzzReplayInput replays any input given on standard input: fdreplay
// exits 0 or 1 (never a usage error, never a panic), and when it leaves
// records out it lists each of them with file:line (the first 20) or counts
// them in "... and N more".
func FuzzReplayInput(f *testing.F) {
	f.Add([]byte("4 0 0 3000000000 1\n4 1 100000000 3100000000 1\n4 2 200000000 3200000000 1\n4 3 300000000 3300000000 1\n4 4 400000000 3603400000000 1\n4 5 500000000 3500000000 1\n4 6 600000000 3600000000 1\n4 7 700000000 3700000000 1\n4 0 800000000 3800000000 1\n4 1 900000000 3900000000 1\n4 2 1000000000 4000000000 1\n4 3 1100000000 4100000000 1\n"))
	f.Add([]byte("#fdkit-trace version=1 interval=100ms unit=ms\nsender seq sent arrival\np 0 0 1\np 1 100 101\np 2 -5 -3\np 3 300 301\np 4 400 401\np 5 500 50"))
	f.Fuzz(func(t *testing.T, data []byte) {
		code, _, errOut := runIn(withStdin(bytes.NewReader(data)), "--no-progress", "-d", "fixed,chen", "--window", "4", "--warmup", "0", "--max-ratio", "50", "-")
		if code != 0 && code != 1 {
			t.Fatalf("exit code %d: %s", code, errOut)
		}
		if m := leftOut.FindStringSubmatch(errOut); m != nil {
			n, _ := strconv.Atoi(m[1])
			listed := strings.Count(errOut, "\n  <stdin>:")
			if mm := andMore.FindStringSubmatch(errOut); mm != nil {
				more, _ := strconv.Atoi(mm[1])
				listed += more
			}
			if listed != n {
				t.Fatalf("left out %d records but reported %d:\n%s", n, listed, errOut)
			}
		}
	})
}
