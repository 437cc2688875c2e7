package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lateTrace is docs/experiments.md's r-late.fdk and r-drop.fdk by hand:
// 3000 heartbeats at Δ = 100 ms, each 10 ms in the network, but heartbeat
// 1500, which arrives 20 s late (with 1700, before it as in the file
// sorted stably by arrival: 199 below the highest number then, late within
// the input check's reorder window) or not at all.
func lateTrace(late bool) string {
	const delta, delay = 100 * time.Millisecond, 10 * time.Millisecond
	var b strings.Builder
	b.WriteString("#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n")
	row := func(i int, arrival time.Duration) {
		fmt.Fprintf(&b, "p %d %d %d\n", i, int64(time.Duration(i)*delta), int64(arrival))
	}
	lateAt := time.Duration(1500)*delta + delay + 20*time.Second
	for i := range 3000 {
		at := time.Duration(i)*delta + delay
		if late && at >= lateAt && at-delta < lateAt {
			row(1500, lateAt)
		}
		if i != 1500 {
			row(i, at)
		}
	}
	return b.String()
}

// tableCells returns the cells of the table row of detector name in out,
// trimmed, without the detector's name and setting.
func tableCells(t *testing.T, out, name string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| "+name+" ") {
			var cells []string
			for _, c := range strings.Split(strings.Trim(l, "|"), "|")[2:] {
				cells = append(cells, strings.TrimSpace(c))
			}
			return cells
		}
	}
	t.Fatalf("no row %q in\n%s", name, out)
	return nil
}

// Columns of tableCells.
const (
	colEvaluated = iota
	colMistakes
	colMR
	colQAP
	colTM
	colTMR
	colTDMean
	colTDP99
	colTDMax
)

