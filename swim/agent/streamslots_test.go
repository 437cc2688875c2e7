package agent

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

// One host and port holds at most streamOutPerAddr of the dialling slots,
// whether it is written as IPv4 or as IPv4-mapped IPv6; another address
// takes the slots left, and a slot given back is free again.
func TestOutSlotsPerAddress(t *testing.T) {
	a := &Agent{stream: streamPath{outSlots: make(chan struct{}, streamOutMax), outTo: map[netip.AddrPort]int{}}}
	v4 := netip.MustParseAddrPort("192.0.2.7:7946")
	mapped := netip.MustParseAddrPort("[::ffff:192.0.2.7]:7946")
	for i := range streamOutPerAddr {
		to := v4
		if i%2 == 1 {
			to = mapped
		}
		assert.True(t, a.takeOutSlot(to), "slot %d", i)
	}
	assert.False(t, a.takeOutSlot(mapped), "the mapped form is the same address")
	assert.False(t, a.takeOutSlot(v4))
	assert.Equal(t, uint64(2), a.sctr.streamsAddrBusy.Load())
	other := netip.MustParseAddrPort("192.0.2.8:7946")
	assert.True(t, a.takeOutSlot(other))
	a.releaseOutSlot(mapped)
	assert.True(t, a.takeOutSlot(v4), "a slot given back is free")
	assert.Len(t, a.stream.outTo, 2)
}

// Joins' streams to seeds: one per address (an IPv4 address and its
// IPv4-mapped form are one), streamJoinMax in all, apart from the
// protocol's slots; a slot given back is free again.
func TestJoinSlots(t *testing.T) {
	a := &Agent{stream: streamPath{outSlots: make(chan struct{}, streamOutMax), outTo: map[netip.AddrPort]int{}, joinTo: map[netip.AddrPort]bool{}}}
	v4 := netip.MustParseAddrPort("192.0.2.7:7946")
	assert.True(t, a.takeJoinSlot(v4))
	assert.False(t, a.takeJoinSlot(netip.MustParseAddrPort("[::ffff:192.0.2.7]:7946")), "one open to that seed")
	assert.Equal(t, uint64(1), a.sctr.streamJoinsBusy.Load())
	for i := range streamJoinMax - 1 {
		assert.True(t, a.takeJoinSlot(netip.AddrPortFrom(v4.Addr(), uint16(7947+i))), "seed %d", i)
	}
	other := netip.MustParseAddrPort("192.0.2.8:7946")
	assert.False(t, a.takeJoinSlot(other), "streamJoinMax open")
	assert.Equal(t, uint64(2), a.sctr.streamJoinsBusy.Load())
	assert.Empty(t, a.stream.outSlots, "no protocol slot taken")
	assert.True(t, a.takeOutSlot(other), "the protocol's slots are apart")
	a.releaseJoinSlot(v4)
	assert.True(t, a.takeJoinSlot(other), "a slot given back is free")
	assert.Len(t, a.stream.joinTo, streamJoinMax)
}
