package kvstore

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

// The pull of a store by a joiner (package comment): the joiner sends
// kindAsk, the member answers with kindChal and a challenge (a fresh
// one, or the one in force: challenges.go), sent to the address it holds
// for the joiner, and the joiner sends kindEcho and the challenge back;
// the member then queues the joiner for its one sender of stores, unless
// it did so within storeInterval or stateQueue members wait already, and
// answers the echo (kindAnswer) with which, and the echo's token, so that
// only a member that saw the echo can answer it (challenges.go).

// stateQueue is how many members asking for the store wait for the one
// sender at most; one more request is answered busy (AnswersDropped).
const stateQueue = 4

// askWait is how long a joiner waits for a member's challenge, and then
// for its answer to the echo, before it asks again, or asks the next
// member.
const askWait = time.Second

// challengeLen is the length of a challenge in bytes.
const challengeLen = 16

// tokenLen is the length in bytes of the token a joiner draws for each
// pull, sends with its echo, and finds in every piece of the store sent
// for it (receivePiece).
const tokenLen = 16

// puller is a store's part in pulls: the challenges sent and stores
// queued (used by the receiving goroutine only), the queue of members to
// send the store to, and the challenges and answers received while this
// store asks.
type puller struct {
	table   challenges
	queue   chan pullReq
	done    chan struct{}
	dropped atomic.Uint64
	asking  sync.Mutex // one Join's ask at a time
	chals   chan swim.Message
	// want is the pull this store asked for last, whose pieces it takes
	// (receivePiece), under Store.mu; arrived is signalled when one is
	// taken.
	want    pullReq
	arrived chan struct{}
	// view is the copy of the view's live members that askerAddr looks
	// asks up in (the receiving goroutine's).
	view struct {
		at     time.Time
		addrs  map[swim.ID]string
		misses perWait // the copies taken for asks it lacked
	}
	// asked is the member askOne asks, under Store.mu: challenges and
	// answers from others are dropped before they reach chals, so that a
	// flood under other IDs cannot fill it.
	asked swim.ID
}

func (p *puller) init() {
	p.queue = make(chan pullReq, stateQueue)
	p.done = make(chan struct{})
	p.chals = make(chan swim.Message, 4)
	p.arrived = make(chan struct{}, 1)
}

// AnswersDropped counts the requests for this store (echoed challenges)
// not taken because stateQueue members were already waiting for it; each
// was answered answerBusy, and the joiner asks again.
func (s *Store) AnswersDropped() uint64 { return s.pull.dropped.Load() }

// errNotAlive is pullMessage's error for a request from a member that is
// not alive or suspect in this member's view.
var errNotAlive = errors.New("not a live member here")

// pullMessage handles a kindAsk, kindChal, kindEcho or kindAnswer
// message. An error is counted in Rejected by receive.
func (s *Store) pullMessage(m swim.Message) error {
	switch m.Data[0] {
	case kindChal, kindAnswer:
		if m.Data[0] == kindChal && len(m.Data) != 1+challengeLen {
			return fmt.Errorf("challenge of %d bytes, want %d", len(m.Data)-1, challengeLen)
		}
		if m.Data[0] == kindAnswer && len(m.Data) != 2+tokenLen {
			return fmt.Errorf("answer of %d bytes, want %d", len(m.Data)-1, 1+tokenLen)
		}
		s.mu.Lock()
		asked := s.pull.asked
		s.mu.Unlock()
		if m.From != asked {
			return nil // nobody asking, or another member asked
		}
		select {
		case s.pull.chals <- m:
		default: // a flood under the asked member's ID: the asker asks again
		}
		return nil
	case kindAsk:
		if len(m.Data) != 1 {
			return fmt.Errorf("request of %d bytes, want 1", len(m.Data))
		}
		now := time.Now()
		if err := s.pull.table.resent(m.From, now); err != nil {
			return err
		}
		addr, err := s.askerAddr(m.From, now)
		if err != nil {
			return err
		}
		// Only a new challenge spends the budget: a resend of the one in
		// force is bounded per ID by resent already.
		nonce, err := s.pull.table.challenge(m.From, addr, now, func() (n [challengeLen]byte, err error) {
			if err := s.pull.table.admit(now); err != nil {
				return n, err
			}
			_, err = rand.Read(n[:])
			return n, err
		})
		if err != nil {
			return err
		}
		return s.sendTo(addr, append([]byte{kindChal}, nonce[:]...))
	default: // kindEcho
		if len(m.Data) != 1+challengeLen+tokenLen {
			return fmt.Errorf("echo of %d bytes, want %d", len(m.Data)-1, challengeLen+tokenLen)
		}
		now := time.Now()
		addr, err := s.askerAddr(m.From, now)
		if err != nil {
			return err
		}
		ok, recent := s.pull.table.redeem(m.From, addr, m.Data[1:1+challengeLen], now)
		if !ok {
			return errors.New("an echo of no challenge of this store in force")
		}
		answer := answerRecent
		if !recent {
			select {
			case s.pull.queue <- pullReq{id: m.From, token: [tokenLen]byte(m.Data[1+challengeLen:])}:
				s.pull.table.served(m.From, now)
				answer = answerQueued
			default:
				s.pull.dropped.Add(1)
				answer = answerBusy
			}
		}
		return s.sendTo(addr, append([]byte{kindAnswer, answer}, m.Data[1+challengeLen:]...))
	}
}

// sendTo sends data to addr in a datagram, within a second.
func (s *Store) sendTo(addr string, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.a.SendToAddress(ctx, addr, data)
}

