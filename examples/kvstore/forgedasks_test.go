package kvstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fdkit/fdkit/swim"
)

// Asks forged under the IDs of live members passed resent four times a
// second each (then a quarter askWait between two sends of a challenge);
// when every ask spent the shared budget (asksPerWait per askWait), more
// than asksPerWait/4 = 16 live members' IDs, known to anyone by gossip in
// plain mode, were enough to spend it, and real joiners' asks were
// refused until the next window (issue 27, user39b F2: 3 of 5 joiners
// timed out with 40 members). Only a new challenge spends the budget
// now. 24 members here, each asked under 20 times a second with a new
// nonce: with the old rule the joiners time out.
func TestAsksForgedUnderLiveIDsSpendNoBudget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	a := newStore(t, plainCfg("a"))
	const members = 24
	var ids []swim.Node
	for i := range members {
		m := newStore(t, plainCfg(fmt.Sprint("m", i)))
		joinViewOnly(ctx, t, m, a)
		ids = append(ids, m.Agent().Self())
	}
	codec, conn := plainUDP(t)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var q [askNonceLen]byte
		for i := uint64(0); ; i++ {
			binary.BigEndian.PutUint64(q[:], i)
			for _, n := range ids {
				if _, err := trySendPlain(codec, conn, a, swim.Packet{Kind: swim.MsgUser, From: n, User: askMsg(q)}); err != nil {
					t.Errorf("ask forged under %s: %v", n.ID, err) // not require: this is not the test's goroutine
					return
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	defer func() { close(stop); <-done }()
	const joiners = 5
	fast := 0
	for j := range joiners {
		b := newStore(t, plainCfg(fmt.Sprint("b", j)))
		joinViewOnly(ctx, t, b, a)
		jctx, jcancel := context.WithTimeout(ctx, 6*time.Second)
		start := time.Now()
		err := b.askOneRetry(jctx, a.Agent().Self().ID)
		took := time.Since(start)
		jcancel()
		t.Logf("joiner %d: %v after %v, a rejected %d", j, err, took.Round(time.Millisecond), a.Rejected())
		if err == nil && took < 3*askWait { // about 1 ms unflooded; blocked joiners took the whole 6 s
			fast++
		}
		_ = b.Close()
	}
	assert.Equal(t, joiners, fast, "joiners that pulled within 3·askWait under asks forged under live IDs")
}

// askOneRetry asks id only (ask asks every live member) until it queues.
func (s *Store) askOneRetry(ctx context.Context, id swim.ID) error {
	for ctx.Err() == nil {
		if s.askOne(ctx, id) {
			return nil
		}
	}
	return ctx.Err()
}
