// Faults a simulation injects: crashes, restarts, joins, leaves, pauses and partitions.

package sim

import (
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// Inject delivers p to member to after delay d, as if the network carried
// it: a replayed packet, or one forged by a holder of the group's key.
// Crashed and paused members treat it like any other packet.
func (s *Sim) Inject(to int, p swim.Packet, d time.Duration) {
	e := s.alloc()
	e.at = s.now + max(d, 0)
	e.kind, e.to, e.pkt, e.size = evDeliver, to, p, p.Size()
	e.pkt.Updates = append([]swim.Update(nil), p.Updates...)
	s.push(e)
}

// Crash stops member i for good at the current instant (until Restart),
// as a process that died on a host that is still up: a stream ping to it
// is refused at once.
func (s *Sim) Crash(i int) { s.crash(i, false) }

// CrashSilent stops member i for good as a host that went down, was cut
// off, or whose process hangs: a stream ping to it gets no answer, and
// the prober gives up at its deadline.
func (s *Sim) CrashSilent(i int) { s.crash(i, true) }

func (s *Sim) crash(i int, silent bool) {
	sm := s.members[i]
	sm.crashed, sm.silent = true, silent
	for _, e := range sm.queue {
		s.release(e)
	}
	sm.queue = nil
	sm.paused = false
}

// Restart replaces crashed member i by a fresh state machine with the same
// ID, incarnation 0 and an empty view, which joins through member seed.
func (s *Sim) Restart(i, seed int) error { return s.RestartAt(i, seed, 0) }

// RestartAt is Restart with the incarnation the member persisted: the new
// state machine starts from inc (swim.Config.Incarnation).
func (s *Sim) RestartAt(i, seed int, inc swim.Incarnation) error {
	sm := s.members[i]
	if !sm.crashed {
		return fmt.Errorf("sim: member %d is not crashed", i)
	}
	if err := s.newMachineAt(i, inc); err != nil {
		return err
	}
	if !s.cfg.NoBootstrap {
		s.trustAll(sm.m)
	}
	sm.crashed, sm.silent = false, false
	if err := sm.m.Join(s.now, []string{s.members[seed].node.Addr}); err != nil {
		return err
	}
	s.flush(i)
	return nil
}

// Join makes member i join the group through member seed (for groups
// started with NoBootstrap).
func (s *Sim) Join(i, seed int) error {
	if err := s.members[i].m.Join(s.now, []string{s.members[seed].node.Addr}); err != nil {
		return err
	}
	s.flush(i)
	return nil
}

// Leave makes member i leave voluntarily.
func (s *Sim) Leave(i int) error {
	if err := s.members[i].m.Leave(s.now); err != nil {
		return err
	}
	s.flush(i)
	return nil
}

// Pause stops member i for d from now: no timers, no processing, incoming
// packets queued (or dropped with DropWhilePaused). Pausing a paused member
// extends the pause if it ends later.
func (s *Sim) Pause(i int, d time.Duration) {
	sm := s.members[i]
	if sm.crashed || d <= 0 {
		return
	}
	end := s.now + d
	if sm.paused && end <= sm.pausedUntil {
		return
	}
	sm.paused, sm.pausedUntil = true, end
	gen := sm.gen
	s.At(end, func() {
		if sm.gen != gen || !sm.paused || sm.pausedUntil != end {
			return
		}
		s.resume(i)
	})
}

func (s *Sim) resume(i int) {
	sm := s.members[i]
	sm.paused = false
	sm.hasSched = false
	sm.m.Tick(s.now) // overdue timers first
	s.flush(i)
	q := sm.queue
	sm.queue = nil
	for _, e := range q {
		if sm.crashed || sm.paused {
			s.release(e)
			continue
		}
		s.deliver(i, e)
		s.release(e)
	}
}

// Partition splits the members into groups (group[i] is member i's group);
// packets between different groups are lost. Heal removes it.
func (s *Sim) Partition(group []int) error {
	if len(group) != len(s.members) {
		return fmt.Errorf("sim: partition of %d members, have %d", len(group), len(s.members))
	}
	s.group = append([]int(nil), group...)
	return nil
}

// Heal ends a partition.
func (s *Sim) Heal() { s.group = nil }

// key is member i's signing key when Config.Signed: derived from the seed
// and i, the same after a restart.
func (s *Sim) key(i int) ed25519.PrivateKey {
	var seed [ed25519.SeedSize]byte
	binary.BigEndian.PutUint64(seed[:], s.cfg.Seed)
	binary.BigEndian.PutUint64(seed[8:], uint64(i))
	copy(seed[16:], "fdkit sim key")
	return ed25519.NewKeyFromSeed(seed[:])
}

// trustAll binds every member's public key in m's view (Config.Signed with
// the bootstrap: keys distributed beforehand).
func (s *Sim) trustAll(m *swim.Member) {
	if !s.cfg.Signed {
		return
	}
	for i, sm := range s.members {
		m.Trust(sm.node.ID, s.key(i).Public().(ed25519.PublicKey))
	}
}
