package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sendsOf runs m for periods protocol periods from at, acking every ping,
// and returns how many packets carried an update about id of kind k.
func sendsOf(t *testing.T, m *Member, at time.Duration, periods int, k UpdateKind, id string) int {
	t.Helper()
	n := 0
	for i := 0; i < periods; i++ {
		now := at + time.Duration(i)*time.Second
		m.Tick(now)
		pk, _ := drain(m)
		for _, p := range pk {
			for _, u := range p.Updates {
				if u.Kind == k && u.Node.ID == ID(id) {
					n++
				}
			}
			if p.Kind == MsgPing {
				ack := Packet{Kind: MsgAck, From: p.To, To: m.Self(), Ack: Ack{Seq: p.Ping.Seq}}
				require.NoError(t, m.Step(now+time.Millisecond, &ack))
				drain(m)
			}
		}
	}
	return n
}

// A join announcement heard again from other members counts as sent
// (rumour mongering's loss of interest): with the limit at 4 and the same
// Alive heard from two more members, this member piggybacks it twice, not
// four times. Suspicions and declarations heard again do not count: a Dead
// still goes out its full number of times.
func TestHeardAgainCountsAliveOnly(t *testing.T) {
	alive := Update{Kind: UpdateAlive, Node: node("f"), From: "f"}
	for _, again := range []int{0, 2} {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e")
		for i, from := range []string{"b", "c", "d"}[:1+again] {
			p := Packet{Kind: MsgGossip, From: node(from), To: node("a"), Updates: []Update{alive}}
			require.NoError(t, a.Step(time.Duration(i)*time.Millisecond, &p))
			drain(a)
		}
		// n = 6: limit 4·ceil(log10 7) = 4.
		assert.Equal(t, 4-again, sendsOf(t, a, 10*time.Millisecond, 8, UpdateAlive, "f"), "heard %d more times", again)
	}
	dead := Update{Kind: UpdateDead, Node: node("c"), From: "b"}
	for _, again := range []int{0, 2} {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e")
		for i, from := range []string{"b", "d", "e"}[:1+again] {
			p := Packet{Kind: MsgGossip, From: node(from), To: node("a"), Updates: []Update{dead}}
			require.NoError(t, a.Step(time.Duration(i)*time.Millisecond, &p))
			drain(a)
		}
		// n = 4: limit 4, all of them sent (drain loop and piggyback; see
		// TestDrainLoop).
		assert.Equal(t, 4, sendsOf(t, a, 10*time.Millisecond, 8, UpdateDead, "c"), "heard %d more times", again)
	}
}
