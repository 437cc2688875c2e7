package kvstore

import (
	"crypto/subtle"
	"errors"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// The challenges a member has sent to members asking for its store, and
// the stores it has queued for them (package comment): a challenge is a
// random nonce, good for one echo, from the member it was sent to at the
// address it was sent to, within challengeTTL; a member is queued the
// store at most once per storeInterval. The table holds at most
// maxPullers members; when it is full, the member heard from least
// recently makes room.
//
// An ask while a challenge is in force is answered with the same
// challenge, not with a new one: in plain mode anyone can send kindAsk
// under a joiner's ID, and a new challenge per ask let a forger void the
// joiner's before its echo came back, so that the joiner could not pull
// from that member. Each ask is answered once, with its own nonce
// (messages.go); a second ask with the nonce last answered for that
// member draws nothing (resent). There is no bound per member on the
// answers beside: the joiner takes only a challenge carrying its own
// ask's nonce, so a bound that asks forged under its ID could spend (a
// quarter askWait between two sends, before) left its own asks
// unanswered. A forged ask under a live member's ID so draws its nonce
// in a challenge to the address the view holds for that member, the
// asks for one member that come while the sender is busy answered in
// one datagram (chalsout.go): no more bytes than the forger sent. New
// challenges are bounded by asksPerWait per askWait, from any members
// (admit).

// challengeTTL is how long a challenge may be echoed after it was sent.
const challengeTTL = 2 * askWait

// storeInterval is how long after a store was queued for a member it is
// refused another (echoStatus answerRecent).
const storeInterval = 5 * askWait

// maxPullers bounds the members the table remembers.
const maxPullers = 64

// asksPerWait is how many asks the table answers in one askWait at most:
// as many as it remembers members.
const asksPerWait = maxPullers

// The answers to an echo (kindAnswer, one of these, the echo's token),
// sent to the echoing member: only an echo of a challenge that this store
// sent is answered.
const (
	answerQueued byte = 'q' // the store will be sent
	answerBusy   byte = 'b' // stateQueue members wait already: ask again, or another member
	answerRecent byte = 'r' // a store was queued for this member within storeInterval
)

// pullerState is what the table holds for one member.
type pullerState struct {
	nonce  [challengeLen]byte
	ask    [askNonceLen]byte // the nonce of the ask answered last
	addr   string
	issued time.Time // zero once echoed
	sent   time.Time // when the challenge was last sent
	served time.Time // when a store was last queued, or zero
}

// challenges is the table. It is used by the store's one receiving
// goroutine only.
type challenges struct {
	m    map[swim.ID]*pullerState
	asks perWait // the asks answered, at most asksPerWait per askWait
}

// perWait counts events in windows of askWait: take reports whether one
// more fits under limit in the window holding now (a new window starts
// askWait after the last one started, or when the clock went back).
type perWait struct {
	since time.Time
	n     int
}

func (w *perWait) take(now time.Time, limit int) bool {
	if now.Sub(w.since) >= askWait || now.Before(w.since) {
		w.since, w.n = now, 0
	}
	if w.n >= limit {
		return false
	}
	w.n++
	return true
}

// inForce reports whether st's challenge may still be echoed at now.
func (st *pullerState) inForce(now time.Time) bool {
	return !st.issued.IsZero() && now.Sub(st.issued) <= challengeTTL
}

// last is when the table last heard of st.
func (st *pullerState) last() time.Time {
	if st.sent.After(st.served) {
		return st.sent
	}
	return st.served
}

// stale reports whether st holds nothing in force at now.
func (st *pullerState) stale(now time.Time) bool {
	return !st.inForce(now) &&
		(st.served.IsZero() || now.Sub(st.served) >= storeInterval)
}

// resent reports errAskedAgain when ask is the nonce of the ask last
// answered for id: a duplicate, or a replay, of an ask draws nothing.
func (c *challenges) resent(id swim.ID, ask [askNonceLen]byte) error {
	if st := c.m[id]; st != nil && st.ask == ask {
		return errAskedAgain
	}
	return nil
}

// admit reports errTooManyAsks when asksPerWait new challenges were
// drawn within askWait, and otherwise counts this one. The caller checks
// the asker first (resent, and that it is a live member), so that asks
// under IDs nobody holds do not spend the budget, and calls it only for
// an ask that draws a new challenge: asks forged under live members' IDs,
// each resending the challenge in force four times a second, spent it
// for real joiners with 17 IDs (issue 27, user39b F2); a new challenge
// per ID comes at most once per challengeTTL, or per echo.
func (c *challenges) admit(now time.Time) error {
	if !c.asks.take(now, asksPerWait) {
		return errTooManyAsks
	}
	return nil
}

// The errors of resent and admit, counted in Rejected.
var (
	errAskedAgain  = errors.New("an ask with the nonce of the ask answered last")
	errTooManyAsks = errors.New("too many asks for the store at once")
)

// challenge returns the challenge to send at now to id at addr: the one
// in force, sent to that address, or else a new one from draw, which
// replaces id's earlier one.
func (c *challenges) challenge(id swim.ID, addr string, ask [askNonceLen]byte, now time.Time, draw func() ([challengeLen]byte, error)) ([challengeLen]byte, error) {
	if c.m == nil {
		c.m = map[swim.ID]*pullerState{}
	}
	st := c.m[id]
	if st != nil && st.inForce(now) && st.addr == addr {
		st.sent, st.ask = now, ask
		return st.nonce, nil
	}
	nonce, err := draw()
	if err != nil {
		return nonce, err
	}
	if st == nil {
		c.makeRoom(now)
		st = &pullerState{}
		c.m[id] = st
	}
	st.nonce, st.addr, st.issued, st.sent, st.ask = nonce, addr, now, now, ask
	return nonce, nil
}

// makeRoom drops the stale entries when the table is full, and then, if
// it is still full, the entry heard of least recently.
func (c *challenges) makeRoom(now time.Time) {
	if len(c.m) < maxPullers {
		return
	}
	var oldest swim.ID
	var at time.Time
	for id, st := range c.m {
		if st.stale(now) {
			delete(c.m, id)
			continue
		}
		if at.IsZero() || st.last().Before(at) {
			oldest, at = id, st.last()
		}
	}
	if len(c.m) >= maxPullers {
		delete(c.m, oldest)
	}
}

// redeem takes the echo chal from id at addr at now. ok is false for an
// echo of no challenge in force: none sent to id, sent to another
// address, echoed already, older than challengeTTL, or another value;
// such an echo is not answered. Otherwise the challenge is used up, and
// recent reports whether a store was queued for id within storeInterval.
func (c *challenges) redeem(id swim.ID, addr string, chal []byte, now time.Time) (ok, recent bool) {
	st := c.m[id]
	if st == nil || st.issued.IsZero() || st.addr != addr || now.Sub(st.issued) > challengeTTL ||
		subtle.ConstantTimeCompare(chal, st.nonce[:]) != 1 {
		return false, false
	}
	st.issued = time.Time{}
	return true, !st.served.IsZero() && now.Sub(st.served) < storeInterval
}

// served records that a store was queued for id at now.
func (c *challenges) served(id swim.ID, now time.Time) {
	if st := c.m[id]; st != nil {
		st.served = now
	}
}
