package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// multiSenderTrace returns an fdkit trace of n heartbeats from each of
// the senders p, q and r every 100 ms, interleaved, with one-way delays of
// 10 to 12 ms drawn from a fixed seed, every 50th heartbeat of q lost,
// r restarting halfway (its sequence numbers start again from 0: two
// incarnations, and a finding of the input check), and one heartbeat of z
// (too short to evaluate: dropped with a warning).
func multiSenderTrace(n int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n")
	b.WriteString("z 0 0 15000000\n")
	for k := range n {
		for _, s := range []string{"p", "q", "r"} {
			if s == "q" && k%50 == 49 {
				continue
			}
			sent := int64(k) * int64(100*time.Millisecond)
			d := int64(10*time.Millisecond) + rng.Int64N(int64(2*time.Millisecond))
			seq := k
			if s == "r" && k >= n/2 {
				seq = k - n/2
			}
			fmt.Fprintf(&b, "%s %d %d %d\n", s, seq, sent, sent+d)
		}
	}
	return b.String()
}

// The outputs of a run (stdout, stderr, the --out files and --report)
// are the same whatever the number of cores, from memory and from
// spools, PDFs but for their creation time.
func TestOutputsSameOnEveryCoreCount(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	path := writeFile(t, "t.fdk", multiSenderTrace(200))
	date := regexp.MustCompile(`/(Creation|Mod)Date \(D:\d+\)`)
	dir := t.TempDir()
	outputs := func(mem, procs int) map[string]string {
		runtime.GOMAXPROCS(procs)
		out := filepath.Join(dir, "out")
		rep := filepath.Join(dir, "report.html")
		code, stdout, stderr := runIn(withMem(mem), "-d", "chen,phi,fixed,sfd", "--points", "5", "--no-progress", "--force", "--out", out, "--report", rep, path)
		require.Equal(t, 0, code, stderr)
		got := map[string]string{"stdout": stdout, "stderr": stderr}
		ents, err := os.ReadDir(out)
		require.NoError(t, err)
		for _, e := range append(ents, nil) {
			p := rep
			if e != nil {
				p = filepath.Join(out, e.Name())
			}
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			got[filepath.Base(p)] = string(date.ReplaceAll(b, nil))
		}
		return got
	}
	want := outputs(defaultMemHeartbeats, 1)
	require.Contains(t, want["stderr"], `sender "r"`, "the sanity finding")
	require.Contains(t, want, "q-qap-td.png")
	require.Contains(t, want["stderr"], `warning: skipped`, "z dropped")
	for _, mem := range []int{defaultMemHeartbeats, 100} {
		got := outputs(mem, 2)
		require.Equal(t, len(want), len(got), "files with %d heartbeats in memory on 2 cores", mem)
		for name, w := range want {
			require.Equal(t, w, got[name], "%s with %d heartbeats in memory on 2 cores", name, mem)
		}
	}
}
