package wire

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// fakeClock is a settable clock for ReplayConfig.Now.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func replayCodec(t *testing.T, kr *Keyring, clk *fakeClock, mut func(*ReplayConfig)) *Codec {
	t.Helper()
	cfg := ReplayConfig{Now: clk.now}
	if mut != nil {
		mut(&cfg)
	}
	c, err := NewCodec(CodecConfig{Security: &Security{Keyring: kr}, Replay: cfg})
	require.NoError(t, err)
	return c
}

func pingFrom(id string, seq uint32) *swim.Packet {
	return &swim.Packet{Kind: swim.MsgPing, From: node(id), To: node("r"), Ping: swim.Ping{Seq: seq}}
}

func seal(t *testing.T, c *Codec, p *swim.Packet) []byte {
	t.Helper()
	b, _, err := c.Encode(p)
	require.NoError(t, err)
	return b
}

// A sealed packet is accepted once; its replay is refused with ErrReplay,
// and overtaken or delayed packets are still accepted once.
func TestReplayRefusedOnce(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s, r := replayCodec(t, kr, clk, nil), replayCodec(t, kr, clk, nil)
	clk.t = clk.t.Add(time.Millisecond)
	p1 := seal(t, s, pingFrom("s", 1))
	p2 := seal(t, s, pingFrom("s", 2)) // same clock reading: stamped one ns later
	_, err := r.Decode(p2)
	require.NoError(t, err)
	_, err = r.Decode(p1)
	require.NoError(t, err, "reordered within the window")
	for _, p := range [][]byte{p1, p2} {
		_, err = r.Decode(p)
		assert.ErrorIs(t, err, ErrReplay)
	}
	// A packet delayed 3 s behind a newer one is accepted once.
	old := seal(t, s, pingFrom("s", 3))
	clk.t = clk.t.Add(3 * time.Second)
	_, err = r.Decode(seal(t, s, pingFrom("s", 4)))
	require.NoError(t, err)
	_, err = r.Decode(old)
	require.NoError(t, err)
	_, err = r.Decode(old)
	assert.ErrorIs(t, err, ErrReplay)
	// Windows are per sender: another sender's packets are not affected.
	s2 := replayCodec(t, kr, clk, nil)
	_, err = r.Decode(seal(t, s2, pingFrom("t", 1)))
	assert.NoError(t, err)
}

// Packets captured in an earlier run are refused after a restart of the
// receiver (they were sealed before it started) and after a restart of the
// sender (they are below its new packets), whatever they carry.
func TestReplayAcrossRestart(t *testing.T) {
	kr, _ := NewKeyring(key(2, 32))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s, r := replayCodec(t, kr, clk, nil), replayCodec(t, kr, clk, nil)
	var captured [][]byte
	for i := range 10 {
		clk.t = clk.t.Add(100 * time.Millisecond)
		b := seal(t, s, pingFrom("s", uint32(i)))
		_, err := r.Decode(b)
		require.NoError(t, err)
		captured = append(captured, b)
	}
	// The receiver restarts one second later: everything captured is
	// refused, fresh packets are accepted.
	clk.t = clk.t.Add(time.Second)
	r = replayCodec(t, kr, clk, nil)
	for _, b := range captured {
		_, err := r.Decode(b)
		assert.ErrorIs(t, err, ErrReplay)
	}
	clk.t = clk.t.Add(time.Millisecond)
	_, err := r.Decode(seal(t, s, pingFrom("s", 99)))
	require.NoError(t, err)
	// The sender restarts too (a new codec, its stamps from the clock): its
	// new packets are accepted, the old ones still refused.
	clk.t = clk.t.Add(5 * time.Second)
	s = replayCodec(t, kr, clk, nil)
	_, err = r.Decode(seal(t, s, pingFrom("s", 0)))
	require.NoError(t, err)
	for _, b := range captured {
		_, err := r.Decode(b)
		assert.ErrorIs(t, err, ErrReplay)
	}
}

