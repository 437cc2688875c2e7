package sim

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// TestPauseLengthAgainstCrash prints the tables of docs/experiments.md,
// “SWIM: pause length against crash detection at N = 32 (issue 27)”: 32
// members with bench/memberlist's fdkit settings, per configuration
// FDKIT_SIM_PAUSELEN trials (400 there), each a silent crash and pauses of
// seven lengths of the same group at the same instant (pauseCrashRun). It
// runs only when FDKIT_SIM_PAUSELEN is set (about 2 minutes of CPU at 400).
func TestPauseLengthAgainstCrash(t *testing.T) {
	env := os.Getenv("FDKIT_SIM_PAUSELEN")
	if env == "" {
		t.Skip("set FDKIT_SIM_PAUSELEN to the number of trials per configuration (docs/experiments.md: 400)")
	}
	trials, err := strconv.Atoi(env)
	require.NoError(t, err, "FDKIT_SIM_PAUSELEN")
	require.Positive(t, trials, "FDKIT_SIM_PAUSELEN")
	const n, seed = 32, 117000042
	lengths := []time.Duration{6500 * time.Millisecond, 7 * time.Second, 7500 * time.Millisecond, 8 * time.Second,
		8500 * time.Millisecond, 9 * time.Second, 10 * time.Second}
	// bench/memberlist's fdkit: ModeDetector, its probe interval and
	// timeout, stream pings on (swim/agent's default).
	base := swim.Config{Mode: swim.ModeDetector, ProbeInterval: time.Second, ProbeTimeout: 500 * time.Millisecond, StreamProbe: true}
	configs := []struct {
		name string
		set  func(*swim.Config)
	}{
		{"ring", func(*swim.Config) {}},
		{"shuffled", func(c *swim.Config) { c.ShuffledProbes = true }},
		{"ring, K = 6", func(c *swim.Config) { c.SuspicionConfirmations = new(6) }},
		{"ring, K = 7", func(c *swim.Config) { c.SuspicionConfirmations = new(7) }},
		{"ring, fanout 4", func(c *swim.Config) { c.GossipFanout = new(4) }},
		{"ring, K = 6, fanout 4", func(c *swim.Config) { c.SuspicionConfirmations = new(6); c.GossipFanout = new(4) }},
		{"shuffled, fanout 4", func(c *swim.Config) { c.ShuffledProbes = true; c.GossipFanout = new(4) }},
	}
	names := make([]string, len(configs))
	runs := make([][]pauseCrashTrial, len(configs))
	for c, cf := range configs {
		names[c] = cf.name
		mc := base
		cf.set(&mc)
		for trial := range trials {
			r, err := pauseCrashRun(n, lengths, trial, seed, mc)
			require.NoError(t, err)
			require.Positive(t, r.full, "%s, trial %d: the crash is declared by every live member", cf.name, trial)
			runs[c] = append(runs[c], r)
		}
	}
	most := (n-1)/2 + 1
	var b strings.Builder
	row := func(cells ...string) { fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | ")) }
	header := func(first string) {
		row(append([]string{first}, names...)...)
		row(slices.Repeat([]string{"---"}, len(names)+1)...)
	}
	fmt.Fprintf(&b, "\nPauses declared by at least one member / by most (%d of %d), of %d:\n\n", most, n-1, trials)
	header("L")
	for i, d := range lengths {
		cells := []string{fmt.Sprintf("%.1f s", d.Seconds())}
		for _, rs := range runs {
			var anyone, many int
			for _, r := range rs {
				anyone += b2i(r.declarers[i] > 0)
				many += b2i(r.declarers[i] >= most)
			}
			cells = append(cells, fmt.Sprintf("%d / %d", anyone, many))
		}
		row(cells...)
	}
	fmt.Fprintf(&b, "\nSilent crashes first declared / declared by most / by all before L, of %d:\n\n", trials)
	header("L")
	for _, d := range lengths {
		cells := []string{fmt.Sprintf("%.1f s", d.Seconds())}
		for _, rs := range runs {
			var f, m, a int
			for _, r := range rs {
				f += b2i(r.first < d)
				m += b2i(r.most < d)
				a += b2i(r.full < d)
			}
			cells = append(cells, fmt.Sprintf("%d / %d / %d", f, m, a))
		}
		row(cells...)
	}
	fmt.Fprintf(&b, "\nSilent crash, seconds after it (nearest rank; median with its 95 %% interval):\n\n")
	row("configuration", "first suspicion median", "first declaration p10, median, p90, max", "full dissemination median, p90, max",
		"pause ≠ crash", "declarations after the pause (> 10 ms after)", "declarers per declared 8 s pause", "msgs/member/s after the crash")
	row(slices.Repeat([]string{"---"}, 8)...)
	for c, rs := range runs {
		var fs, first, full []time.Duration
		var mism, after, late, decl8, declared8 int
		var msgs float64
		for _, r := range rs {
			msgs += r.msgs
			fs, first, full = append(fs, r.fs), append(first, r.first), append(full, r.full)
			for i, d := range lengths {
				// The pause is declared before it ends iff the crash is
				// declared before L, at the same instant.
				before := r.pauseFirst[i] >= 0 && r.pauseFirst[i] < d
				if before != (r.first < d) || before && r.pauseFirst[i] != r.first {
					mism++
				}
				after += r.after[i]
				late += r.late[i]
				if d == 8*time.Second && r.declarers[i] > 0 {
					declared8++
					decl8 += r.declarers[i]
				}
			}
		}
		for _, x := range [][]time.Duration{fs, first, full} {
			slices.Sort(x)
		}
		assert.Zero(t, mism, "%s: pauses declared before they ended but not the crash by then, or the other way", names[c])
		row(names[c], fmt.Sprintf("%.2f", rank(fs, 50)),
			fmt.Sprintf("%.2f, %s, %.2f, %.2f", rank(first, 10), medianCI(first), rank(first, 90), rank(first, 100)),
			fmt.Sprintf("%s, %.2f, %.2f", medianCI(full), rank(full, 90), rank(full, 100)),
			strconv.Itoa(mism), fmt.Sprintf("%d (%d)", after, late), fmt.Sprintf("%.1f", float64(decl8)/float64(max(declared8, 1))),
			fmt.Sprintf("%.2f", msgs/float64(len(rs))))
	}
	// The cost in bench/memberlist's Lifeguard interval row (C = 4 of 32
	// members paused 4.8 s every 9.6 s, below Min), 300 s on three seeds:
	// declarations of live members (FP), of healthy members by healthy
	// ones (FP−), messages per member per period.
	fmt.Fprintf(&b, "\nLifeguard's interval experiment at N = %d, C = 4 paused 4.8 s every 9.6 s, 300 s, seeds %d, %d and %d, summed:\n\n",
		n, seed, seed+1, seed+2)
	row("configuration", "FP (FP−)", "msgs/member/period")
	row("---", "---", "---")
	for c, cf := range configs {
		mc := base
		cf.set(&mc)
		var fp, fpm int
		var msgs float64
		for k := range uint64(3) {
			r, err := Interval(IntervalConfig{N: n, C: 4, D: 4800 * time.Millisecond, I: 9600 * time.Millisecond,
				Duration: 300 * time.Second, Seed: seed + k, Member: mc})
			require.NoError(t, err)
			fp, fpm, msgs = fp+r.FP, fpm+r.FPMinus, msgs+r.MsgsPerPeriod/3
		}
		row(names[c], fmt.Sprintf("%d (%d)", fp, fpm), fmt.Sprintf("%.2f", msgs))
	}
	t.Log(b.String())
}

// rank returns the p-th percentile of sorted x by nearest rank, in seconds.
func rank(x []time.Duration, p int) float64 {
	return x[max((p*len(x)+99)/100, 1)-1].Seconds()
}

// medianCI formats the nearest-rank median of sorted x and its
// distribution-free 95 % interval: the order statistics of ranks
// n/2 ∓ 0.98·√n (the normal approximation of the binomial(n, ½)).
func medianCI(x []time.Duration) string {
	n := float64(len(x))
	lo := max(int(math.Floor(n/2-0.98*math.Sqrt(n))), 1)
	hi := min(int(math.Ceil(n/2+1+0.98*math.Sqrt(n))), len(x))
	return fmt.Sprintf("%.2f (%.2f–%.2f)", rank(x, 50), x[lo-1].Seconds(), x[hi-1].Seconds())
}
