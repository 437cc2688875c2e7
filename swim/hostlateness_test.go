package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// suspectedOf returns PeerStatus.Suspected of peer id in a's view at now.
func suspectedOf(t *testing.T, a *Member, id string, now time.Duration) bool {
	t.Helper()
	for _, s := range a.Members(now) {
		if s.Node.ID == ID(id) {
			return s.Suspected
		}
	}
	t.Fatalf("no peer %s", id)
	return false
}

// The host's lateness (SetHostLateness) shifts the detector's opinion: with
// a 5 s fixed timeout heard at 0, b is suspected from 5 s on; with the host
// measured 40 ms late, only after 5.04 s, and the gate, which forgives a
// failed probe of a peer its detector trusts, forgives it until then too.
func TestHostLatenessDefersDetectorSuspicion(t *testing.T) {
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.PeerDetector = FixedPeerDetector(5 * time.Second) }, "b")
	p := Packet{Kind: MsgAck, From: node("b"), To: node("a"), Ack: Ack{Seq: 999}}
	require.NoError(t, a.Step(0, &p))
	assert.True(t, suspectedOf(t, a, "b", 5*time.Second+1))
	a.SetHostLateness(40 * time.Millisecond)
	assert.Equal(t, 40*time.Millisecond, a.HostLateness())
	assert.False(t, suspectedOf(t, a, "b", 5*time.Second+40*time.Millisecond), "within the host's lateness")
	assert.True(t, suspectedOf(t, a, "b", 5*time.Second+40*time.Millisecond+1))
	assert.True(t, a.gated(a.peers["b"], 5*time.Second+40*time.Millisecond), "the gate still forgives")
	assert.False(t, a.gated(a.peers["b"], 5*time.Second+41*time.Millisecond))
	a.SetHostLateness(-time.Second)
	assert.Zero(t, a.HostLateness(), "negative counts as 0")
	a.SetHostLateness(1 << 62)
	assert.False(t, suspectedOf(t, a, "b", -1<<62), "no overflow far below 0")
}
