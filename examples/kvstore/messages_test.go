package kvstore

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

// The layouts, byte by byte: the kind, then the fields in order.
func TestPullMessageLayouts(t *testing.T) {
	q := [askNonceLen]byte{1, 15: 2}
	c := [challengeLen]byte{3, 15: 4}
	k := [tokenLen]byte{5, 15: 6}
	z := func(n int) []byte { return make([]byte, n) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	assert.Equal(t, cat([]byte{'q', 1}, z(14), []byte{2}), askMsg(q))
	assert.Equal(t, cat([]byte{'c', 1}, z(14), []byte{2, 3}, z(14), []byte{4}), chalMsg([][askNonceLen]byte{q}, c))
	assert.Equal(t, cat([]byte{'e', 3}, z(14), []byte{4, 5}, z(14), []byte{6}), echoMsg(c, k))
	assert.Equal(t, cat([]byte{'a', 'b', 5}, z(14), []byte{6}), answerMsg(answerBusy, k))
	assert.Equal(t, []int{17, 33, 33, 18}, []int{askLen, chalLen, echoLen, answerLen})

	gq, err := parseAsk(askMsg(q))
	require.NoError(t, err)
	assert.Equal(t, q, gq)
	gas, gc, err := parseChal(chalMsg([][askNonceLen]byte{q}, c))
	require.NoError(t, err)
	assert.Equal(t, []any{q[:], c}, []any{gas, gc})
	// Asks for one member answered together: each nonce, then the
	// challenge.
	q2 := [askNonceLen]byte{8}
	two := chalMsg([][askNonceLen]byte{q, q2}, c)
	assert.Equal(t, cat([]byte{'c', 1}, z(14), []byte{2, 8}, z(15), []byte{3}, z(14), []byte{4}), two)
	gas, gc, err = parseChal(two)
	require.NoError(t, err)
	assert.Equal(t, []any{cat(q[:], q2[:]), c}, []any{gas, gc})
	assert.True(t, answers(gas, q))
	assert.True(t, answers(gas, q2))
	assert.False(t, answers(gas, [askNonceLen]byte{2}))
	assert.False(t, answers(gas, c), "the challenge is no ask nonce")
	most := make([][askNonceLen]byte, maxChalAsks)
	_, _, err = parseChal(chalMsg(most, c))
	assert.NoError(t, err, "%d asks", maxChalAsks)
	_, _, err = parseChal(chalMsg(append(most, q), c))
	assert.ErrorContains(t, err, "challenge of 545 bytes", "%d asks", maxChalAsks+1)
	gc, gk, err := parseEcho(echoMsg(c, k))
	require.NoError(t, err)
	assert.Equal(t, []any{c, k}, []any{gc, gk})
	ga, gk, err := parseAnswer(answerMsg(answerRecent, k))
	require.NoError(t, err)
	assert.Equal(t, []any{answerRecent, k}, []any{ga, gk})
}

// A pull message truncated, bare (its kind only), one byte over, or an
// answer of no answer byte is refused with an error naming the message
// and the length wanted, and counted in Rejected; nothing panics, and
// none reaches askOne. Before asks carried a nonce, kindAsk was its kind
// only and kindChal 17 bytes: those are refused too.
func TestMalformedPullMessagesRefused(t *testing.T) {
	q := [askNonceLen]byte{1}
	valid := [][]byte{askMsg(q), chalMsg([][askNonceLen]byte{q}, [challengeLen]byte{}), echoMsg([challengeLen]byte{}, [tokenLen]byte{}), answerMsg(answerQueued, [tokenLen]byte{})}
	names := []string{"ask", "challenge", "echo", "answer"}
	s := &Store{data: map[string]entry{}}
	s.pull.init()
	s.pull.ask = askState{id: "a", nonce: q}
	n := uint64(0)
	for i, v := range valid {
		for _, m := range [][]byte{v[:len(v)-1], v[:1], append(append([]byte(nil), v...), 0)} {
			err := s.pullMessage(swim.Message{From: "a", Data: m})
			require.Error(t, err, "%s of %d bytes", names[i], len(m))
			assert.Contains(t, err.Error(), names[i])
			assert.Contains(t, err.Error(), "want")
			s.receive(swim.Message{From: "a", Data: m})
			n++
			assert.Equal(t, n, s.Rejected(), "%s of %d bytes", names[i], len(m))
		}
	}
	_, _, err := parseAnswer(append([]byte{kindAnswer, 'x'}, make([]byte, tokenLen)...))
	assert.ErrorContains(t, err, `answer 'x'`)
	for _, old := range [][]byte{{kindAsk}, append([]byte{kindChal}, make([]byte, challengeLen)...)} {
		s.receive(swim.Message{From: "a", Data: old})
		n++
		assert.Equal(t, n, s.Rejected())
	}
	assert.Empty(t, s.pull.chals)
}

// Every parser takes any bytes without panicking, and takes exactly
// the messages its encoder makes: what it decodes encodes back to the
// same bytes. A store that asks nothing and holds no other member counts
// every pull message and state piece it receives in Rejected, once.
func FuzzPullMessages(f *testing.F) {
	q := [askNonceLen]byte{1}
	for _, m := range [][]byte{
		askMsg(q), chalMsg([][askNonceLen]byte{q}, [challengeLen]byte{2}), echoMsg([challengeLen]byte{3}, [tokenLen]byte{4}),
		answerMsg(answerQueued, [tokenLen]byte{5}), answerMsg('x', [tokenLen]byte{}),
		{kindAsk}, append([]byte{kindChal}, make([]byte, challengeLen)...), askMsg(q)[:5], append(chalMsg([][askNonceLen]byte{q}, [challengeLen]byte{}), 0),
		{kindState}, {}, []byte(`u{"k":"x","t":1,"w":"f"}`),
	} {
		f.Add(m, "a")
	}
	a, err := agent.Start(context.Background(), plainCfg("fuzz"))
	require.NoError(f, err)
	f.Cleanup(func() { _ = a.Shutdown() })
	s := &Store{a: a, data: map[string]entry{}}
	s.pull.init()
	f.Fuzz(func(t *testing.T, data []byte, from string) {
		if ask, err := parseAsk(data); err == nil {
			assert.Equal(t, data, askMsg(ask))
		}
		if asks, chal, err := parseChal(data); err == nil {
			var qs [][askNonceLen]byte
			for i := 0; i < len(asks); i += askNonceLen {
				qs = append(qs, [askNonceLen]byte(asks[i:]))
			}
			assert.Equal(t, data, chalMsg(qs, chal))
			assert.True(t, len(qs) >= 1 && len(qs) <= maxChalAsks)
		}
		if chal, token, err := parseEcho(data); err == nil {
			assert.Equal(t, data, echoMsg(chal, token))
		}
		if answer, token, err := parseAnswer(data); err == nil {
			assert.Equal(t, data, answerMsg(answer, token))
		}
		before := s.Rejected()
		s.receive(swim.Message{From: swim.ID(from), Data: data})
		if len(data) == 0 || data[0] != kindUpdate {
			assert.Equal(t, before+1, s.Rejected(), "%q from %q", data, from)
		}
		assert.Empty(t, s.pull.chals)
		assert.Empty(t, s.pull.queue)
	})
}
