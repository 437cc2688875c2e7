package monitor

import (
	"sync"
	"sync/atomic"
)

// shard is one part of the monitor's peer index: the peers whose name hash
// selects it. Lookups read its table without taking mu; mu serialises the
// writers (create, Remove) and the copy-out of Sweep and Snapshot.
type shard struct {
	tab  atomic.Pointer[table]
	mu   sync.Mutex
	live int // peers in tab, under mu
	used int // slots that are not empty (peers and tombstones), under mu
	_    [32]byte
}

// table is an open-addressing hash table of peers with linear probing. Its
// key is the name hash the monitor computed to choose the shard, so a
// heartbeat hashes its peer's name once. Each slot holds the hash next to the
// peer pointer: a probe past another peer's slot reads no other memory, and a
// lookup touches one slot (usually one cache line) and the peer itself, which
// the heartbeat needs anyway.
//
// Slots are read with atomic loads. A slot's peer never goes back to empty: a
// removed peer leaves a tombstone, so a lock-free probe never stops early at
// a slot that held a peer. A writer stores a slot's hash before its peer, and
// a reader loads the peer before the hash and then compares names, so a hash
// is only a filter: a torn read can only miss a peer being removed at that
// moment. A table is replaced, not resized: insert builds a larger one and
// publishes it through shard.tab. A reader still probing the old table may
// then miss a peer added since, and falls back to the locked path, which
// looks again in the current table.
type table struct {
	slots []slot
	mask  uint64 // len(slots) - 1; len(slots) is a power of two
}

type slot struct {
	hash atomic.Uint64
	p    atomic.Pointer[peer]
}

// tombstone marks the slot of a removed peer. It is never returned: its
// name is empty and no peer has an empty name.
var tombstone = &peer{}

// minSlots is the size of a shard's first table.
const minSlots = 8

// start is the first probe position of hash h. The low bits of h choose the
// shard (at most 16 of them), so the table uses the bits above them.
func (t *table) start(h uint64) uint64 { return (h >> 16) & t.mask }

// find returns the peer with this hash and name in t, or nil.
func (t *table) find(h uint64, name string) *peer {
	for i := t.start(h); ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		p := sl.p.Load()
		if p == nil {
			return nil
		}
		if sl.hash.Load() == h && p.name == name {
			return p
		}
	}
}

// find looks the peer up. Without s.mu held, nil may be a miss by a probe of
// a table just replaced (see table); with s.mu held the answer is
// authoritative.
func (s *shard) find(h uint64, name string) *peer {
	t := s.tab.Load()
	if t == nil {
		return nil
	}
	return t.find(h, name)
}

// insert adds p, whose name hashes to h and which must not be in s, with
// s.mu held. It keeps at most three quarters of the slots in use (peers and
// tombstones), so probes stay short and always end at an empty slot.
func (s *shard) insert(h uint64, p *peer) {
	t := s.tab.Load()
	if t == nil || 4*(s.used+1) > 3*len(t.slots) {
		t = s.rebuild(t, s.live+1)
	}
	for i := t.start(h); ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		q := sl.p.Load()
		if q == nil || q == tombstone {
			if q == nil {
				s.used++
			}
			sl.hash.Store(h)
			sl.p.Store(p)
			s.live++
			return
		}
	}
}

// rebuild publishes a new table holding t's peers, with room for want peers
// at a load of at most a half, and drops the tombstones.
func (s *shard) rebuild(t *table, want int) *table {
	n := minSlots
	for n < 2*want {
		n <<= 1
	}
	nt := &table{slots: make([]slot, n), mask: uint64(n - 1)}
	used := 0
	if t != nil {
		for i := range t.slots {
			p := t.slots[i].p.Load()
			if p == nil || p == tombstone {
				continue
			}
			h := t.slots[i].hash.Load()
			j := nt.start(h)
			for nt.slots[j].p.Load() != nil {
				j = (j + 1) & nt.mask
			}
			nt.slots[j].hash.Store(h)
			nt.slots[j].p.Store(p)
			used++
		}
	}
	s.used = used
	s.tab.Store(nt)
	return nt
}

// remove deletes the named peer with s.mu held and reports whether it was
// there. The slot keeps its hash.
func (s *shard) remove(h uint64, name string) bool {
	t := s.tab.Load()
	if t == nil {
		return false
	}
	for i := t.start(h); ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		p := sl.p.Load()
		if p == nil {
			return false
		}
		if p != tombstone && sl.hash.Load() == h && p.name == name {
			sl.p.Store(tombstone)
			s.live--
			return true
		}
	}
}

// appendPeers appends the shard's peers to ps, with s.mu held.
func (s *shard) appendPeers(ps []*peer) []*peer {
	t := s.tab.Load()
	if t == nil {
		return ps
	}
	for i := range t.slots {
		if p := t.slots[i].p.Load(); p != nil && p != tombstone {
			ps = append(ps, p)
		}
	}
	return ps
}
