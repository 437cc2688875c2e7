package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/algorithms.md, “Lifeguard suspicion timeout” examples, n = 100,
// ProbeInterval 1 s.
func TestSuspicionTimeoutExamples(t *testing.T) {
	// Paper: α = 5, β = 6, K = 3: Min = 10 s, Max = 60 s.
	minT := suspicionMin(5, 100, time.Second)
	assert.Equal(t, 10*time.Second, minT)
	maxT := 6 * minT
	// 60 − 50·log(C+1)/log 4; C = 2 gives 20.37594 s, floored to the ms
	// (as docs/algorithms.md, “Lifeguard suspicion timeout”, prints it).
	want := []time.Duration{60 * time.Second, 35 * time.Second, 20375 * time.Millisecond, 10 * time.Second, 10 * time.Second}
	for c, w := range want {
		assert.Equal(t, w, suspicionTimeout(minT, maxT, 3, c), "C = %d", c)
	}
	// memberlist defaults: α = 4, β = 6, K = 2: Min = 8 s, Max = 48 s.
	minT = suspicionMin(4, 100, time.Second)
	assert.Equal(t, 8*time.Second, minT)
	// C = 1: 48 − 40·log 2/log 3 = 22.76281 s, floored to 22.762 s.
	want = []time.Duration{48 * time.Second, 22762 * time.Millisecond, 8 * time.Second}
	for c, w := range want {
		assert.Equal(t, w, suspicionTimeout(minT, 6*minT, 2, c), "C = %d", c)
	}
	// K = 0 (groups smaller than K+2) and plain SWIM (Max = Min): Min at once.
	assert.Equal(t, 8*time.Second, suspicionTimeout(8*time.Second, 48*time.Second, 0, 0))
	assert.Equal(t, 8*time.Second, suspicionTimeout(8*time.Second, 8*time.Second, 3, 0))
	// Small groups: log10 n below 1 counts as 1.
	assert.Equal(t, 4*time.Second, suspicionMin(4, 3, time.Second))
	assert.Equal(t, 4*time.Second, suspicionMin(4, 0, time.Second))
}

func TestRetransmitLimit(t *testing.T) {
	// 4·ceil(log10 101), docs/algorithms.md, “SWIM dissemination”.
	assert.Equal(t, 12, retransmitLimit(4, 100))
	assert.Equal(t, 4, retransmitLimit(4, 1))
	assert.Equal(t, 8, retransmitLimit(4, 99))
	assert.Equal(t, 9, retransmitLimit(3, 128)) // SWIM's 3·ceil(log(N+1))
}

func TestSuspicionConfirmations(t *testing.T) {
	s := newSuspicion(100*time.Second, 10*time.Second, 60*time.Second, 3, "a")
	assert.Equal(t, 160*time.Second, s.deadline)
	assert.False(t, s.confirm(100*time.Second, "a"), "the first suspecter is not a confirmation")
	assert.True(t, s.confirm(100*time.Second, "b"))
	assert.False(t, s.confirm(100*time.Second, "b"), "each member counts once")
	assert.Equal(t, 135*time.Second, s.deadline)
	assert.True(t, s.confirm(100*time.Second, "c"))
	assert.True(t, s.confirm(100*time.Second, "d"))
	assert.Equal(t, 110*time.Second, s.deadline)
	assert.True(t, s.confirm(100*time.Second, "e"))
	assert.Equal(t, 110*time.Second, s.deadline, "never below Min")
	// The timeout never grows with more confirmations.
	prev := s.max
	for c := 0; c < 20; c++ {
		to := suspicionTimeout(s.min, s.max, 3, c)
		assert.LessOrEqual(t, to, prev)
		assert.GreaterOrEqual(t, to, s.min)
		prev = to
	}
}

func TestIncarnationSaturates(t *testing.T) {
	assert.Equal(t, Incarnation(1), Incarnation(0).Next())
	assert.Equal(t, MaxIncarnation, (MaxIncarnation - 1).Next())
	assert.Equal(t, MaxIncarnation, MaxIncarnation.Next(), "no wrap to 0")
}

// A Suspect or Dead update without From is rejected with the whole packet:
// an anonymous suspicion was counted as an independent confirmation,
// shortening Lifeguard's suspicion timeout, and a Dead was adopted.
func TestAnonymousSuspicionRejected(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e", "f", "g")
	a.apply(0, Update{Kind: UpdateSuspect, Node: node("b"), Incarnation: 0, From: "c"}, false)
	st, ok := a.Member("b", 0)
	require.True(t, ok)
	deadline := st.SuspicionDeadline
	for _, k := range []UpdateKind{UpdateSuspect, UpdateDead} {
		p := Packet{Kind: MsgAck, From: node("d"), To: node("a"), Ack: Ack{Seq: 1},
			Updates: []Update{{Kind: k, Node: node("b"), Incarnation: 0}}}
		err := a.Step(time.Second, &p)
		require.ErrorIs(t, err, ErrPacket, "%v without From", k)
		assert.Contains(t, err.Error(), "without From")
		st, _ = a.Member("b", time.Second)
		assert.Equal(t, StateSuspect, st.State, k)
		assert.Equal(t, deadline, st.SuspicionDeadline, "%v without From changed the suspicion timeout", k)
	}
	// An Alive needs no From.
	p := Packet{Kind: MsgAck, From: node("d"), To: node("a"), Ack: Ack{Seq: 1},
		Updates: []Update{{Kind: UpdateAlive, Node: node("b"), Incarnation: 1}}}
	require.NoError(t, a.Step(time.Second, &p))
	assert.Equal(t, StateAlive, a.State("b"))
}

// A suspicion records at most maxConfirmers confirmations however many new
// sender ids confirm it (each extra one is refused, so the list and the scan
// over it stay bounded), and the first k still shorten the timeout.
func TestSuspicionConfirmersBounded(t *testing.T) {
	s := newSuspicion(0, time.Second, 10*time.Second, 3, "a")
	before := s.deadline
	require.True(t, s.confirm(0, "b"))
	require.Less(t, s.deadline, before, "a confirmation shortens the timeout")
	require.False(t, s.confirm(0, "b"), "the same id counts once")
	require.False(t, s.confirm(0, "a"), "the first suspecter is no confirmation")
	for i := range 10 * maxConfirmers {
		s.confirm(0, ID(fmt.Sprintf("forged-%d", i)))
	}
	require.Len(t, s.confirmers, maxConfirmers)
	require.Equal(t, time.Second, s.deadline-s.start, "k or more confirmations: the timeout is Min")
}

// suspicionMin divides before it multiplies, so that a long ProbeInterval
// in a large group does not overflow (testdata/scenarios/timer_overflow.txt
// has the member's view of it), and keeps log10 n in thousandths.
func TestSuspicionMinNoOverflow(t *testing.T) {
	const pi = time.Duration(1 << 50)
	assert.Equal(t, 4*3*pi, suspicionMin(4, 1000, pi))
	assert.Equal(t, time.Duration(4*1505*1000/1000)*time.Millisecond, suspicionMin(4, 32, time.Second), "log10 32 in thousandths")
}
