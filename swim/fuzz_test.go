package swim

import (
	"math/rand/v2"
	"testing"
	"time"
)

// packetFromBytes builds an arbitrary (possibly malformed) packet from data.
func packetFromBytes(data []byte) Packet {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	ids := []ID{"", "a", "b", "c", "d", "zz"}
	id := func() ID { return ids[int(next())%len(ids)] }
	nd := func() Node { // the same ID at two addresses: moves (readdress)
		b := next()
		i := ids[int(b)%len(ids)]
		if b >= 128 {
			return Node{ID: i, Addr: string(i) + ":7947"}
		}
		return Node{ID: i, Addr: string(i) + ":7946"}
	}
	p := Packet{Kind: MessageKind(next() % 10), From: nd(), To: nd()}
	if c := next(); c%3 == 0 {
		p.Broadcasts = append(p.Broadcasts, Broadcast{Origin: id(), Seq: uint64(next()), Key: string(id()), Data: make([]byte, int(c)%5)})
	}
	if p.Kind == MsgUser {
		p.User = make([]byte, int(next())%3)
	}
	if next()%4 == 0 {
		p.State = []byte("st")
	}
	seq := uint32(next())
	p.Ping.Seq, p.Ack.Seq, p.Nack.Seq = seq, seq, seq
	p.PingReq = PingReq{Seq: seq, Target: nd(), Nack: next()%2 == 0}
	for n := int(next() % 6); n > 0; n-- {
		inc := Incarnation(next())
		if next()%7 == 0 {
			inc = MaxIncarnation - inc
		}
		u := Update{Kind: UpdateKind(next() % 5), Node: nd(), Incarnation: inc, From: id()}
		if c := next(); c%3 == 0 {
			u.Meta, u.Versions = string(id()), VersionRange{Min: c % 3, Max: 2}
		}
		p.Updates = append(p.Updates, u)
	}
	return p
}

// Step never panics on any packet, and the member's invariants hold: its
// incarnation never decreases, LHM stays in range, the live count matches
// the view.
func FuzzStep(f *testing.F) {
	f.Add([]byte{1, 2, 0, 5, 1, 3, 0, 2, 3, 0, 1})
	f.Add([]byte{4, 3, 1, 9, 2, 0, 1, 2, 7, 1, 2, 9, 3, 2})
	f.Add([]byte{2, 1, 1, 1, 1, 1, 1, 5, 255, 6, 2, 3, 1, 0, 3, 4, 2, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range []Mode{ModeDetector, ModeSWIM} {
			m, err := New(Config{Self: Node{ID: "a", Addr: "a:7946"}, Mode: mode}, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			m.Bootstrap([]Node{{ID: "b", Addr: "b:7946"}, {ID: "c", Addr: "c:7946"}})
			now := time.Duration(0)
			rest := data
			for len(rest) > 0 {
				n := min(len(rest), 1+int(rest[0]%24))
				p := packetFromBytes(rest[:n])
				rest = rest[n:]
				inc := m.Incarnation()
				_ = m.Step(now, &p)
				now += 300 * time.Millisecond
				m.Tick(now)
				r := m.Ready()
				for i := range r.Packets {
					if s := r.Packets[i].Size(); s > m.Config().MaxPacketSize && r.Packets[i].Kind != MsgSync {
						t.Fatalf("packet of %d bytes", s)
					}
				}
				if m.Incarnation() < inc {
					t.Fatalf("incarnation went down: %d -> %d", inc, m.Incarnation())
				}
				if h := m.LocalHealthMultiplier(); h < 0 || h > 7 {
					t.Fatalf("LHM %d", h)
				}
				live := 1
				for _, st := range m.Members(now)[1:] {
					if st.State == StateAlive || st.State == StateSuspect {
						live++
					}
				}
				if live != m.NumAlive() {
					t.Fatalf("live count %d, view says %d", m.NumAlive(), live)
				}
				if u := heldUnverified(m); u != m.unverified {
					t.Fatalf("unverified count %d, view holds %d", m.unverified, u)
				}
				for addr, p := range m.verifiedAt {
					if m.peers[p.node.ID] != p || !p.verified || p.node.Addr != addr {
						t.Fatalf("verifiedAt[%s] holds %s at %s, verified %v", addr, p.node.ID, p.node.Addr, p.verified)
					}
				}
			}
		}
	})
}
