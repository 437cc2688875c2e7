package phi

import "time"

// HistorySamples returns the samples history i's window holds, oldest
// first (for the tests of package phi_test).
func (h *NormalHistories) HistorySamples(i int) []time.Duration {
	s := &h.hs[i]
	ring := h.ring(i)
	out := make([]time.Duration, h.sums[i].N)
	for k := range h.sums[i].N {
		out[k] = ring[(s.start+k)%h.w]
	}
	return out
}
