package kvstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

// A member that got one challenge echoes it again and again: it gets the
// store once, the echoes after the first draw nothing, a new challenge
// within storeInterval is answered "served recently" with no store, and
// a real joiner that joins meanwhile gets the whole store. Before, each
// 17-byte echo drew the whole store again (about 2,900 times the
// insider's bytes), and a joiner whose echo was dropped from the full
// queue kept part of the store while its Join returned nil (issue 27,
// user37 F4).
func TestEchoReplayDrawsOneStore(t *testing.T) {
	a := newStore(t, plainCfg("a"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const keys = 300
	for i := range keys {
		require.NoError(t, a.Set(ctx, fmt.Sprintf("key-%05d", i), strings.Repeat("v", 900)))
	}
	ins, err := agent.Start(ctx, plainCfg("insider"))
	require.NoError(t, err)
	defer func() { _ = ins.Shutdown() }()
	msgs, stop := ins.Receive(4096)
	defer stop()
	require.NoError(t, ins.Join(ctx, a.Agent().Self().Addr))
	got, gotBytes, answers := 0, 0, []byte{}
	// next returns the next challenge, counting the state and answers
	// that come before it; nil when none comes within wait.
	next := func(wait time.Duration) []byte {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		for {
			select {
			case m := <-msgs:
				switch {
				case len(m.Data) > 0 && m.Data[0] == kindState:
					var es []entry
					if len(m.Data) >= pieceHeader && json.Unmarshal(m.Data[pieceHeader:], &es) == nil {
						got += len(es)
					}
					gotBytes += len(m.Data)
				case len(m.Data) == 2+tokenLen && m.Data[0] == kindAnswer:
					answers = append(answers, m.Data[1])
				case len(m.Data) == chalLen && m.Data[0] == kindChal:
					return m.Data[1+askNonceLen:]
				}
			case <-timer.C:
				return nil
			}
		}
	}
	// echoOnce asks for a challenge, echoes it and waits for the
	// answer; it returns the echo.
	echoOnce := func() []byte {
		require.NoError(t, ins.SendTo(ctx, "a", askMsg([askNonceLen]byte{byte(len(answers))})))
		chal := next(10 * time.Second)
		require.NotNil(t, chal, "a challenge")
		echo := append(append([]byte{kindEcho}, chal...), make([]byte, tokenLen)...)
		n := len(answers)
		require.NoError(t, ins.SendReliable(ctx, "a", echo))
		require.Eventually(t, func() bool { next(time.Millisecond); return len(answers) == n+1 }, 10*time.Second, time.Millisecond, "an answer")
		return echo
	}
	start, sent0 := time.Now(), ins.Stats().BytesSent
	echo := echoOnce()
	// Within storeInterval of the first store, a new challenge is
	// answered "served recently".
	echoOnce()
	require.Less(t, time.Since(start), storeInterval, "the second echo within storeInterval")
	b := newStore(t, plainCfg("b"))
	joined := make(chan error, 1)
	for i := range 200 {
		if i == 20 { // a real joiner comes while the insider echoes
			go func() { joined <- b.Join(ctx, a.Agent().Self().Addr) }()
		}
		require.NoError(t, ins.SendReliable(ctx, "a", echo))
		if i%4 == 3 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	require.NoError(t, <-joined, "b's Join")
	require.Eventually(t, func() bool { return b.Len() == keys }, 20*time.Second, 10*time.Millisecond, "b got the store")
	require.Eventually(t, func() bool { next(10 * time.Millisecond); return got >= keys }, 20*time.Second, time.Millisecond, "one store")
	// Each echo is refused (Rejected) as the receiving goroutine comes to
	// it; b's Join may add a stale echo of its own.
	require.Eventually(t, func() bool { return a.Rejected() >= 200 }, 20*time.Second, time.Millisecond, "every echo after the first refused")
	next(500 * time.Millisecond)          // nothing more comes
	sent := ins.Stats().BytesSent - sent0 // frames and datagrams, without TCP/IP headers
	t.Logf("two challenges echoed, the first 200 times more: the insider sent %d B and got %d B of store (%.1f×), %d entries "+
		"(the store holds %d); answers %q; a.Rejected %d", sent, gotBytes, float64(gotBytes)/float64(sent), got, keys, answers, a.Rejected())
	assert.Equal(t, keys, got, "exactly one store")
	assert.Equal(t, []byte{answerQueued, answerRecent}, answers)
	assert.Zero(t, a.AnswersDropped())
}

// A joiner that no member will send the store learns it: Join's ask
// fails when its context ends instead of returning nil (here a has sent
// b its store within storeInterval and answers "served recently").
func TestAskRefusedIsAnError(t *testing.T) {
	ctx, a, b := pair(t)
	require.NoError(t, a.Set(ctx, "k", "v"))
	short, cancel := context.WithTimeout(ctx, 2*askWait)
	defer cancel()
	err := b.ask(short)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "joined, but no member queued the store")
}

// A joiner takes the clock of the member it pulled the store from: two
// forged updates moved a's clock by 2·MaxClockLead, and the joiner b,
// at clock 0, takes a's entries (honest and forged) and every later
// write of a. Before, b refused a's entries above MaxClockLead and every
// later write of a, for good, while its Join returned nil (issue 27,
// user37 F8).
func TestJoinerAdoptsPulledClock(t *testing.T) {
	a := newStore(t, plainCfg("a"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, a.Set(ctx, "before", "1"))
	attacker, err := agent.Start(ctx, plainCfg("mallory"))
	require.NoError(t, err)
	defer func() { _ = attacker.Shutdown() }()
	for i, t0 := range []uint64{MaxClockLead + 1, 2*MaxClockLead + 1} { // the clock is at 1, then MaxClockLead+1
		m := fmt.Appendf([]byte{kindUpdate}, `{"k":"zz%d","v":"x","t":%d,"w":"~"}`, i, t0)
		require.NoError(t, attacker.SendToAddress(ctx, a.Agent().Self().Addr, m))
		require.Eventually(t, func() bool { _, ok := a.Get(fmt.Sprintf("zz%d", i)); return ok }, 5*time.Second, 5*time.Millisecond)
	}
	require.NoError(t, a.Set(ctx, "after", "2")) // at 2·MaxClockLead+2
	b := newStore(t, plainCfg("b"))
	require.NoError(t, b.Join(ctx, a.Agent().Self().Addr))
	require.Eventually(t, func() bool { return b.Len() == 4 }, 10*time.Second, 5*time.Millisecond, "b got a's store")
	for i := range 5 {
		require.NoError(t, a.Set(ctx, "later", fmt.Sprint(i)))
	}
	everywhere(t, []*Store{a, b}, "later", "4", true, "a's writes after b joined")
	b.mu.Lock()
	bClock := b.clock
	b.mu.Unlock()
	assert.Equal(t, uint64(2*MaxClockLead+7), bClock, "a's clock: 2·MaxClockLead+2, and five writes")
}

// A piece of a store is taken only from the member this store asked
// last, with the token of that pull; the clock taken from it stops at
// maxAdopted, and its entries are bounded by MaxClockLead above that.
func TestPieceOfNoPullRefused(t *testing.T) {
	const L = MaxClockLead
	s := &Store{data: map[string]entry{}, clock: 5}
	e := entry{Key: "k", Value: "v", Time: 2*L + 7, Writer: "a"}
	for i, m := range []swim.Message{
		{From: "a", Data: piece(t, 1, 2*L+7, e)}, // no pull asked for
		{From: "", Data: piece(t, 0, 2*L+7, e)},  // the zero pull
	} {
		s.receive(m)
		assert.Equal(t, uint64(i+1), s.Rejected())
	}
	pulling(s, 1)
	for i, m := range []swim.Message{
		{From: "b", Data: piece(t, 1, 2*L+7, e)}, // another sender
		{From: "a", Data: piece(t, 2, 2*L+7, e)}, // another token
		{From: "a", Data: piece(t, 1, 2*L+7)[:pieceHeader-1]},
	} {
		s.receive(m)
		assert.Equal(t, uint64(i+3), s.Rejected())
	}
	assert.Equal(t, uint64(5), s.clock)
	assert.Empty(t, s.data)

	s.receive(swim.Message{From: "a", Data: piece(t, 1, 2*L+7, e)})
	assert.Equal(t, uint64(2*L+7), s.clock)
	assert.Equal(t, e, s.data["k"])
	assert.Equal(t, uint64(5), s.Rejected())

	s.receive(swim.Message{From: "a", Data: piece(t, 1, math.MaxUint64,
		entry{Key: "x", Time: maxAdopted + L, Writer: "a"},
		entry{Key: "y", Time: math.MaxUint64, Writer: "a"})})
	assert.Equal(t, uint64(maxAdopted+L), s.clock)
	assert.Contains(t, s.data, "x")
	assert.NotContains(t, s.data, "y")
	assert.Equal(t, uint64(6), s.Rejected())
}

// A joiner whose echo was taken but whose answer never came (a lost
// datagram) counts the pieces of its pull as the answer: Join returns
// nil once one came, and the piece's entries and clock are taken.
func TestPieceCountsAsAnswer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fake, err := agent.Start(ctx, plainCfg("a"))
	require.NoError(t, err)
	defer func() { _ = fake.Shutdown() }()
	msgs, stop := fake.Receive(16)
	defer stop()
	e := entry{Key: "k", Value: "v", Time: 3 * MaxClockLead, Writer: "a"}
	go func() {
		for m := range msgs {
			switch {
			case len(m.Data) == askLen && m.Data[0] == kindAsk:
				_ = fake.SendTo(ctx, m.From, chalMsg([][askNonceLen]byte{[askNonceLen]byte(m.Data[1:])}, [challengeLen]byte{}))
			case len(m.Data) == echoLen && m.Data[0] == kindEcho:
				b, _ := json.Marshal([]entry{e})
				head := append([]byte{kindState}, m.Data[1+challengeLen:]...)
				_ = fake.SendReliable(ctx, m.From, append(binary.BigEndian.AppendUint64(head, e.Time), b...))
			}
		}
	}()
	b := newStore(t, plainCfg("b"))
	joinCtx, joinCancel := context.WithTimeout(ctx, 10*askWait)
	defer joinCancel()
	require.NoError(t, b.Join(joinCtx, fake.Self().Addr))
	v, ok := b.Get("k")
	assert.True(t, ok)
	assert.Equal(t, "v", v)
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Equal(t, e.Time, b.clock)
}

// An answer must carry the token of the echo it answers: a forger who did
// not see the echo (plain mode: anyone who reaches the joiner's port, as
// a) cannot say "queued" for a member that answered otherwise, and have
// the joiner's Join return nil with no store coming. Here a has sent b
// its store within storeInterval and answers "served recently", while
// forged "queued" answers from a, with another token, keep arriving.
func TestForgedAnswerRefused(t *testing.T) {
	ctx, a, b := pair(t)
	stop := make(chan struct{})
	defer close(stop)
	b.mu.Lock()
	before := b.pull.want
	b.mu.Unlock()
	go func() {
		// From the echo on (b's want changes just before it).
		for {
			b.mu.Lock()
			w := b.pull.want
			b.mu.Unlock()
			if w != before {
				break
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
		forged := swim.Message{From: a.Agent().Self().ID, Data: append([]byte{kindAnswer, answerQueued}, make([]byte, tokenLen)...)}
		for {
			select {
			case b.pull.chals <- forged:
			case <-stop:
				return
			}
		}
	}()
	assert.False(t, b.askOne(ctx, a.Agent().Self().ID), "a forged answer was taken")
}

// joinViewOnly joins s's member to seed's group without pulling the store
// (agent.Join, not Store.Join), and waits until seed holds it live.
func joinViewOnly(ctx context.Context, t *testing.T, s, seed *Store) {
	t.Helper()
	require.NoError(t, s.Agent().Join(ctx, seed.Agent().Self().Addr))
	id := s.Agent().Self().ID
	require.Eventually(t, func() bool { _, err := seed.liveAddr(id); return err == nil }, 10*time.Second, 5*time.Millisecond, "%s live at the seed", id)
}

// A challenge forged under the asked member's ID and come first no longer
// takes the joiner's echo: it lacks the ask's nonce. One left in chals
// from an earlier ask is passed over too, and the member's own challenge
// is echoed, and the member queues the store. Before, only the first
// challenge was echoed, and a forger that got one in first made every
// ask of that member fail (issue 27, rvk).
func TestForgedChallengeFirstStillPulls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := newStore(t, stage1("kv-a"))
	b := newStore(t, stage1("kv-b"))
	joinViewOnly(ctx, t, b, a)
	aID := a.Agent().Self().ID
	b.pull.chals <- swim.Message{From: aID, Data: chalMsg([][askNonceLen]byte{[askNonceLen]byte{}}, [challengeLen]byte{})}
	assert.True(t, b.askOne(ctx, aID), "the member's own challenge, after a stale one, was not echoed")
}

// A challenge reaches askOne (chals) only from the member asked, with
// the nonce of the ask under way; one with another nonce, from another
// member, with no ask under way, or not a challenge's length (no nonce,
// the layout before asks carried one) is refused and counted in
// Rejected. So are answers without the token of the ask's echo.
func TestChallengeOfNoAskDropped(t *testing.T) {
	s := &Store{data: map[string]entry{}}
	s.pull.init()
	q := [askNonceLen]byte{1, 2, 3}
	tok := [tokenLen]byte{7}
	var chal [challengeLen]byte
	for i, m := range []swim.Message{
		{From: "a", Data: chalMsg([][askNonceLen]byte{q}, chal)}, // no ask under way
		{From: "a", Data: answerMsg(answerQueued, tok)},
	} {
		s.receive(m)
		assert.Equal(t, uint64(i+1), s.Rejected(), "message %d with no ask", i)
	}
	s.pull.ask = askState{id: "a", nonce: q}
	other := q
	other[askNonceLen-1] ^= 1
	for i, m := range []swim.Message{
		{From: "a", Data: chalMsg([][askNonceLen]byte{other}, chal)},        // another ask's nonce
		{From: "b", Data: chalMsg([][askNonceLen]byte{q}, chal)},            // another member
		{From: "a", Data: append([]byte{kindChal}, chal[:]...)},             // no nonce
		{From: "a", Data: append(chalMsg([][askNonceLen]byte{q}, chal), 0)}, // a byte more
		{From: "a", Data: answerMsg(answerQueued, tok)},                     // no echo yet
	} {
		s.receive(m)
		assert.Equal(t, uint64(i+3), s.Rejected(), "message %d", i)
	}
	assert.Empty(t, s.pull.chals)
	s.pull.want = pullReq{id: "a", token: tok}
	other2 := tok
	other2[0] ^= 1
	s.receive(swim.Message{From: "a", Data: answerMsg(answerQueued, other2)})
	assert.Equal(t, uint64(8), s.Rejected(), "an answer with another token")
	assert.Empty(t, s.pull.chals)

	s.receive(swim.Message{From: "a", Data: chalMsg([][askNonceLen]byte{q}, chal)})
	s.receive(swim.Message{From: "a", Data: chalMsg([][askNonceLen]byte{other, q}, chal)}) // with others' asks
	s.receive(swim.Message{From: "a", Data: answerMsg(answerQueued, tok)})
	assert.Equal(t, uint64(8), s.Rejected())
	require.Len(t, s.pull.chals, 3, "the ask's challenges and the echo's answer")
	assert.Equal(t, chalMsg([][askNonceLen]byte{q}, chal), (<-s.pull.chals).Data)
	assert.Equal(t, chalMsg([][askNonceLen]byte{other, q}, chal), (<-s.pull.chals).Data)
	assert.Equal(t, answerMsg(answerQueued, tok), (<-s.pull.chals).Data)
}

// Asks under IDs that no member holds are refused before they spend the
// budget of asks (asksPerWait per askWait): before, 70 such asks a second
// kept every real joiner's ask from being answered, and its Join failed
// (issue 27, user39 F4). A flood of them copies the view at most
// asksPerWait times per askWait.
func TestAsksOfNobodySpendNoBudget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := newStore(t, plainCfg("a"))
	c := newStore(t, plainCfg("c"))
	joinViewOnly(ctx, t, c, a)
	codec, conn := plainUDP(t)
	const flood = 2 * asksPerWait
	for i := range flood {
		nobody := swim.Node{ID: swim.ID(fmt.Sprint("nobody-", i)), Addr: conn.LocalAddr().String()}
		sendPlain(t, codec, conn, a, swim.Packet{Kind: swim.MsgUser, From: nobody, User: askMsg([askNonceLen]byte{byte(i)})})
	}
	require.Eventually(t, func() bool { return a.Rejected() >= flood }, 10*time.Second, 5*time.Millisecond, "the asks of nobody refused")
	assert.True(t, c.askOne(ctx, a.Agent().Self().ID), "a real joiner's ask within askWait of the flood")
}