// viewMaxAge is the most time a copy of the view is used to look up
// askers (askerAddr).
const viewMaxAge = askWait

// askerAddr is liveAddr for the receiving goroutine's asks and echoes,
// from a copy of the view's live members (puller.view): copied again when
// older than viewMaxAge, or when it lacks id, at most asksPerWait times
// per askWait for the latter, so that a flood of asks under IDs nobody
// holds costs at most that many copies of the view, and a joiner that
// joined since the last copy is found.
func (s *Store) askerAddr(id swim.ID, now time.Time) (string, error) {
	v := &s.pull.view
	addr, ok := v.addrs[id]
	age := now.Sub(v.at)
	stale := age >= viewMaxAge || age < 0
	if !ok && !stale {
		stale = v.misses.take(now, asksPerWait)
	}
	if stale {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		ms, err := s.a.MembersContext(ctx)
		if err != nil {
			return "", err
		}
		clear(v.addrs)
		if v.addrs == nil {
			v.addrs = make(map[swim.ID]string, len(ms))
		}
		for _, m := range ms {
			if live(m) {
				v.addrs[m.Node.ID] = m.Node.Addr
			}
		}
		v.at = now
		addr, ok = v.addrs[id]
	}
	if !ok {
		return "", fmt.Errorf("%q: %w", id, errNotAlive)
	}
	return addr, nil
}

// live reports whether m is another member, alive or suspect: one that
// may ask for the store, or be asked.
func live(m agent.Member) bool {
	return !m.Self && (m.State == swim.StateAlive || m.State == swim.StateSuspect)
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
		if m.Node.ID == id && live(m) {
			return m.Node.Addr, nil
		}
	}
	return "", fmt.Errorf("%q: %w", id, errNotAlive)
}

// ask asks the live members, in the view's order, for their store until
// one takes the request (answers answerQueued), each for askWait per
// step, until ctx ends; a member that answers otherwise, or not at all,
// is passed over, and the members are asked again from the first.
func (s *Store) ask(ctx context.Context) error {
	s.pull.asking.Lock()
	defer s.pull.asking.Unlock()
	for {
		ms, err := s.a.MembersContext(ctx)
		if err != nil {
			return fmt.Errorf("kvstore: joined, but asking for the store: %w", err)
		}
		for _, m := range ms {
			if !live(m) {
				continue
			}
			if s.askOne(ctx, m.Node.ID) {
				return nil
			}
			if ctx.Err() != nil {
				return fmt.Errorf("kvstore: joined, but no member queued the store for it: %w", ctx.Err())
			}
		}
		select { // none answered, or none is live yet: look again shortly
		case <-time.After(askWait / 10):
		case <-ctx.Done():
			return fmt.Errorf("kvstore: joined, but no member queued the store for it: %w", ctx.Err())
		}
	}
}

// maxEchoes is how many distinct challenges from the member asked a
// joiner echoes in one ask: a challenge forged under its ID, come first,
// drew the only echo, and the member's own was ignored (issue 27, rvk);
// the member answers only the echo of its own, so one more echo is one
// more reliable message, and a flood of forged challenges draws at most
// maxEchoes of them.
const maxEchoes = 3

// echoes returns the slot of seen in which the challenge chal, not
// echoed yet, is recorded once echoed, or −1 when chal is in seen
// already or seen is full.
func echoes(seen [][]byte, chal []byte) int {
	for i, c := range seen {
		if c == nil {
			return i
		}
		if subtle.ConstantTimeCompare(c, chal) == 1 {
			return -1
		}
	}
	return -1
}

// askOne asks id for its store (a datagram), echoes its challenge (a
// reliable message) and waits for its answer; true when id queued the
// store for this member, or when a piece of the store came for this
// echo first (the answer, a datagram, may be lost, and the pieces of a
// later pull's echo would carry another token). False when no challenge
// came within askWait, the echo failed, or neither an answer nor a piece
// came within askWait of the echo, or the answer was another.
func (s *Store) askOne(ctx context.Context, id swim.ID) bool {
	select { // a piece of an earlier pull
	case <-s.pull.arrived:
	default:
	}
	s.mu.Lock()
	s.pull.asked = id
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.pull.asked = ""
		s.mu.Unlock()
	}()
	if err := s.a.SendTo(ctx, id, []byte{kindAsk}); err != nil {
		return false
	}
	wait := time.NewTimer(askWait)
	defer wait.Stop()
	echoed := false
	var w pullReq              // the pull echoed, once echoed
	var seen [maxEchoes][]byte // the challenges echoed
	for {
		select {
		case c := <-s.pull.chals:
			if c.From != id {
				continue
			}
			if c.Data[0] == kindAnswer {
				if echoed && subtle.ConstantTimeCompare(c.Data[2:], w.token[:]) == 1 {
					return c.Data[1] == answerQueued
				}
				continue // an answer to an earlier echo, or forged
			}
			n := echoes(seen[:], c.Data[1:])
			if n < 0 {
				continue // echoed already, or maxEchoes echoed
			}
			if !echoed {
				w = pullReq{id: id}
				if _, err := rand.Read(w.token[:]); err != nil {
					return false
				}
				s.mu.Lock()
				s.pull.want = w // before the echo: the pieces may come before the answer
				s.mu.Unlock()
			}
			echo := append(append([]byte{kindEcho}, c.Data[1:]...), w.token[:]...)
			if s.a.SendReliable(ctx, id, echo) != nil {
				return false
			}
			seen[n] = c.Data[1:]
			echoed = true
			wait.Reset(askWait)
		case <-s.pull.arrived:
			if echoed {
				return true
			}
		case <-wait.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}
