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
// kindAsk with a nonce drawn for the ask, the member answers with
// kindChal, the ask's nonce (and those of the other asks under the
// joiner's ID sent with it: chalsout.go) and a challenge (a fresh one,
// or the one in force: challenges.go), sent to the address it holds for
// the joiner,
// and the joiner sends kindEcho and the challenge back; the member then
// queues the joiner for its one sender of stores, unless it did so
// within storeInterval or stateQueue members wait already, and answers
// the echo (kindAnswer) with which, and the echo's token, so that only a
// member that saw the echo can answer it (challenges.go). The joiner
// takes only challenges carrying its ask's nonce, and answers carrying
// its echo's token (askOne). The layouts are in messages.go.

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
	// out is the challenges waiting to be sent (chalsout.go).
	out chalsOut
	// ask is the ask askOne waits on, under Store.mu: only its
	// member's challenges carrying its nonce, and that member's answers
	// carrying want's token, reach chals (pullMessage), so that a flood
	// from anyone who did not see the ask or the echo cannot fill it.
	ask askState
}

// askState is an ask under way: the member asked and the ask's nonce;
// the zero value when none is.
type askState struct {
	id    swim.ID
	nonce [askNonceLen]byte
}

func (p *puller) init() {
	p.queue = make(chan pullReq, stateQueue)
	p.out.init()
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

// errNoAsk is pullMessage's error for a challenge or an answer that is
// not for the ask askOne waits on: from another member, with another ask
// nonce or token (forged, or late for an earlier ask), or with no ask
// under way.
var errNoAsk = errors.New("a challenge or answer for no ask of this store")

// pullMessage handles a kindAsk, kindChal, kindEcho or kindAnswer
// message (messages.go). An error is counted in Rejected by receive.
func (s *Store) pullMessage(m swim.Message) error {
	switch m.Data[0] {
	case kindChal:
		asks, _, err := parseChal(m.Data)
		if err != nil {
			return err
		}
		s.mu.Lock()
		ask := s.pull.ask
		s.mu.Unlock()
		if ask.id == "" || m.From != ask.id || !answers(asks, ask.nonce) {
			return errNoAsk
		}
		return s.toAsker(m)
	case kindAnswer:
		_, token, err := parseAnswer(m.Data)
		if err != nil {
			return err
		}
		s.mu.Lock()
		ask, w := s.pull.ask, s.pull.want
		s.mu.Unlock()
		if ask.id == "" || m.From != ask.id || w.id != ask.id || subtle.ConstantTimeCompare(token[:], w.token[:]) != 1 {
			return errNoAsk
		}
		return s.toAsker(m)
	case kindAsk:
		ask, err := parseAsk(m.Data)
		if err != nil {
			return err
		}
		now := time.Now()
		if err := s.pull.table.resent(m.From, ask); err != nil {
			return err
		}
		addr, err := s.askerAddr(m.From, now)
		if err != nil {
			return err
		}
		// Only a new challenge spends the budget: a resend of the one in
		// force is bounded per ask by resent already.
		nonce, err := s.pull.table.challenge(m.From, addr, ask, now, func() (n [challengeLen]byte, err error) {
			if err := s.pull.table.admit(now); err != nil {
				return n, err
			}
			_, err = rand.Read(n[:])
			return n, err
		})
		if err != nil {
			return err
		}
		return s.pull.out.add(m.From, addr, nonce, ask, m.FromHeldAddr)
	default: // kindEcho
		chal, token, err := parseEcho(m.Data)
		if err != nil {
			return err
		}
		now := time.Now()
		addr, err := s.askerAddr(m.From, now)
		if err != nil {
			return err
		}
		ok, recent := s.pull.table.redeem(m.From, addr, chal[:], now)
		if !ok {
			return errors.New("an echo of no challenge of this store in force")
		}
		answer := answerRecent
		if !recent {
			select {
			case s.pull.queue <- pullReq{id: m.From, addr: addr, token: token}:
				s.pull.table.served(m.From, now)
				answer = answerQueued
			default:
				s.pull.dropped.Add(1)
				answer = answerBusy
			}
		}
		return s.sendTo(addr, answerMsg(answer, token))
	}
}

// toAsker passes m, a challenge or answer of the ask under way, to
// askOne. Only the member asked, or someone who saw the ask or the echo,
// can send one, and the member sends one challenge per ask and one
// answer per echo: chals is not full unless they flood it, and then m
// is refused.
func (s *Store) toAsker(m swim.Message) error {
	select {
	case s.pull.chals <- m:
		return nil
	default:
		return errors.New("challenges and answers of the ask under way queued already")
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

// askOne asks id for its store (a datagram with a fresh ask nonce),
// echoes its challenge (a reliable message) and waits for its answer;
// true when id queued the store for this member, or when a piece of the
// store came for this echo first (the answer, a datagram, may be lost,
// and the pieces of a later pull's echo would carry another token).
// False when no challenge came within askWait, the echo failed, or
// neither an answer nor a piece came within askWait of the echo, or the
// answer was another.
//
// It echoes the first challenge that carries the ask's nonce, and only
// that one. No one who did not see the ask can send such a challenge
// (pullMessage drops the others before they reach chals), and the
// member answers each ask once (challenges.resent), so the first is
// the member's own. Before the ask carried a nonce, a challenge forged
// under the member's ID and come first took the only echo (issue 27,
// rvk), and then, with three echoes per ask, a flood of them took all
// three and filled chals, so that the member's own was dropped (user39b
// F1: no joiner of five pulled within askWait under 12,500 forged
// challenges a second).
func (s *Store) askOne(ctx context.Context, id swim.ID) bool {
	select { // a piece of an earlier pull
	case <-s.pull.arrived:
	default:
	}
	var ask askState
	ask.id = id
	if _, err := rand.Read(ask.nonce[:]); err != nil {
		return false
	}
	s.mu.Lock()
	s.pull.ask = ask
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.pull.ask = askState{}
		s.mu.Unlock()
	}()
	if err := s.a.SendTo(ctx, id, askMsg(ask.nonce)); err != nil {
		return false
	}
	wait := time.NewTimer(askWait)
	defer wait.Stop()
	echoed := false
	var w pullReq // the pull echoed, once echoed
	for {
		select {
		case c := <-s.pull.chals:
			// chals may still hold what pullMessage let in for an earlier
			// ask: each is checked against this one again.
			if c.From != id {
				continue
			}
			if c.Data[0] == kindAnswer {
				answer, token, err := parseAnswer(c.Data)
				if err == nil && echoed && subtle.ConstantTimeCompare(token[:], w.token[:]) == 1 {
					return answer == answerQueued
				}
				continue // an answer to an earlier echo
			}
			asks, chal, err := parseChal(c.Data)
			if err != nil || echoed || !answers(asks, ask.nonce) {
				continue // echoed already, or for an earlier ask
			}
			w = pullReq{id: id}
			if _, err := rand.Read(w.token[:]); err != nil {
				return false
			}
			s.mu.Lock()
			s.pull.want = w // before the echo: the pieces may come before the answer
			s.mu.Unlock()
			if s.a.SendReliable(ctx, id, echoMsg(chal, w.token)) != nil {
				return false
			}
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
