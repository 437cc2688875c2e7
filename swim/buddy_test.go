package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The buddy-system copy of a suspicion is not repeated from the
// dissemination queue in the same packet (it wasted room meant for other
// updates); it still counts as one transmission of the queued update.
func TestBuddyNoticeNotDuplicated(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	a.Tick(0)
	a.Tick(time.Second) // the probe of b fails: Suspect(b) queued
	_, ev := drain(a)
	require.Len(t, ev, 1)
	require.Equal(t, EventSuspect, ev[0].Kind)
	sent := 0
	for i := 0; i < 10; i++ {
		p := Packet{Kind: MsgPing, From: node("b"), To: node("a"), Ping: Ping{Seq: uint32(100 + i)}}
		require.NoError(t, a.Step(time.Second+time.Duration(i)*time.Millisecond, &p))
		pk, _ := drain(a)
		require.Len(t, pk, 1)
		n := 0
		for _, u := range pk[0].Updates {
			if u.Kind == UpdateSuspect && u.Node.ID == "b" {
				n++
			}
		}
		assert.Equal(t, 1, n, "ack %d to the suspect carries its suspicion once", i)
		sent += n
	}
	// n = 2: the queued update goes 4·ceil(log10 3) = 4 times; the buddy
	// notice rides on every later packet to b anyway.
	assert.Equal(t, 10, sent)
	assert.Empty(t, a.bq, "the queued copy counted its transmissions and left the queue")
}
