// Package kvstore is a small replicated key-value store on fdkit's SWIM
// agent, in the shape of the key-value store that memberlist users write
// first (docs/coming-from-memberlist.md walks through the port): every
// Set and Delete is gossiped to all members as an application broadcast
// (agent.Broadcast, one broadcast key per store key, so that a newer value
// supersedes an older one still queued), and when two members meet (a
// join event on either side) each sends the other its whole store over a
// stream (agent.SendReliable), where memberlist exchanges the delegate's
// LocalState in its TCP push-pull. Conflicting writes are settled by last
// writer wins on a Lamport clock, ties broken by member ID, so every
// member ends with the same value for a key.
//
// It is an example, kept small: the store lives in memory, a key and its
// value must fit one broadcast (swim.MaxBroadcastLen bytes with the
// encoding), and deletions are kept as tombstones forever.
package kvstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

// entry is one key's latest write: its value or a tombstone, with the
// write's Lamport time and the writer.
type entry struct {
	Key     string  `json:"k"`
	Value   string  `json:"v,omitempty"`
	Deleted bool    `json:"d,omitempty"`
	Time    uint64  `json:"t"`
	Writer  swim.ID `json:"w"`
}

// newer reports whether e wins over old (last writer wins).
func (e entry) newer(old entry) bool {
	if e.Time != old.Time {
		return e.Time > old.Time
	}
	return e.Writer > old.Writer
}

// Message kinds, the first byte of every message between stores.
const (
	kindUpdate byte = 'u' // one entry, broadcast
	kindState  byte = 's' // every entry, sent over a stream
)

// Store is one member's replica. Its methods are safe for concurrent use.
type Store struct {
	a        *agent.Agent
	mu       sync.Mutex
	data     map[string]entry
	clock    uint64
	rejected atomic.Uint64
	wg       sync.WaitGroup
	stop     func()
}

// ErrTooLarge is returned by Set for a key and value that do not fit one
// broadcast.
var ErrTooLarge = errors.New("kvstore: key and value too large for one broadcast")

// New starts a member with cfg (see agent.Config: keys or Plain, label,
// addresses) and returns its store, empty until it joins others.
func New(ctx context.Context, cfg agent.Config) (*Store, error) {
	a, err := agent.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &Store{a: a, data: map[string]entry{}}
	msgs, stopMsgs := a.Receive(1024)
	events, stopEvents := a.Subscribe(1024)
	s.stop = func() { stopMsgs(); stopEvents() }
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		for m := range msgs {
			s.receive(m)
		}
	}()
	go func() {
		defer s.wg.Done()
		for e := range events {
			if e.Kind == swim.EventJoin {
				s.wg.Add(1)
				go func() { defer s.wg.Done(); s.sendState(e.Node.ID) }()
			}
		}
	}()
	return s, nil
}

// Agent returns the store's SWIM agent: Join, Members, Stats, and the
// switches that turn encryption on while running.
func (s *Store) Agent() *agent.Agent { return s.a }

// Join joins the members at addrs (ip:port or host:port; see agent.Join).
func (s *Store) Join(ctx context.Context, addrs ...string) error { return s.a.Join(ctx, addrs...) }

// Set writes key and gossips the write to every member.
func (s *Store) Set(ctx context.Context, key, value string) error {
	return s.write(ctx, entry{Key: key, Value: value})
}

// Delete removes key everywhere (a tombstone that wins over older writes).
func (s *Store) Delete(ctx context.Context, key string) error {
	return s.write(ctx, entry{Key: key, Deleted: true})
}

func (s *Store) write(ctx context.Context, e entry) error {
	s.mu.Lock()
	s.clock++
	e.Time, e.Writer = s.clock, s.a.Self().ID
	s.mu.Unlock()
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	msg := append([]byte{kindUpdate}, b...)
	if len(msg) > swim.MaxBroadcastLen {
		return fmt.Errorf("%w: %d bytes encoded, at most %d", ErrTooLarge, len(msg), swim.MaxBroadcastLen)
	}
	s.apply(e)
	return s.a.Broadcast(ctx, e.Key, msg)
}

// Get returns key's value and whether it is set.
func (s *Store) Get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.data[key]
	return e.Value, ok && !e.Deleted
}

// Len returns the number of keys set.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.data {
		if !e.Deleted {
			n++
		}
	}
	return n
}

// Rejected counts messages from other members that did not decode.
func (s *Store) Rejected() uint64 { return s.rejected.Load() }

// Close leaves the group and stops the store's goroutines.
func (s *Store) Close() error {
	err := s.a.Close()
	s.stop()
	s.wg.Wait()
	return err
}

// apply keeps e if it is newer than what the store holds, and advances
// the Lamport clock past it.
func (s *Store) apply(e entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = max(s.clock, e.Time)
	if old, ok := s.data[e.Key]; !ok || e.newer(old) {
		s.data[e.Key] = e
	}
}

// receive applies a message from another member: one update, or a whole
// store.
func (s *Store) receive(m swim.Message) {
	if len(m.Data) == 0 {
		s.rejected.Add(1)
		return
	}
	var es []entry
	var err error
	switch m.Data[0] {
	case kindUpdate:
		var e entry
		err = json.Unmarshal(m.Data[1:], &e)
		es = []entry{e}
	case kindState:
		err = json.Unmarshal(m.Data[1:], &es)
	default:
		err = fmt.Errorf("unknown kind %q", m.Data[0])
	}
	if err != nil {
		s.rejected.Add(1)
		return
	}
	for _, e := range es {
		s.apply(e)
	}
}

// sendState sends the whole store to the member id over a stream.
func (s *Store) sendState(id swim.ID) {
	s.mu.Lock()
	es := make([]entry, 0, len(s.data))
	for _, e := range s.data {
		es = append(es, e)
	}
	s.mu.Unlock()
	if len(es) == 0 {
		return
	}
	b, err := json.Marshal(es)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.a.SendReliable(ctx, id, append([]byte{kindState}, b...)) // best effort: the next join event or write repairs
}
