package swim

import (
	"fmt"
	"math"
	"time"
)

// maxTimer bounds every duration a Member adds to the caller's clock: the
// longest protocol period (ProbeInterval·MaxLocalHealthMultiplier), the
// longest suspicion timeout (β·α·log10 n·ProbeInterval), a leave's
// retransmissions, the anti-entropy interval scaled to the group, the
// retention and reconnect intervals. 2^60 ns is about 36.5 years, which
// leaves a caller's clock (time.Duration from an origin of its choice)
// more than 250 years before now plus any timer wraps around into the
// past, where it would fire at once (a suspicion under a ProbeInterval of
// a few weeks would be an instant declaration).
const maxTimer = time.Duration(1 << 60)

// mulTimer returns d·k, at most maxTimer.
func mulTimer(d time.Duration, k int) time.Duration {
	if d <= 0 || k <= 0 {
		return d * time.Duration(max(k, 0))
	}
	if k > int(maxTimer/d) {
		return maxTimer
	}
	return d * time.Duration(k)
}

// checkTimers refuses a configuration (defaults applied) whose longest
// timers, for a group of up to MaxMembers, exceed maxTimer; each product
// is computed in float64 so that the check itself cannot overflow.
func (c *Config) checkTimers() error {
	n := float64(c.MaxMembers)
	scale := math.Max(1, math.Log10(n))
	limit := float64(maxTimer)
	for _, t := range []struct {
		v    float64
		what string
	}{
		{float64(c.ProbeInterval) * float64(c.MaxLocalHealthMultiplier),
			fmt.Sprintf("ProbeInterval %v × MaxLocalHealthMultiplier %d (the longest protocol period)", c.ProbeInterval, c.MaxLocalHealthMultiplier)},
		{float64(c.ProbeInterval) * float64(c.SuspicionMult) * float64(max(c.SuspicionMaxTimeoutMult, 1)) * scale,
			fmt.Sprintf("ProbeInterval %v × SuspicionMult %d × SuspicionMaxTimeoutMult %d × log10 of MaxMembers %d (the longest suspicion timeout)",
				c.ProbeInterval, c.SuspicionMult, c.SuspicionMaxTimeoutMult, c.MaxMembers)},
		{float64(c.ProbeInterval) * float64(c.RetransmitMult) * math.Ceil(math.Log10(n+1)),
			fmt.Sprintf("ProbeInterval %v × RetransmitMult %d × ceil(log10(MaxMembers %d + 1)) (the longest leave)", c.ProbeInterval, c.RetransmitMult, c.MaxMembers)},
		{float64(c.ProbeInterval) * conflictEvery, fmt.Sprintf("ProbeInterval %v × %d (conflicts reported again)", c.ProbeInterval, conflictEvery)},
		{float64(*c.PushPullInterval) * math.Ceil(n/32),
			fmt.Sprintf("PushPullInterval %v × ceil(MaxMembers %d / 32) (the anti-entropy interval of the largest group)", *c.PushPullInterval, c.MaxMembers)},
		{float64(*c.DeadRetention), fmt.Sprintf("DeadRetention %v", *c.DeadRetention)},
		{float64(*c.DeadReclaimTime), fmt.Sprintf("DeadReclaimTime %v", *c.DeadReclaimTime)},
		{float64(*c.ReconnectInterval), fmt.Sprintf("ReconnectInterval %v", *c.ReconnectInterval)},
		{float64(*c.GossipInterval), fmt.Sprintf("GossipInterval %v", *c.GossipInterval)},
		{float64(*c.PauseGuard), fmt.Sprintf("PauseGuard %v", *c.PauseGuard)},
	} {
		if t.v > limit {
			return fmt.Errorf("%w: %s is %.3g years, above the longest timer a member keeps (%v, about 36.5 years)",
				ErrConfig, t.what, t.v/float64(365*24*time.Hour), maxTimer)
		}
	}
	return nil
}
