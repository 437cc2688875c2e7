package swim

import (
	"fmt"
	"testing"
)

// BenchmarkAttachBroadcasts times attachBroadcasts on a full queue (1,024
// relayed broadcasts, half from origins held live, and 8 of this member's
// own), as every outgoing packet calls it while the queue is not empty.
//
//	go test -run '^$' -bench AttachBroadcasts -benchmem ./swim/
func BenchmarkAttachBroadcasts(b *testing.B) {
	peers := make([]string, 32)
	for i := range peers {
		peers[i] = fmt.Sprintf("p%02d", i)
	}
	m := newTest(&testing.T{}, "a", ModeLifeguard, func(c *Config) { c.RetransmitMult = 1 << 20 }, peers...)
	fill := func() {
		m.app.queue = m.app.queue[:0]
		clear(m.app.queued)
		for i := range 1024 {
			origin := ID(fmt.Sprintf("x%d", i))
			if i%2 == 0 {
				origin = ID(peers[i%len(peers)])
			}
			m.queueBroadcast(Broadcast{Origin: origin, Seq: uint64(i + 1), Data: []byte("value")}, ID(peers[(i+1)%len(peers)]))
		}
		for i := range 8 {
			m.queueBroadcast(Broadcast{Origin: m.self.ID, Seq: uint64(i + 1), Data: []byte("own")}, "")
		}
	}
	fill()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%64 == 0 {
			b.StopTimer()
			fill()
			b.StartTimer()
		}
		if len(m.attachBroadcasts(ID(peers[i%len(peers)]), 1400)) == 0 {
			b.Fatal("nothing attached")
		}
	}
}

// BenchmarkQueueBroadcastFull times queueBroadcast of a relayed broadcast
// into a full queue (as BenchmarkAttachBroadcasts fills it), which evicts
// one: every broadcast of a flood costs this.
//
//	go test -run '^$' -bench QueueBroadcastFull -benchmem ./swim/
func BenchmarkQueueBroadcastFull(b *testing.B) {
	peers := make([]string, 32)
	for i := range peers {
		peers[i] = fmt.Sprintf("p%02d", i)
	}
	m := newTest(&testing.T{}, "a", ModeLifeguard, nil, peers...)
	for i := range 1024 {
		origin := ID(fmt.Sprintf("x%d", i))
		if i%2 == 0 {
			origin = ID(peers[i%len(peers)])
		}
		m.queueBroadcast(Broadcast{Origin: origin, Seq: uint64(i + 1), Data: []byte("value")}, ID(peers[(i+1)%len(peers)]))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.queueBroadcast(Broadcast{Origin: "p01", Seq: uint64(2000 + i), Data: []byte("flood")}, "p01")
	}
}
