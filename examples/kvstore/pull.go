package kvstore

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// The pull of a store by a joiner (package comment): the joiner sends
// kindAsk, the member answers with kindChal and the challenge, sent to
// the address it holds for the joiner, and the joiner sends kindEcho and
// the challenge back; the member then queues the joiner for its one
// sender of stores.

// stateQueue is how many members asking for the store wait for the one
// sender at most; one more request is dropped (AnswersDropped).
const stateQueue = 4

// askWait is how long a joiner waits for a member's challenge before it
// asks again, or asks the next member.
const askWait = time.Second

// challengeLen is the length of a challenge in bytes.
const challengeLen = 16

// puller is a store's part in pulls: the key of its challenges, the
// queue of members to send the store to, and the challenges received
// while this store asks.
type puller struct {
	key     [32]byte
	queue   chan swim.ID
	done    chan struct{}
	dropped atomic.Uint64
	asking  sync.Mutex // one Join's ask at a time
	chals   chan swim.Message
}

func (p *puller) init() error {
	if _, err := rand.Read(p.key[:]); err != nil {
		return fmt.Errorf("kvstore: drawing the challenge key: %w", err)
	}
	p.queue = make(chan swim.ID, stateQueue)
	p.done = make(chan struct{})
	p.chals = make(chan swim.Message, 4)
	return nil
}

// challenge is the challenge for the member id at addr.
func (p *puller) challenge(id swim.ID, addr string) []byte {
	h := hmac.New(sha256.New, p.key[:])
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write([]byte(addr))
	return h.Sum(nil)[:challengeLen]
}

// AnswersDropped counts the requests for this store (echoed challenges)
// dropped because stateQueue members were already waiting for it.
func (s *Store) AnswersDropped() uint64 { return s.pull.dropped.Load() }

// errNotAlive is pullMessage's error for a request from a member that is
// not alive or suspect in this member's view.
var errNotAlive = errors.New("not a live member here")

// pullMessage handles a kindAsk, kindChal or kindEcho message. An error
// is counted in Rejected by receive.
func (s *Store) pullMessage(m swim.Message) error {
	switch m.Data[0] {
	case kindChal:
		if len(m.Data) != 1+challengeLen {
			return fmt.Errorf("challenge of %d bytes, want %d", len(m.Data)-1, challengeLen)
		}
		select {
		case s.pull.chals <- m:
		default: // nobody asking, or a flood: the asker asks again
		}
		return nil
	case kindAsk:
		if len(m.Data) != 1 {
			return fmt.Errorf("request of %d bytes, want 1", len(m.Data))
		}
		addr, err := s.liveAddr(m.From)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return s.a.SendToAddress(ctx, addr, append([]byte{kindChal}, s.pull.challenge(m.From, addr)...))
	default: // kindEcho
		addr, err := s.liveAddr(m.From)
		if err != nil {
			return err
		}
		if !hmac.Equal(m.Data[1:], s.pull.challenge(m.From, addr)) {
			return errors.New("an echo of no challenge of this store")
		}
		select {
		case s.pull.queue <- m.From:
		default:
			s.pull.dropped.Add(1)
		}
		return nil
	}
}

// liveAddr returns the address this member holds for the alive or
// suspect member id.
func (s *Store) liveAddr(id swim.ID) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ms, err := s.a.MembersContext(ctx)
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if m.Node.ID == id && !m.Self && (m.State == swim.StateAlive || m.State == swim.StateSuspect) {
			return m.Node.Addr, nil
		}
	}
	return "", fmt.Errorf("%q: %w", id, errNotAlive)
}

// ask asks the live members, in the view's order, for their store until
// one takes the request (echoes are not acknowledged: a taken request is
// one whose challenge came back), each for askWait, until ctx ends.
func (s *Store) ask(ctx context.Context) error {
	s.pull.asking.Lock()
	defer s.pull.asking.Unlock()
	for {
		ms, err := s.a.MembersContext(ctx)
		if err != nil {
			return fmt.Errorf("kvstore: joined, but asking for the store: %w", err)
		}
		for _, m := range ms {
			if m.Self || (m.State != swim.StateAlive && m.State != swim.StateSuspect) {
				continue
			}
			if s.askOne(ctx, m.Node.ID) {
				return nil
			}
			if ctx.Err() != nil {
				return fmt.Errorf("kvstore: joined, but no member answered the request for the store: %w", ctx.Err())
			}
		}
		select { // none answered, or none is live yet: look again shortly
		case <-time.After(askWait / 10):
		case <-ctx.Done():
			return fmt.Errorf("kvstore: joined, but no member answered the request for the store: %w", ctx.Err())
		}
	}
}

// askOne asks id for its store (a datagram) and echoes its challenge
// (a reliable message, acknowledged once id's agent has it); false when
// no challenge came within askWait or the echo failed.
func (s *Store) askOne(ctx context.Context, id swim.ID) bool {
	if err := s.a.SendTo(ctx, id, []byte{kindAsk}); err != nil {
		return false
	}
	wait := time.NewTimer(askWait)
	defer wait.Stop()
	for {
		select {
		case c := <-s.pull.chals:
			if c.From != id {
				continue
			}
			return s.a.SendReliable(ctx, id, append([]byte{kindEcho}, c.Data[1:]...)) == nil
		case <-wait.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}
