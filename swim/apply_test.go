package swim

import "time"

// apply merges u at now as if it came in a packet from no one: the tests'
// way to set up a view.
func (m *Member) apply(now time.Duration, u Update, gossip bool) {
	m.applyUpdate(&inbound{now: now}, u, gossip)
}