// A heartbeat 20 s late, 199 below the highest number before it, is a late
// heartbeat of the stream, not a sender restart: every detector with a
// restart rule replays it with the rule off and evaluates all 1999
// heartbeats past the warm-up, as on the file without it. What the late
// record changes is what its sample changes, each worked out here:
//
//   - fixed, jacobson and satzger drop a heartbeat below the highest
//     received (it neither extends trust nor gives an interval): every
//     cell as without it.
//   - chen, sfd and 2w-fd take it into the window (Chen et al.'s n most
//     recent heartbeats received): its offset A − Δ·s is 20 s above the
//     others', which raises the window's mean, and τ = EA + α with it, by
//     20 s/1000 = 20 ms for the 1000 heartbeats it stays: TD max 230 ms
//     instead of 210, no mistake either way.
//   - bertier's EA moves by the same 20 ms and back when the sample leaves;
//     its margin, which learnt the error of −20 ms meanwhile, is 20 ms
//     short for the few heartbeats after the drop: 4 mistakes instead of 1
//     (the 1 is heartbeat 1500's gap).
//   - kappa's σ, the window's s.d., is 632 ms = 6.32Δ with the sample in
//     it (about 0 without): κ with the normal contribution reaches K = 2.5
//     before EA_{ℓ+1} once σ ≥ 5.625Δ (docs/algorithms.md, “κ-FD”), so each
//     of the 999 heartbeats after it ends a mistake; with the step
//     contribution, which has no σ, kappa behaves as chen.
//
// Before the restart rule was off in replays, chen, bertier, sfd, 2w-fd and
// kappa evaluated 1001 (the late heartbeat restarted their warm-up) and
// jacobson made 2 mistakes.
func TestLateHeartbeatIsNotARestart(t *testing.T) {
	late := writeFile(t, "r-late.fdk", lateTrace(true))
	drop := writeFile(t, "r-drop.fdk", lateTrace(false))
	dets := "fixed,jacobson,chen,bertier,sfd,2w-fd,satzger,kappa,kappa(contribution=step)"
	outLate, _ := replayTables(t, late, "--no-progress", "-d", dets)
	outDrop, _ := replayTables(t, drop, "--no-progress", "-d", dets)
	assert.Contains(t, outLate, ", 1 stale (1 reordered, 0 duplicates)")
	for _, name := range []string{"fixed", "jacobson", "chen", "bertier", "sfd", "2w-fd", "satzger", "kappa", "kappa(contribution=step)"} {
		l, d := tableCells(t, outLate, name), tableCells(t, outDrop, name)
		assert.Equal(t, "1999", l[colEvaluated], name)
		assert.Equal(t, "1999", d[colEvaluated], name)
		switch name {
		case "fixed", "jacobson", "satzger":
			assert.Equal(t, d, l, name)
		case "chen", "sfd", "2w-fd":
			assert.Equal(t, "0", l[colMistakes], name)
			assert.Equal(t, "0", d[colMistakes], name)
			assert.Equal(t, "210.0", d[colTDMax], name)
			assert.Equal(t, "230.0", l[colTDMax], name)
		case "kappa(contribution=step)": // NFD-E with α = 2Δ
			assert.Equal(t, []string{"0", "310.0", "330.0"}, []string{l[colMistakes], d[colTDMax], l[colTDMax]}, name)
		case "bertier":
			assert.Equal(t, []string{"1", "4"}, []string{d[colMistakes], l[colMistakes]}, name)
		case "kappa":
			assert.Equal(t, []string{"0", "999"}, []string{d[colMistakes], l[colMistakes]}, name)
		}
	}
	// The setting texts are the live ones, and the note says what the
	// live default would do with the late heartbeat.
	assert.Contains(t, outLate, "| chen                     | α=100ms n=1000 ")
	assert.Contains(t, outLate, "restart rule off: 1 heartbeat arrived more than 100 below the highest number before it, replayed as late by fixed, jacobson, chen, bertier, sfd, 2w-fd, satzger, kappa and kappa(contribution=step)")
	assert.NotContains(t, outDrop, "restart rule")
	// The report's notes say it too, once.
	rep := filepath.Join(t.TempDir(), "r.html")
	replayTables(t, late, "--no-progress", "-d", "chen,phi", "--report", rep)
	html, err := os.ReadFile(rep)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(html), "Restart rule off: 1 heartbeat arrived more than 100 below the highest number before it, replayed as late by chen ("))
}

// restart-jump given is the user's: chen(restart-jump=100) still takes the
// late heartbeat for a sender restart and evaluates 1001 heartbeats, beside
// chen, which runs with the rule off (so the two are not one detector, as
// they were when the replay kept the default: the run was refused).
func TestExplicitRestartJumpResets(t *testing.T) {
	late := writeFile(t, "r-late.fdk", lateTrace(true))
	out, _ := replayTables(t, late, "--no-progress", "-d", "chen,chen(restart-jump=100),jacobson(restart-jump=100)")
	assert.Equal(t, "1999", tableCells(t, out, "chen")[colEvaluated])
	assert.Equal(t, "1001", tableCells(t, out, "chen(restart-jump=100)")[colEvaluated])
	assert.Contains(t, out, "| chen(restart-jump=100)     | interval=100ms, window=1000, restart-jump=100 ")
	assert.Equal(t, "2", tableCells(t, out, "jacobson(restart-jump=100)")[colMistakes])
	assert.Contains(t, out, "replayed as late by chen (")
}

