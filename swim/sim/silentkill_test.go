package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// TestSilentCrashNoLaterThanLifeguard: a member whose host goes silent (its
// stream pings accepted and never answered, CrashSilent) is declared dead
// by the whole group of 8 no later in ModeDetector than in ModeLifeguard
// (memberlist's schedule: suspicion at the end of the failed probe's
// period), over the same 40 crashes, within 2 %. The detector gate's retry
// without evidence of death runs within the failed probe's period; when it
// took a period of its own, ModeDetector's full dissemination was 6.90 s
// against 5.96 s (100 crashes, fdswim sim kill).
func TestSilentCrashNoLaterThanLifeguard(t *testing.T) {
	if testing.Short() && raceOn {
		t.Skip("40 groups of 8 under -race")
	}
	const n, trials = 8, 40
	det, err := KillOne(n, trials, 5, swim.Config{Mode: swim.ModeDetector, StreamProbe: true}, true)
	require.NoError(t, err)
	lg, err := KillOne(n, trials, 5, swim.Config{Mode: swim.ModeLifeguard, StreamProbe: true}, true)
	require.NoError(t, err)
	t.Logf("full dissemination: detector %v, lifeguard %v; first suspicion %v, %v", det.Full, lg.Full, det.FirstSuspicion, lg.FirstSuspicion)
	assert.Zero(t, det.Undeclared)
	assert.LessOrEqual(t, det.Full, lg.Full+lg.Full/50)
	assert.LessOrEqual(t, det.FirstSuspicion, lg.FirstSuspicion+50*time.Millisecond)
}
