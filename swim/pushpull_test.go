package swim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member that starts alone and then learns a group of 128 schedules its
// first anti-entropy exchange within the interval for 128 members
// (4 × 30 s), not the 30 s of a group of one: of 200 such members (other
// random sources), about a quarter exchange in the first 30 s, and all of
// them by 120 s, rather than all of them in the first 30 s.
func TestFirstPushPullFollowsGroupSize(t *testing.T) {
	var nodes []Node
	for i := 0; i < 127; i++ {
		nodes = append(nodes, node(fmt.Sprintf("p%03d", i)))
	}
	early, total := 0, 0
	for seed := uint64(0); seed < 200; seed++ {
		m, err := New(Config{Self: node("a"), Mode: ModeLifeguard}, rand.New(rand.NewPCG(seed, 9)))
		require.NoError(t, err)
		m.Tick(0)
		m.Bootstrap(nodes)
		first := time.Duration(-1)
		for now := time.Duration(0); now <= 121*time.Second && first < 0; now += 100 * time.Millisecond {
			m.Tick(now)
			pk, _ := drain(m)
			for _, p := range pk {
				if p.Kind == MsgJoin && !p.Digest.IsZero() {
					first = now
				}
				if p.Kind == MsgPing { // every member answers
					ack := Packet{Kind: MsgAck, From: p.To, To: m.Self(), Ack: Ack{Seq: p.Ping.Seq}}
					require.NoError(t, m.Step(now, &ack))
				}
			}
		}
		require.GreaterOrEqual(t, first, time.Duration(0), "seed %d: no exchange in 121 s", seed)
		total++
		if first < 30*time.Second {
			early++
		}
	}
	frac := float64(early) / float64(total)
	assert.InDelta(t, 0.25, frac, 0.1, "members exchanging in the first 30 s")
}
