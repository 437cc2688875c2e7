package kvstore

import (
	"crypto/subtle"
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

// challengeTTL is how long a challenge may be echoed after it was sent.
const challengeTTL = 2 * askWait

// storeInterval is how long after a store was queued for a member it is
// refused another (echoStatus answerRecent).
const storeInterval = 5 * askWait

// maxPullers bounds the members the table remembers.
const maxPullers = 64

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
	addr   string
	issued time.Time // zero once echoed
	served time.Time // when a store was last queued, or zero
}

// challenges is the table. It is used by the store's one receiving
// goroutine only.
type challenges struct {
	m map[swim.ID]*pullerState
}

// last is when the table last heard of st.
func (st *pullerState) last() time.Time {
	if st.issued.After(st.served) {
		return st.issued
	}
	return st.served
}

// stale reports whether st holds nothing in force at now.
func (st *pullerState) stale(now time.Time) bool {
	return (st.issued.IsZero() || now.Sub(st.issued) > challengeTTL) &&
		(st.served.IsZero() || now.Sub(st.served) >= storeInterval)
}

// issue records nonce as the challenge sent at now to id at addr,
// replacing any earlier one of id's.
func (c *challenges) issue(id swim.ID, addr string, nonce [challengeLen]byte, now time.Time) {
	if c.m == nil {
		c.m = map[swim.ID]*pullerState{}
	}
	st := c.m[id]
	if st == nil {
		c.makeRoom(now)
		st = &pullerState{}
		c.m[id] = st
	}
	st.nonce, st.addr, st.issued = nonce, addr, now
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