// A heavy-tailed trace (lognormal one-way delays of mean 800 ms and s.d.
// 1 s at Δ = 10 ms: most heartbeats are overtaken, many by more than 100):
// chen and the others on its estimator evaluate heartbeats. With the
// restart rule at its default, each heartbeat arriving more than 100 below
// the highest restarted their warm-up of 1000 and none was evaluated.
func TestHeavyTailedReorderingEvaluated(t *testing.T) {
	// fdgen --duration 2m --interval 10ms --jitter 3ms --delay lognormal
	// --delay-mean 800ms --delay-sd 1s --seed 124500202 -o hj1.fdk
	gen, err := trace.NewMergedGenerator([]trace.GenConfig{{
		Interval: 10 * time.Millisecond, Duration: 2 * time.Minute, Jitter: 3 * time.Millisecond,
		Delay: trace.Delay{Dist: trace.DelayLogNormal, Mean: 800 * time.Millisecond, SD: time.Second},
	}}, 124500202)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "hj1.fdk")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := trace.NewWriter(f, trace.Header{Version: 1, Interval: 10 * time.Millisecond}, trace.NoCompression)
	require.NoError(t, err)
	for {
		r, ok, err := gen.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	out, _ := replayTables(t, path, "--no-progress", "-d", "chen,kappa,jacobson")
	for _, name := range []string{"chen", "kappa", "jacobson"} {
		assert.Equal(t, "632", tableCells(t, out, name)[colEvaluated], name)
	}
	assert.Equal(t, "1", tableCells(t, out, "chen")[colMistakes])
	assert.Equal(t, "8", tableCells(t, out, "jacobson")[colMistakes])
	// 2360 with the input check of b26b63f; how many it keeps is its own.
	m := regexp.MustCompile(`restart rule off: (\d+) heartbeats arrived more than 100 below the highest number before them, replayed as late by jacobson, chen and kappa `).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	assert.Greater(t, n, 2000)
}

// The table row of a sweep of restart-jump, the family's default setting,
// runs the restart rule at its live default, 100, and says so in its
// setting: the user studies the rule itself, and an unset restart-jump
// replayed off would be a point outside the range swept, named by
// nothing (atk27r's F5: the row evaluated 1999, with no note). At 100,
// chen takes the late heartbeat 199 below for a restart and evaluates
// 1001, as its point 50 does; fixed, without warm-up, evaluates 1999
// either way. Alike from -d and from a --config file's sweeps.
func TestRestartJumpSweepRowAtLiveDefault(t *testing.T) {
	late := writeFile(t, "r-late.fdk", lateTrace(true))
	out, _ := replayTables(t, late, "--no-progress", "--points", "5", "-d", "chen restart-jump=50..5000")
	assert.Equal(t, "1001", tableCells(t, out, "chen")[colEvaluated])
	assert.Contains(t, out, "| chen     | interval=100ms, window=1000, restart-jump=100; swept restart-jump=50..5000 ")
	assert.NotContains(t, out, "restart rule off")
	// The sweep's own points: 50 resets, 1288 and above do not.
	assert.Contains(t, out, "\np,chen restart-jump=50..5000,restart-jump,sequence numbers,50,replay-per-point,3000,1,1998,1001,")
	assert.Contains(t, out, "\np,chen restart-jump=50..5000,restart-jump,sequence numbers,1288,replay-per-point,3000,1,1000,1999,")

	cfg := writeFile(t, "c.yaml", "sweeps:\n  - chen restart-jump=0..1000\n  - fixed restart-jump=0..1000\n  - chen(restart-jump=7) window=10..1000\n")
	out, _ = replayTables(t, late, "--no-progress", "--points", "3", "--config", cfg)
	assert.Equal(t, "1001", tableCells(t, out, "chen")[colEvaluated])
	assert.Equal(t, "1999", tableCells(t, out, "fixed")[colEvaluated])
	assert.Contains(t, out, "| chen                 | interval=100ms, window=1000, restart-jump=100; swept restart-jump=0..1000 ")
	assert.Contains(t, out, "| fixed                | timeout=1s, restart-jump=100; swept restart-jump=0..1000 ")
	// A restart-jump the sweep's spec gives is the row's, as before.
	assert.Equal(t, "1001", tableCells(t, out, "chen(restart-jump=7)")[colEvaluated])
	assert.Contains(t, out, "| chen(restart-jump=7) | interval=100ms, window=1000, restart-jump=7; swept window=10..1000 ")
	assert.NotContains(t, out, "restart rule off")
}
