package phi

import "time"

// HistorySamples returns the samples history i's window holds, oldest
// first, read from its ring one index at a time (for the tests of package
// phi_test).
func (h *NormalHistories) HistorySamples(i int) []time.Duration {
	ring, start := h.ring(i), h.hs[i].start
	out := make([]time.Duration, h.sums[i].N)
	for k := range out {
		out[k] = ring[(start+k)%h.w]
	}
	return out
}
