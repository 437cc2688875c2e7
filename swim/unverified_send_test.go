package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bareFor reports whether pk, sent to a member the view has not verified,
// carries nothing from the queues: no application broadcasts, and no
// update but what pk's kind always carries (the recipient's notice, this
// member's own Alive; an eager push, MsgGossip, its one update).
func bareFor(pk Packet, self ID) bool {
	if len(pk.Broadcasts) > 0 {
		return false
	}
	if pk.Kind == MsgGossip {
		return len(pk.Updates) == 1
	}
	for _, u := range pk.Updates {
		if u.Node.ID != pk.To.ID && u.Node.ID != self {
			return false
		}
	}
	return true
}

// A member's packets to members it has not verified (verify.go: only told
// of, by gossip) carry nothing from its queues, whatever path sends them:
// its probes, the gate's and the relays' pings, the drain loop, the
// reconnect pings to the dead. Announced at a victim's address, a ghost
// would otherwise draw the queue and the application's broadcasts to the
// victim with every probe (issue 27, user33 F4: about 40× the attacker's
// bytes over real sockets). Here a holds b, c and d (configured, so
// verified) and 30 members b told it of, its queue and a 300-byte
// broadcast full; nobody answers for a minute, so every member is
// probed, suspected and declared dead, and the dead are pinged again.
func TestNothingQueuedToUnverified(t *testing.T) {
	a := relayMember(t)
	verified := map[ID]bool{"b": true, "c": true, "d": true}
	for i := range 30 {
		require.False(t, a.peers[ID(fmt.Sprintf("n%02d", i))].verified)
	}
	pk, _ := advance(a, time.Minute)
	full, unverified := 0, map[MessageKind]int{}
	for _, p := range pk {
		if verified[p.To.ID] {
			if !bareFor(p, a.Self().ID) {
				full++
			}
			continue
		}
		unverified[p.Kind]++
		assert.True(t, bareFor(p, a.Self().ID), "%v to %s: %d updates, %d broadcasts, %d bytes",
			p.Kind, p.To.ID, len(p.Updates), len(p.Broadcasts), p.Size())
	}
	t.Logf("packets to the unverified members: %v", unverified)
	assert.GreaterOrEqual(t, unverified[MsgPing], 5, "pings to the unverified members")
	assert.Positive(t, full, "the verified members get the queue")
}
