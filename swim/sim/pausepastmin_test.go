package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// A member of 8 paused 5.5 s, 1.5 s past the shortest suspicion timeout
// (Min = 4 s: α = 4, max(1, log10 8) = 1), is declared when the first
// suspicion starts within the pause's first 1.5 s and two other members'
// own probes fail within the next 4 s (K = 2: the timeout is then Min from
// the suspicion's start). The ring probe order brings one prober of a
// silent member per period, so both happen more often than in SWIM's
// shuffled order; the same regularity declares a silent crash sooner. This
// test bounds that trade both ways over the same seeds (200 pauses, 200
// crashes per mode and order), and the log prints the rows of
// docs/experiments.md, “SWIM: a pause past Min at N = 8 (issue 27)”.
func TestPausePastMinRingTrade(t *testing.T) {
	if testing.Short() && raceOn {
		t.Skip("1,600 groups of 8 under -race")
	}
	dead := map[swim.Mode][2]int{}
	for _, mode := range []swim.Mode{swim.ModeLifeguard, swim.ModeDetector} {
		var d [2]int // shuffled, ring
		var kills [2]KillResult
		for i, shuffled := range []bool{true, false} {
			mc := swim.Config{Mode: mode, StreamProbe: true, ShuffledProbes: shuffled}
			for seed := range uint64(20) {
				r, err := PauseOne(8, 5500*time.Millisecond, 10, 105000007+seed, mc)
				require.NoError(t, err)
				d[i] += r.DeadEvents
			}
			k, err := KillOne(8, 200, 105000007, mc, true)
			require.NoError(t, err)
			require.Zero(t, k.Undeclared)
			kills[i] = k
			t.Logf("| %v | %v | %d of %d | %.2f | %.2f | %.2f |", mode, map[bool]string{true: "shuffled", false: "ring"}[shuffled],
				d[i], 200*7, k.FirstSuspicion.Seconds(), k.First.Seconds(), k.FirstP90.Seconds())
		}
		dead[mode] = d
		assert.Less(t, kills[1].First, kills[0].First-200*time.Millisecond, "%v: the ring declares a silent crash sooner", mode)
		assert.Less(t, kills[1].FirstP90, kills[0].FirstP90, "%v: p90 of the first declaration", mode)
		assert.LessOrEqual(t, 2*d[1], 3*d[0], "%v: the ring declares a pause past Min at most 1.5 times as often", mode)
	}
	det, lg := dead[swim.ModeDetector][1], dead[swim.ModeLifeguard][1]
	assert.LessOrEqual(t, 20*det, 23*lg, "the ring's pauses: ModeDetector's declarations at most 15 %% above ModeLifeguard's")
}
