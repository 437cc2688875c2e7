package kvstore

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// stateMsg is a state message of es.
func stateMsg(t *testing.T, es ...entry) []byte {
	t.Helper()
	b, err := json.Marshal(es)
	require.NoError(t, err)
	return append([]byte{kindState}, b...)
}

// One message moves the clock by at most MaxClockLead, however its
// entries chain: before, each entry was bounded by the clock the previous
// one had moved, and a message of n entries moved it by n·2^32 (issue 27,
// user33 F1). Clock 5: an entry at 5+L is taken, one at 5+L+1 (only 1
// above the moved clock) and one at 5+2L are refused; the next message
// may move it by L again.
func TestOneMessageMovesClockAtMostLead(t *testing.T) {
	const L = MaxClockLead
	s := &Store{data: map[string]entry{}, clock: 5}
	s.receive(swim.Message{Data: stateMsg(t,
		entry{Key: "a", Time: 5 + L, Writer: "f"},
		entry{Key: "b", Time: 5 + L + 1, Writer: "f"},
		entry{Key: "c", Time: 5 + 2*L, Writer: "f"})})
	assert.Equal(t, uint64(5+L), s.clock)
	assert.Equal(t, uint64(2), s.Rejected())
	_, a := s.Get("a")
	_, b := s.Get("b")
	_, c := s.Get("c")
	assert.Equal(t, []bool{true, false, false}, []bool{a, b, c})
	s.receive(swim.Message{Data: stateMsg(t, entry{Key: "c", Time: 5 + 2*L, Writer: "f"})})
	assert.Equal(t, uint64(5+2*L), s.clock)
	assert.Equal(t, uint64(2), s.Rejected())
}
