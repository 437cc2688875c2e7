package agent

import (
	"testing"
	"time"
)

// periodsFrom returns a wait that blocks until each of as has started at
// least n probes (swim.ProbeStats.ProbesStarted: one per protocol period
// with a target) beyond what it had started when periodsFrom was called,
// and fails the test if one has not within 30 s. A check that nothing
// happened within n periods waits on it rather than on a sleep, which on
// a loaded machine may pass before the agents ran a period. Each agent
// must know another member, or it starts no probe.
func periodsFrom(t *testing.T, as ...*Agent) func(n int) {
	t.Helper()
	base := make([]int, len(as))
	for i, a := range as {
		base[i] = a.Stats().Protocol.ProbesStarted
	}
	return func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for i, a := range as {
			for a.Stats().Protocol.ProbesStarted < base[i]+n {
				if time.Now().After(deadline) {
					t.Fatalf("%s started %d probes, want %d more than %d", a.Self().ID, a.Stats().Protocol.ProbesStarted, n, base[i])
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
}