// Timestamps further than MaxSkew from the receiver's clock are refused.
func TestReplayClockSkew(t *testing.T) {
	kr, _ := NewKeyring(key(3, 16))
	sclk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	rclk := &fakeClock{t: sclk.t.Add(-time.Minute)}
	s, r := replayCodec(t, kr, sclk, nil), replayCodec(t, kr, rclk, nil)
	_, err := r.Decode(seal(t, s, pingFrom("s", 1)))
	assert.ErrorIs(t, err, ErrReplay, "a minute in the future")
	rclk.t = sclk.t.Add(40 * time.Second)
	_, err = r.Decode(seal(t, s, pingFrom("s", 2)))
	assert.ErrorIs(t, err, ErrReplay, "40 s old")
	rclk.t = sclk.t.Add(10 * time.Second)
	_, err = r.Decode(seal(t, s, pingFrom("s", 3)))
	assert.NoError(t, err, "10 s old, within MaxSkew")
}

// Memory stays bounded: MaxSenders windows, each a fixed ring; a sender
// reordering more packets than the ring remembers never gets a duplicate
// through.
func TestReplayStateBounded(t *testing.T) {
	kr, _ := NewKeyring(key(4, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := replayCodec(t, kr, clk, func(c *ReplayConfig) { c.MaxSenders = 4 })
	s := replayCodec(t, kr, clk, nil)
	clk.t = clk.t.Add(time.Millisecond)
	for i := range 10 {
		_, err := r.Decode(seal(t, s, pingFrom(fmt.Sprint("s", i), 1)))
		require.NoError(t, err)
	}
	assert.Len(t, r.replay.senders, 4)

	// A sender sending every 50 ms, its packets delivered at the end.
	var pk [][]byte
	for i := range 3 * replayRemembered {
		clk.t = clk.t.Add(50 * time.Millisecond)
		pk = append(pk, seal(t, s, pingFrom("x", uint32(i))))
	}
	// Newest first, then all of them again in order: each accepted at most
	// once.
	accepted := 0
	for i := len(pk) - 1; i >= 0; i-- {
		if _, err := r.Decode(pk[i]); err == nil {
			accepted++
		}
	}
	for _, b := range pk {
		_, err := r.Decode(b)
		assert.ErrorIs(t, err, ErrReplay)
	}
	// The newest replayRemembered fill the set; the next one is accepted
	// and forgets the smallest remembered, which becomes the floor, so
	// everything older is refused from then on.
	assert.Equal(t, replayRemembered+1, accepted)
}

// A member booted with its clock an hour ahead, stepped back by NTP after
// it started (the common case on a VM): once its clock is right it hears
// its peers again at once, and they hear it. The failure this guards
// against: refusing every packet for the hour (each sealed "before it
// started" by its own first reading), with its own stamps an hour ahead
// of the clock, refused by every peer as out of MaxSkew: a healthy member
// silenced for the size of the step.
func TestReplayClockStepBackAfterStart(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	real := time.Unix(1_800_000_000, 0)
	peerClk := &fakeClock{t: real}
	selfClk := &fakeClock{t: real.Add(time.Hour)} // booted an hour ahead
	peer := replayCodec(t, kr, peerClk, nil)
	self := replayCodec(t, kr, selfClk, nil)
	selfClk.t = selfClk.t.Add(time.Second)
	early := seal(t, self, pingFrom("self", 1)) // stamped an hour ahead
	_, err := peer.Decode(early)
	assert.ErrorIs(t, err, ErrReplay, "an hour ahead of the peer's clock")

	// NTP steps the clock back to the right time.
	peerClk.t = real.Add(2 * time.Second)
	selfClk.t = real.Add(2 * time.Second)
	_, err = self.Decode(seal(t, peer, pingFrom("peer", 1)))
	assert.NoError(t, err, "sealed after this member started, by the corrected clock")
	_, err = peer.Decode(seal(t, self, pingFrom("self", 2)))
	assert.NoError(t, err, "stamped by the corrected clock")

	// Replay protection still holds across the step: a packet sealed
	// before this member started (in the corrected frame) is refused.
	selfClk2 := &fakeClock{t: real.Add(10 * time.Second)}
	pre := seal(t, peer, pingFrom("peer", 2))
	selfClk2.t = selfClk2.t.Add(time.Hour)
	late := replayCodec(t, kr, selfClk2, nil)
	selfClk2.t = real.Add(11 * time.Second) // stepped back after start
	peerClk.t = real.Add(11 * time.Second)
	_, err = late.Decode(pre)
	assert.ErrorIs(t, err, ErrReplay, "sealed before the member started")
}

// A sender whose clock jumps far ahead for a moment and comes back keeps
// being heard: stamps beyond MaxSkew of its own clock (refused by every
// receiver anyway) do not pin its later stamps there.
func TestReplaySenderClockJumpForward(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	real := time.Unix(1_800_000_000, 0)
	sClk, rClk := &fakeClock{t: real}, &fakeClock{t: real}
	s, r := replayCodec(t, kr, sClk, nil), replayCodec(t, kr, rClk, nil)
	sClk.t, rClk.t = real.Add(time.Second), real.Add(time.Second)
	_, err := r.Decode(seal(t, s, pingFrom("s", 1)))
	require.NoError(t, err)
	sClk.t = real.Add(24 * time.Hour) // a bad reading (VM resume, wrong RTC)
	_, err = r.Decode(seal(t, s, pingFrom("s", 2)))
	assert.ErrorIs(t, err, ErrReplay)
	for i := range 3 {
		sClk.t = real.Add(time.Duration(2+i) * time.Second)
		rClk.t = sClk.t
		_, err = r.Decode(seal(t, s, pingFrom("s", uint32(3+i))))
		assert.NoError(t, err, "packet %d after the clock came back", i)
	}
}

// A holder of the group key seals packets under a victim's sender ID
// stamped up to MaxSkew ahead. Such a packet must not raise the victim's
// window to its timestamp, which would refuse every genuine packet of the
// victim as more than Window below it for 29 s: the victim keeps being
// heard, also after 2·replayRemembered forged future stamps, and replays
// of its packets are still refused.
func TestReplayForgedFutureStampDoesNotSilenceSender(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	real := time.Unix(1_800_000_000, 0)
	vClk, fClk, rClk := &fakeClock{t: real}, &fakeClock{t: real}, &fakeClock{t: real}
	victim, forger, r := replayCodec(t, kr, vClk, nil), replayCodec(t, kr, fClk, nil), replayCodec(t, kr, rClk, nil)
	step := func(d time.Duration) { vClk.t, rClk.t = vClk.t.Add(d), rClk.t.Add(d) }
	step(time.Second)
	_, err := r.Decode(seal(t, victim, pingFrom("v", 1)))
	require.NoError(t, err)

	fClk.t = rClk.t.Add(29 * time.Second)
	for i := range 2 * replayRemembered {
		_, err = r.Decode(seal(t, forger, pingFrom("v", uint32(100+i))))
		require.NoError(t, err, "the forged packets are well formed and new")
		var sent []byte
		if i == 0 || i == 2*replayRemembered-1 {
			step(100 * time.Millisecond)
			sent = seal(t, victim, pingFrom("v", uint32(2+i)))
			_, err = r.Decode(sent)
			require.NoError(t, err, "the victim's own packet after %d forged ones", i+1)
			_, err = r.Decode(sent)
			assert.ErrorIs(t, err, ErrReplay, "its replay")
		}
	}
	for i := range 5 {
		step(time.Second)
		_, err = r.Decode(seal(t, victim, pingFrom("v", uint32(500+i))))
		assert.NoError(t, err, "second %d", i+1)
	}
}

// A sender that sends more than replayRemembered packets within Window
// has some forgotten while still above its floor: an outsider who captured
// them can replay them, not once but as often as it likes (each accepted
// replay is remembered and pushes another young stamp out), until the
// receiver's clock is Window past their sealing; then the floor covers
// them and every replay is refused. The same holds for a sender whose
// clock is d ahead, until d + Window past sealing. See docs/algorithms.md,
// “SWIM: replay protection for sealed packets”.
func TestReplayYoungForgottenBoundedByWindow(t *testing.T) {
	for _, ahead := range []time.Duration{0, 5 * time.Second} {
		kr, _ := NewKeyring(key(1, 16))
		clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
		sclk := &fakeClock{t: clk.t.Add(ahead)}
		s, r := replayCodec(t, kr, sclk, nil), replayCodec(t, kr, clk, nil)
		var burst [][]byte
		for i := range 80 { // 80 packets in 80 ms
			clk.t, sclk.t = clk.t.Add(time.Millisecond), sclk.t.Add(time.Millisecond)
			b := seal(t, s, pingFrom("s", uint32(i)))
			burst = append(burst, b)
			_, err := r.Decode(b)
			require.NoError(t, err)
		}
		sealed := sclk.t
		replays := func() (n int) {
			for _, b := range burst {
				if _, err := r.Decode(b); err == nil {
					n++
				}
			}
			return n
		}
		early := 0
		for range 10 {
			clk.t = clk.t.Add(10 * time.Millisecond)
			early += replays()
		}
		t.Logf("sender %v ahead: %d replays of %d captured packets accepted within 100 ms", ahead, early, len(burst))
		// The receiver's clock Window past the last sealing (in the
		// receiver's frame): the floor covers the whole burst.
		clk.t = sealed.Add(-ahead).Add(DefaultReplayWindow + ahead + time.Millisecond)
		// A genuine packet moves the floor (forgetting happens on accept).
		for i := range replayRemembered + 1 {
			sclk.t = clk.t.Add(ahead).Add(time.Duration(i) * time.Microsecond)
			_, err := r.Decode(seal(t, s, pingFrom("s", uint32(100+i))))
			require.NoError(t, err)
		}
		assert.Zero(t, replays(), "ahead %v: a replay after Window (+ the sender's lead) past sealing", ahead)
	}
}

// DecodeFrame: a stream's later frames are accepted after the sender's
// window has moved past them, but only in a chain: above the frame they
// follow; a replayed stream is refused at its first frame.
func TestDecodeFrameChain(t *testing.T) {
	kr, _ := NewKeyring(key(3, 16))
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	newCodec := func() *Codec {
		c, err := NewCodec(CodecConfig{Security: &Security{Keyring: kr}, Replay: ReplayConfig{Now: clock}})
		require.NoError(t, err)
		return c
	}
	send, recv := newCodec(), newCodec()
	p := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "a", Addr: "127.0.0.1:1"}, Ping: swim.Ping{Seq: 1}}
	seal := func() []byte {
		now = now.Add(time.Millisecond)
		b, _, err := send.Encode(p)
		require.NoError(t, err)
		return b
	}
	f1, f2, f3 := seal(), seal(), seal()
	_, ts1, err := recv.DecodeFrame(f1, 0)
	require.NoError(t, err)
	now = now.Add(3 * time.Second) // past Window: the sender's datagrams raise the floor
	for range 2 * replayRemembered {
		_, err := recv.Decode(seal())
		require.NoError(t, err)
	}
	_, err = recv.Decode(f2)
	require.ErrorIs(t, err, ErrReplay, "the window refuses the delayed frame alone")
	_, ts2, err := recv.DecodeFrame(f2, ts1)
	require.NoError(t, err, "as the frame after f1")
	_, _, err = recv.DecodeFrame(f2, ts2)
	assert.ErrorIs(t, err, ErrReplay, "a frame again")
	_, _, err = recv.DecodeFrame(f1, ts2)
	assert.ErrorIs(t, err, ErrReplay, "an earlier frame after a later one")
	_, _, err = recv.DecodeFrame(f1, 0)
	assert.ErrorIs(t, err, ErrReplay, "the stream replayed from its start")
	_, ts3, err := recv.DecodeFrame(f3, ts2)
	require.NoError(t, err)
	now = now.Add(time.Minute) // past MaxSkew
	_, _, err = recv.DecodeFrame(seal(), ts3)
	require.NoError(t, err, "a fresh frame")
	_, _, err = recv.DecodeFrame(f3, 1)
	assert.ErrorIs(t, err, ErrReplay, "a frame older than MaxSkew")
}
