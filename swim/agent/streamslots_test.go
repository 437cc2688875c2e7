package agent

import (
	"context"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One host and port holds at most streamOutPerAddr of a pool's slots,
// whether it is written as IPv4 or as IPv4-mapped IPv6; another address
// takes the slots left, and a slot given back is free again.
func TestSlotPoolPerAddress(t *testing.T) {
	var busy atomic.Uint64
	p := newSlotPool(streamOutMax, streamOutPerAddr, &busy)
	v4 := netip.MustParseAddrPort("192.0.2.7:7946")
	mapped := netip.MustParseAddrPort("[::ffff:192.0.2.7]:7946")
	for i := range streamOutPerAddr {
		to := v4
		if i%2 == 1 {
			to = mapped
		}
		assert.True(t, p.take(to), "slot %d", i)
	}
	assert.False(t, p.take(mapped), "the mapped form is the same address")
	assert.False(t, p.take(v4))
	assert.Equal(t, uint64(2), busy.Load())
	other := netip.MustParseAddrPort("192.0.2.8:7946")
	assert.True(t, p.take(other))
	p.release(mapped)
	assert.True(t, p.take(v4), "a slot given back is free")
	assert.Len(t, p.to, 2)
	assert.Equal(t, streamOutPerAddr+1, p.open())
}

// takeWithin (SendReliable's) waits within its context for the turn of
// an address that holds its bound, holding no slot meanwhile (another
// address takes the last one), and for a slot when all are taken; a wait
// given up leaves no count behind, and a slot given back goes to the one
// waiting, for the address's turn or for a slot.
func TestSlotPoolTakeWithin(t *testing.T) {
	p := newSlotPool(3, 1, nil)
	a, b, c := netip.MustParseAddrPort("192.0.2.1:1"), netip.MustParseAddrPort("192.0.2.2:1"), netip.MustParseAddrPort("192.0.2.3:1")
	require.True(t, p.take(a))
	require.True(t, p.take(b))
	type res struct{ ok, full bool }
	got := make(chan res, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	go func() { ok, full := p.takeWithin(ctx, a); got <- res{ok, full} }()
	time.Sleep(20 * time.Millisecond)
	assert.True(t, p.take(c), "the waiter for a's turn holds no slot")
	r := <-got
	assert.Equal(t, res{false, true}, r, "a held its one slot until the context ended")
	assert.GreaterOrEqual(t, time.Since(t0), 100*time.Millisecond, "waited for the context")
	assert.Equal(t, map[netip.AddrPort]int{a: 1, b: 1, c: 1}, p.to, "a wait given up leaves no count")
	ok, full := p.takeWithin(ctx, c)
	assert.Equal(t, res{false, true}, res{ok, full}, "a context already ended: no wait")

	go func() { ok, full := p.takeWithin(context.Background(), a); got <- res{ok, full} }()
	time.Sleep(20 * time.Millisecond)
	p.release(a)
	assert.Equal(t, res{true, true}, <-got, "a's slot given back goes to the one waiting for a's turn")
	assert.Empty(t, p.turn, "no turn left once nobody waits")

	d := netip.MustParseAddrPort("192.0.2.4:1")
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	ok, full = p.takeWithin(ctx2, d)
	assert.Equal(t, res{false, false}, res{ok, full}, "d waited for a slot until its context ended")
	assert.NotContains(t, p.to, d, "a wait given up leaves no count")
	go func() { ok, full := p.takeWithin(context.Background(), d); got <- res{ok, full} }()
	time.Sleep(20 * time.Millisecond)
	p.release(b)
	assert.Equal(t, res{true, false}, <-got, "a slot given back goes to the one waiting")
	assert.Equal(t, map[netip.AddrPort]int{a: 1, c: 1, d: 1}, p.to)
}

// Joins' streams to seeds: one per address (an IPv4 address and its
// IPv4-mapped form are one), streamJoinMax in all, apart from the other
// pools. With all open, a seed that has had fewer streams takes over the
// slot of the oldest stream open for joinStall or longer (its context
// ends), and a seed that has had as many as the open ones takes over
// none; a taken-over stream's release frees nothing, a slot given back
// is free again, and the counts are kept for open seeds and the seeds
// named (pruneJoinTurns).
func TestJoinSlots(t *testing.T) {
	a := &Agent{stream: streamPath{ctx: context.Background(), joinStall: time.Minute,
		joinTo: map[netip.AddrPort]*joinStream{}, joinTurns: map[netip.AddrPort]int{}}}
	a.stream.pings = newSlotPool(streamOutMax, streamOutPerAddr, nil)
	v4 := netip.MustParseAddrPort("192.0.2.7:7946")
	s0 := a.takeJoinSlot(v4)
	require.NotNil(t, s0)
	assert.Nil(t, a.takeJoinSlot(netip.MustParseAddrPort("[::ffff:192.0.2.7]:7946")), "one open to that seed")
	assert.Equal(t, uint64(1), a.sctr.streamJoinsBusy.Load())
	seeds := []netip.AddrPort{v4}
	for i := range streamJoinMax - 1 {
		s := netip.AddrPortFrom(v4.Addr(), uint16(7947+i))
		seeds = append(seeds, s)
		require.NotNil(t, a.takeJoinSlot(s), "seed %d", i)
	}
	other := netip.MustParseAddrPort("192.0.2.8:7946")
	assert.Nil(t, a.takeJoinSlot(other), "streamJoinMax open, none joinStall old")
	assert.Equal(t, uint64(2), a.sctr.streamJoinsBusy.Load())
	assert.Zero(t, a.stream.pings.open(), "no slot of the stream pings taken")
	assert.True(t, a.stream.pings.take(other), "the other pools are apart")

	for _, s := range a.stream.joinTo {
		s.opened = s.opened.Add(-2 * time.Minute)
	}
	s0.opened = s0.opened.Add(-time.Minute) // the oldest
	so := a.takeJoinSlot(other)
	require.NotNil(t, so, "a seed with no stream takes over a slot")
	assert.Error(t, s0.ctx.Err(), "the oldest stream, v4's, is closed")
	assert.Equal(t, uint64(1), a.sctr.streamJoinsYielded.Load())
	assert.Nil(t, a.stream.joinTo[v4])
	a.releaseJoinSlot(v4, s0) // its goroutine ends
	assert.Len(t, a.stream.joinTo, streamJoinMax, "a taken-over stream's release frees no slot")
	assert.Same(t, so, a.stream.joinTo[other])
	assert.Nil(t, a.takeJoinSlot(v4), "v4 has had one stream, as many as each open one's seed")
	assert.Equal(t, uint64(3), a.sctr.streamJoinsBusy.Load())

	a.releaseJoinSlot(other, so)
	assert.Error(t, so.ctx.Err())
	s0 = a.takeJoinSlot(v4)
	require.NotNil(t, s0, "a slot given back is free")
	assert.Equal(t, 2, a.stream.joinTurns[v4])
	assert.Equal(t, []int{2, 1, 0}, a.joinTurnsOf([]netip.AddrPort{v4, other, netip.MustParseAddrPort("192.0.2.9:1")}))

	// A seed that has had fewer streams takes over from one that has had
	// more: v4 (2) yields to seeds[1] (1) once seeds[1]'s stream is
	// given back.
	a.releaseJoinSlot(seeds[1], a.stream.joinTo[seeds[1]])
	require.NotNil(t, a.takeJoinSlot(other), "the free slot")
	s0.opened = s0.opened.Add(-time.Minute)
	require.NotNil(t, a.takeJoinSlot(seeds[1]))
	assert.Error(t, s0.ctx.Err(), "v4 (2 streams) yields to seeds[1] (1)")
	assert.Equal(t, uint64(2), a.sctr.streamJoinsYielded.Load())

	a.pruneJoinTurns([]string{v4.String()})
	assert.Equal(t, map[netip.AddrPort]int{v4: 2, seeds[1]: 2, seeds[2]: 1, seeds[3]: 1, other: 2}, a.stream.joinTurns,
		"kept: open or named")
	a.releaseJoinSlot(seeds[2], a.stream.joinTo[seeds[2]])
	a.pruneJoinTurns(nil)
	assert.Equal(t, map[netip.AddrPort]int{seeds[1]: 2, seeds[3]: 1, other: 2}, a.stream.joinTurns, "the open ones only")
}

// A context that had ended before takeWithin is called, for an address
// under its bound, is not a wait for the address's turn: addrFull is
// false (SendReliable's error does not wrap ErrReliableBusy), no slot is
// taken and no count is left, however often it is tried (the select
// between a free slot and a done context is random).
func TestSlotPoolTakeWithinEndedContext(t *testing.T) {
	p := newSlotPool(3, 1, nil)
	a := netip.MustParseAddrPort("192.0.2.1:1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 100 {
		ok, full := p.takeWithin(ctx, a)
		require.False(t, ok, "a slot taken with an ended context")
		require.False(t, full, "an address under its bound reported full")
	}
	assert.Empty(t, p.to)
	assert.Zero(t, p.open())
}

// SendReliableToAddress with a context already ended, to an address no
// message is being sent to, fails with the context's error, not
// ErrReliableBusy.
func TestSendReliableEndedContextNotBusy(t *testing.T) {
	as := group(t, 2, Config{Plain: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := as[0].SendReliableToAddress(ctx, as[1].Self().Addr, []byte("x"))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrReliableBusy, "no message to that address was being sent")
}

// An address is busy (addrFull) only when its bound's worth of streams is
// in flight: takers that reserved the address and wait for one of the
// pool's slots make the pool busy, not the address (atk27 F10: four sends
// to an idle member waiting for the 16 slots made a fifth fail with
// ErrReliableBusy).
func TestSlotPoolBusyAddressOnlyInFlight(t *testing.T) {
	x := netip.MustParseAddrPort("192.0.2.1:7946")
	y := netip.MustParseAddrPort("192.0.2.2:7946")
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}

	// The pool's one slot held for x: y's two takers reserve y and wait
	// for the slot, a third waits for y's turn.
	p := newSlotPool(1, 2, nil)
	require.True(t, p.take(x))
	done := make(chan [2]bool, 3)
	for range 3 {
		go func() {
			ok, full := p.takeWithin(short(), y)
			done <- [2]bool{ok, full}
		}()
	}
	for range 3 {
		r := <-done
		assert.False(t, r[0], "no slot for y")
		assert.False(t, r[1], "nothing in flight to y: the pool is busy, not y")
	}
	p.release(x)
	assert.Zero(t, p.open())
	assert.Empty(t, p.to)
	assert.Empty(t, p.held)

	// Two streams to y in flight: a third taker finds y busy.
	p = newSlotPool(4, 2, nil)
	require.True(t, p.take(y))
	ok, full := p.takeWithin(context.Background(), y)
	require.True(t, ok)
	require.False(t, full)
	ok, full = p.takeWithin(short(), y)
	assert.False(t, ok)
	assert.True(t, full, "two streams to y in flight, its bound")
	p.release(y)
	p.release(y)
	assert.Zero(t, p.open())
	assert.Empty(t, p.held)
}

// A taker that waited for its address's turn, with the address's bound
// in flight, reports waitedTurn whether its context's end or the turn
// comes first: here the turn is given back as the context ends, 100
// times (SendReliable's ErrReliableBusy, usr27 F2.3). Before, a turn
// taken with the context just ended reported no wait for the address.
func TestSlotPoolWaitedTurnAtTheEnd(t *testing.T) {
	a := netip.MustParseAddrPort("192.0.2.1:1")
	for i := range 100 {
		p := newSlotPool(3, 1, nil)
		require.True(t, p.take(a))
		ctx, cancel := context.WithCancel(context.Background())
		type res struct{ ok, waited bool }
		got := make(chan res, 1)
		go func() { ok, waited := p.takeWithin(ctx, a); got <- res{ok, waited} }()
		require.Eventually(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.turn[a] != nil },
			time.Second, 100*time.Microsecond, "round %d: waiting for a's turn", i)
		if i%2 == 0 {
			cancel()
			p.release(a)
		} else {
			p.release(a)
			cancel()
		}
		r := <-got
		assert.True(t, r.waited, "round %d: waited for a's turn", i)
		if r.ok {
			p.release(a) // the turn and a slot taken before the end was seen
		}
		assert.Empty(t, p.to, "round %d", i)
		assert.Zero(t, p.open(), "round %d", i)
	}
}
