package kvstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// Repair: broadcasts are best effort (a datagram lost on its way, or a
// member that was unreachable while a write spread, misses it for good),
// so a store pulls the store of one random live member every
// RepairInterval and merges it, last writer wins, as memberlist's
// push-pull exchanges its LocalState every 30 s. A pull goes through the
// same ask, challenge and echo as a joiner's (pull.go), and a member sends
// its store to one member at most once per five seconds. Each pull
// carries the whole store, so a member sends about the store's size every
// RepairInterval on average (memberlist's push-pull sends the whole state
// too, at an interval that grows with the group), and a burst of writes
// larger than the broadcast queue (swim.Config.MaxQueuedBroadcasts) may
// take two or three intervals to reach every member: the writes the queue
// dropped are counted (Stats.Protocol.BroadcastsDropped), and Set returns
// nil for them, as it does for any broadcast.

// RepairInterval is how often a store pulls another member's store
// (Repair), each time a random point within the interval apart.
const RepairInterval = 30 * time.Second

// errNoMember: Repair found no live member to pull from.
var errNoMember = errors.New("kvstore: no other live member to pull the store from")

// Repair pulls the store of one live member other than this one, chosen
// at random, and merges it: it returns once that member queued its store
// for this one (the pieces arrive after), or an error when no other
// member is live or the one asked did not queue it within ctx and askWait
// (it was busy, or sent this member its store in the last five seconds).
// A store calls it every RepairInterval; a service may call it too.
func (s *Store) Repair(ctx context.Context) error {
	s.pull.asking.Lock()
	defer s.pull.asking.Unlock()
	ms, err := s.a.MembersContext(ctx)
	if err != nil {
		return fmt.Errorf("kvstore: repair: %w", err)
	}
	var ids []swim.ID
	for _, m := range ms {
		if live(m) {
			ids = append(ids, m.Node.ID)
		}
	}
	if len(ids) == 0 {
		return errNoMember
	}
	id := ids[rand.IntN(len(ids))]
	if !s.askOne(ctx, id) {
		return fmt.Errorf("kvstore: repair: %s did not queue its store", id)
	}
	return nil
}

// repairs calls Repair every RepairInterval (a random point of each
// interval, so that members started together do not pull at once) until
// the store closes.
func (s *Store) repairs() {
	for {
		t := time.NewTimer(RepairInterval/2 + rand.N(RepairInterval))
		select {
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 4*askWait)
			_ = s.Repair(ctx) // no member yet, or a busy one: the next interval tries another
			cancel()
		case <-s.pull.done:
			t.Stop()
			return
		}
	}
}
