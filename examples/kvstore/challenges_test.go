package kvstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// A challenge is good for one echo, from the member and address it was
// sent to, within challengeTTL; a store is queued for a member at most
// once per storeInterval (issue 27, user37 F4: the challenge was a hash
// of ID and address, the same for ever, and each echo of it drew the
// whole store).
func TestChallengeSingleUseAndTimeBound(t *testing.T) {
	t0 := time.Unix(1000, 0)
	n1 := [challengeLen]byte{1}
	n2 := [challengeLen]byte{2}
	var c challenges
	issue(&c, "b", "10.0.0.2:7946", n1, t0)
	for _, r := range []struct {
		id, addr string
		chal     []byte
		at       time.Duration
		ok       bool
	}{
		{"b", "10.0.0.2:7946", n2[:], 0, false},            // another value
		{"b", "10.0.0.2:7946", n1[:4], 0, false},           // a prefix
		{"c", "10.0.0.2:7946", n1[:], 0, false},            // another member
		{"b", "10.0.0.3:7946", n1[:], 0, false},            // another address
		{"b", "10.0.0.2:7946", n1[:], challengeTTL, true},  // the last instant
		{"b", "10.0.0.2:7946", n1[:], challengeTTL, false}, // echoed already
	} {
		ok, recent := c.redeem(swim.ID(r.id), r.addr, r.chal, t0.Add(r.at))
		assert.Equal(t, r.ok, ok, "%+v", r)
		assert.False(t, recent)
	}
	issue(&c, "b", "10.0.0.2:7946", n2, t0)
	ok, _ := c.redeem("b", "10.0.0.2:7946", n2[:], t0.Add(challengeTTL+1))
	assert.False(t, ok, "expired")

	// Queued at t1: refused another store until storeInterval has passed.
	t1 := t0.Add(time.Minute)
	issue(&c, "b", "10.0.0.2:7946", n1, t1)
	ok, recent := c.redeem("b", "10.0.0.2:7946", n1[:], t1)
	assert.True(t, ok)
	assert.False(t, recent)
	c.served("b", t1)
	issue(&c, "b", "10.0.0.2:7946", n2, t1.Add(storeInterval-1))
	ok, recent = c.redeem("b", "10.0.0.2:7946", n2[:], t1.Add(storeInterval-1))
	assert.Equal(t, []bool{true, true}, []bool{ok, recent})
	issue(&c, "b", "10.0.0.2:7946", n1, t1.Add(storeInterval))
	ok, recent = c.redeem("b", "10.0.0.2:7946", n1[:], t1.Add(storeInterval))
	assert.Equal(t, []bool{true, false}, []bool{ok, recent})
	// An ask while a challenge is in force gets that challenge again, not
	// a new one (a forged ask under b's ID voided b's challenge before
	// its echo came: issue 27, rvk); at another address, a new one.
	assert.Equal(t, n1, issue(&c, "b", "10.0.0.2:7946", n1, t1))
	assert.Equal(t, n1, issue(&c, "b", "10.0.0.2:7946", n2, t1.Add(challengeTTL)))
	ok, _ = c.redeem("b", "10.0.0.2:7946", n2[:], t1.Add(challengeTTL))
	assert.False(t, ok)
	ok, _ = c.redeem("b", "10.0.0.2:7946", n1[:], t1.Add(challengeTTL))
	assert.True(t, ok)
	assert.Equal(t, n1, issue(&c, "b", "10.0.0.2:7946", n1, t1))
	assert.Equal(t, n2, issue(&c, "b", "10.0.0.3:7946", n2, t1))
	ok, _ = c.redeem("b", "10.0.0.3:7946", n2[:], t1)
	assert.True(t, ok)
}

// issue is the challenge c sends at now to id at addr, n if it draws one,
// for an ask with nonce n too.
func issue(c *challenges, id swim.ID, addr string, n [challengeLen]byte, now time.Time) [challengeLen]byte {
	got, err := c.challenge(id, addr, [askNonceLen]byte(n), now, func() ([challengeLen]byte, error) { return n, nil })
	if err != nil {
		panic(err)
	}
	return got
}

// An ask is answered once: a second ask with the nonce last answered for
// that member is refused, one with another nonce is answered, with the
// challenge in force. At most asksPerWait new challenges, for any live
// members, are drawn in one askWait.
func TestAsksBounded(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var c challenges
	n := [challengeLen]byte{9}
	q1, q2 := [askNonceLen]byte{1}, [askNonceLen]byte{2}
	require.NoError(t, c.resent("b", q1))
	_, err := c.challenge("b", "a", q1, t0, func() ([challengeLen]byte, error) { return n, nil })
	require.NoError(t, err)
	assert.ErrorIs(t, c.resent("b", q1), errAskedAgain)
	require.NoError(t, c.resent("c", q1), "another member's ask")
	require.NoError(t, c.resent("b", q2))
	got, err := c.challenge("b", "a", q2, t0.Add(time.Millisecond), func() ([challengeLen]byte, error) {
		return [challengeLen]byte{}, errors.New("drew a new challenge")
	})
	require.NoError(t, err)
	assert.Equal(t, n, got, "the challenge in force")
	assert.ErrorIs(t, c.resent("b", q2), errAskedAgain)
	require.NoError(t, c.resent("b", q1), "q1 is no longer the ask answered last")

	t1 := t0.Add(time.Minute)
	for i := range asksPerWait {
		require.NoError(t, c.admit(t1), i)
	}
	assert.ErrorIs(t, c.admit(t1.Add(askWait-1)), errTooManyAsks)
	assert.NoError(t, c.admit(t1.Add(askWait)))
}

// The table holds at most maxPullers members: stale ones go first, then
// the one heard of least recently, whose challenge is then refused.
func TestChallengeTableBounded(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var c challenges
	n := [challengeLen]byte{7}
	for i := range maxPullers {
		issue(&c, swim.ID(fmt.Sprint("m", i)), "a", n, t0.Add(time.Duration(i)*time.Millisecond))
	}
	c.served("m5", t0.Add(500*time.Millisecond)) // heard of last, though issued early
	issue(&c, "x", "a", n, t0.Add(time.Second))
	assert.Len(t, c.m, maxPullers)
	ok, _ := c.redeem("m0", "a", n[:], t0.Add(time.Second))
	assert.False(t, ok, "m0, the oldest, made room")
	for _, id := range []swim.ID{"m1", "m5", "x"} {
		ok, _ := c.redeem(id, "a", n[:], t0.Add(time.Second))
		assert.True(t, ok, id)
	}
	// At t0+3s every challenge is older than challengeTTL or echoed, and
	// only m5's store is within storeInterval: the full table drops all
	// the others.
	later := t0.Add(3 * time.Second)
	issue(&c, "y", "a", n, later)
	issue(&c, "z", "a", n, later)
	assert.Len(t, c.m, 3)
	for _, id := range []swim.ID{"m5", "y", "z"} {
		assert.Contains(t, c.m, id)
	}
}
