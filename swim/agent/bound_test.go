package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fdkit/fdkit/swim/wire"
)

// In a sealed group of current members every probe ping asks for a bound
// ack (packet tag 8) and gets one (wire.EnvelopeBound): it names no one,
// and it still counts as its target's (no probe fails, no ack goes
// unmatched), over real sockets.
func TestSealedGroupBindsItsPackets(t *testing.T) {
	const n = 4
	tap, _, as, _ := tappedGroup(t, n)
	periodsFrom(t, as...)(2 * n) // past the first exchanges
	for len(tap) > 0 {
		<-tap
	}
	before := make([]int, n)
	for i, a := range as {
		before[i] = a.Stats().Protocol.ProbesFailed
	}
	periodsFrom(t, as...)(3 * n)
	envs := map[byte]int{}
	for len(tap) > 0 {
		s := <-tap
		envs[s.data[0]]++
	}
	t.Logf("datagrams by envelope byte: %v", envs)
	assert.GreaterOrEqual(t, envs[wire.EnvelopeBound], 3*n*n*9/10, "an ack a period each, but for a probe or two the window cut")
	assert.GreaterOrEqual(t, envs[wire.EnvelopeEncrypted], envs[wire.EnvelopeBound], "pings and the rest")
	for i, a := range as {
		st := a.Stats()
		assert.Equal(t, before[i], st.Protocol.ProbesFailed, "member %d: a probe failed", i)
		assert.Zero(t, st.Protocol.AcksUnmatched, "member %d", i)
		assert.Equal(t, n, alive(a), "member %d", i)
	}
}
