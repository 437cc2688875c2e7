package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A flood of forged Alive updates, each for a new ID (anyone can send
// them in plain mode), must not grow the dissemination queue beyond the
// view: MaxMembers bounds the members, and the queue holds updates about
// them only. Before, a member evicted to make room kept its queued Alive,
// so the queue grew with every forged ID.
func TestQueueBoundedByViewUnderAliveFlood(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MaxMembers = 64 }, "b", "c")
	a.Tick(0)
	drain(a)
	now := 10 * time.Millisecond
	for i := range 3000 {
		f := node(fmt.Sprintf("fake%05d", i))
		p := Packet{Kind: MsgPing, From: f, To: node("a"), Ping: Ping{Seq: 1},
			Updates: []Update{{Kind: UpdateAlive, Node: f, From: f.ID}}}
		_ = a.Step(now, &p)
		drain(a)
	}
	assert.LessOrEqual(t, a.Queued(), 64, "queued updates with a view of at most 64 members")
}
