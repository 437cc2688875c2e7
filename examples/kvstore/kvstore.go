// Package kvstore is a small replicated key-value store on fdkit's SWIM
// agent, in the shape of the key-value store that memberlist users write
// first (docs/coming-from-memberlist.md walks through the port): every
// Set and Delete is gossiped to all members as an application broadcast
// (agent.Broadcast, one broadcast key per store key, so that a newer value
// supersedes an older one still queued), and a member that joins with
// Store.Join pulls the whole store from one member over a stream
// (agent.SendReliable), where memberlist's joiner gets the delegate's
// LocalState in its own TCP push-pull. Conflicting writes are settled by
// last writer wins on a Lamport clock, ties broken by member ID, so every
// member ends with the same value for a key.
//
// It is an example, kept small: the store lives in memory, a key and its
// value must fit one broadcast (swim.MaxBroadcastLen bytes with the
// encoding; a received entry that does not is refused), and deletions are kept as tombstones forever. The store goes
// to a joiner in pieces of at most StatePiece bytes, one reliable message
// each, so its size is bounded by memory only; a piece that cannot be
// sent is counted and kept (StateErrors), not dropped unsaid.
//
// The store is sent only when asked, and only to a member that shows it
// receives at the address this member holds for it: the joiner asks (a
// datagram with a random nonce drawn for the ask), the member answers
// with a challenge (a datagram of a few dozen bytes, sent by
// agent.SendToAddress with no gossip in it, to the address in its view,
// carrying the ask's nonce back), and only a joiner that echoes the
// challenge (with a token of its own, which every piece of the store
// sent for it carries) gets the store. The joiner echoes only the first
// challenge that carries its ask's nonce, from the member it asked:
// challenges forged under that member's ID by anyone who did not see the
// ask are refused (Rejected), however many come. Pushing the store on
// every join event instead would let anyone who can announce a member
// (in plain mode anyone, by gossiping an Alive for a member that does
// not exist at a victim's address) draw a whole store to that address
// per announcement, many times the announcement's bytes, at a goroutine
// and a copy of the store each. A
// forged request draws one challenge, about the request's size, and
// each request is answered once: the challenges a member sends are
// bounded by the asks it gets (those for one member that come while it
// is busy sending are answered in one datagram), not by a rate per
// member, which asks forged under a joiner's ID could spend, leaving
// the joiner's own ask unanswered. The
// challenge is a random nonce good for one echo, from that member at
// that address, within two seconds; a store remembers the challenges
// and stores of at most 64 members. Echoing a challenge
// again draws nothing, and a member is queued the store at most once
// per five seconds, so a member that got one challenge cannot draw the
// store again and again with 17-byte echoes. The member answers each
// echo it takes with a datagram: queued, busy or served recently, and
// the echo's token, without which the joiner ignores an answer. One
// goroutine sends the stores asked for, one at a time; at most
// stateQueue wait, and a request beyond is answered busy and counted
// (AnswersDropped). A joiner whose request was not queued asks the next
// member, and again, until its Join's context ends, when Join returns an
// error: Join returns nil only once a member has queued the store for it
// (its answer, or the first piece of the store, says so).
//
// Store.Join pulls, and so does every store once every RepairInterval
// (30 s) from one random live member (Repair), as memberlist's push-pull
// exchanges the delegate's state every 30 s: a broadcast is best effort,
// and a write that a member missed (a datagram lost, the member
// unreachable while the write spread) reaches it at a later pull. Two
// groups that meet some other way (the agent merging views it hears of)
// exchange stores the same way.
//
// The Lamport clock must not be wound to its end by forged messages:
// anyone who can send this member an application message (in plain mode,
// or while encryption is being turned on, anyone who reaches its port)
// could otherwise send a write stamped 2^64−1, after which every write
// would wrap to time 0 and lose to the entry it replaces. So a message
// whose entries are stamped more than MaxClockLead above this store's
// clock as it was before the message is refused entry by entry
// (Rejected): one message moves the clock by at most MaxClockLead,
// however many entries it chains (bounding each entry by the clock the
// previous one moved would let one message of n entries move it by
// n·2^32). A write that would pass 2^64−1 fails with
// ErrClock instead of wrapping. MaxClockLead is 2^32: the clock moves by
// one per write, so an honest member is that far ahead only after four
// billion writes this store has not seen, and a forger needs 2^32
// accepted messages to exhaust the clock. The bound keeps the clock from
// its end; it does not keep a forger from disturbing the store: a forged
// message that moves this store's clock by MaxClockLead makes its next
// writes stamped more than MaxClockLead above the clocks of members that
// did not get the message, and they refuse them (Rejected) until their
// own clocks come that far. Any rule of the kind has this edge, since
// the forged message and the honest write after it look the same to
// their receivers; a group that must not be disturbed turns encryption on.
//
// A member that joins later is not cut off so, though its clock starts at
// 0 and the member it pulls from may be far ahead: each piece of the
// store carries the sender's clock, and the joiner moves its own clock
// to it before it applies the piece's entries, so it takes them and the
// sender's later writes. It takes pieces only from the member whose
// challenge it echoed, carrying the token it sent with the echo (a
// random nonce per pull); any other state message is refused (Rejected).
// It moves its clock so at most to 2^63: a hostile member asked cannot
// wind the joiner's clock to its end either, and an honest member's
// clock passes 2^63 only after 2^31 forged messages. It can move it to
// 2^63 at once, though, and with entries up to MaxClockLead above,
// beyond what the other members adopt from this one, whose later writes
// they then refuse (usr30b: any live member is asked, by Repair); a
// member that must not be disturbed so is in a group that turns
// encryption on, where only key holders are asked.
package kvstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

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
	kindAsk    byte = 'q' // a joiner asks for the store (pull.go)
	kindChal   byte = 'c' // the challenge that answers kindAsk
	kindEcho   byte = 'e' // the joiner echoes the challenge: send the store
	kindAnswer byte = 'a' // the member's answer to the echo (challenges.go)
)

// MaxClockLead is how far above this store's Lamport clock, as it was
// before the message, a received entry's time may be; one further ahead
// is refused (package comment).
const MaxClockLead = 1 << 32

// StatePiece bounds the bytes of one piece of a store sent to a member
// that asked for it (a reliable message, agent.SendReliable): 64 KiB, well
// within any member's agent.Config.MaxReliableSize (1 MiB by default).
const StatePiece = 64 << 10

// Store is one member's replica. Its methods are safe for concurrent use.
type Store struct {
	a        *agent.Agent
	mu       sync.Mutex
	data     map[string]entry
	clock    uint64
	rejected atomic.Uint64
	// piecesRefused counts the pieces of a store among them (receivePiece),
	// for tests that ask whether a piece came, whatever else a stray
	// sender on the machine's loopback got refused.
	piecesRefused atomic.Uint64
	wg            sync.WaitGroup
	stop          func()
	// stateErrs counts the pieces of a store that could not be sent to a
	// member that asked for it, and lastStateErr is the last one's error,
	// under mu (StateErrors).
	stateErrs    uint64
	lastStateErr error
	pull         puller
}

// ErrClock is returned by Set and Delete when this store's Lamport clock
// is at 2^64−1 and a write would wrap it (package comment).
var ErrClock = errors.New("kvstore: the Lamport clock is at its end")

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
	s.pull.init()
	msgs, stopMsgs := a.Receive(1024)
	s.stop = sync.OnceFunc(func() { stopMsgs(); close(s.pull.done) })
	s.wg.Add(4)
	go func() {
		defer s.wg.Done()
		s.repairs()
	}()
	go func() {
		defer s.wg.Done()
		for m := range msgs {
			s.receive(m)
		}
	}()
	go func() {
		defer s.wg.Done()
		s.sendChals()
	}()
	go func() {
		defer s.wg.Done()
		for {
			select {
			case r := <-s.pull.queue:
				s.sendState(r)
			case <-s.pull.done:
				return
			}
		}
	}()
	return s, nil
}

// Agent returns the store's SWIM agent: Join, Members, Stats, and the
// switches that turn encryption on while running.
func (s *Store) Agent() *agent.Agent { return s.a }

// Join joins the members at addrs (ip:port or host:port; see agent.Join)
// and then asks one member for its store (package comment): it returns
// once a member has answered that it queued the store for this member,
// or a piece of it came, and the store's (other) pieces arrive after it. Its errors are agent.Join's,
// or, when no member queued the store within ctx (none answered, all
// were busy, or all had sent this member their store within the last
// five seconds), one that says the join itself succeeded.
func (s *Store) Join(ctx context.Context, addrs ...string) error {
	if err := s.a.Join(ctx, addrs...); err != nil {
		return err
	}
	return s.ask(ctx)
}

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
	if s.clock == math.MaxUint64 {
		s.mu.Unlock()
		return fmt.Errorf("%w: writing %q would wrap it to 0, and the write would lose to every older one", ErrClock, e.Key)
	}
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
	s.mu.Lock()
	s.apply(e, s.clock)
	s.mu.Unlock()
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

// Rejected counts messages from other members that did not decode,
// pieces of a store that are not of this store's last pull (package
// comment), entries refused for a time more than MaxClockLead ahead of this store's
// clock before their message or for a size over one broadcast (as Set
// refuses with ErrTooLarge), and requests for the store not answered
// (package comment): from a member not alive or suspect here, malformed,
// echoing no challenge in force (one this store did not send, sent to
// another member or address, echoed already, or over two seconds old),
// or whose challenge or answer could not be sent; and challenges and
// answers for no ask of this store (from a member not asked, without the
// ask's nonce or the echo's token: forged, or late) or malformed.
func (s *Store) Rejected() uint64 { return s.rejected.Load() }

// StateErrors returns how many pieces of this store could not be sent to
// members that asked for it (sendState), and the last one's error, which
// names the member; nil when every piece was sent.
func (s *Store) StateErrors() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stateErrs, s.lastStateErr
}

// Close leaves the group and stops the store's goroutines. A second Close
// returns what the agent's Close returns then, and stops nothing more.
func (s *Store) Close() error {
	err := s.a.Close()
	s.stop()
	s.wg.Wait()
	return err
}

// apply keeps e if it is newer than what the store holds, and advances
// the Lamport clock past it. It refuses (false) an entry stamped more
// than MaxClockLead above base, the clock before the message that
// carried e. Callers hold mu.
func (s *Store) apply(e entry, base uint64) bool {
	if e.Time > base && e.Time-base > MaxClockLead {
		return false
	}
	s.clock = max(s.clock, e.Time)
	if old, ok := s.data[e.Key]; !ok || e.newer(old) {
		s.data[e.Key] = e
	}
	return true
}

// receive applies a message from another member: one update, or a piece
// of a whole store; or takes part in a pull (pull.go).
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
		s.receivePiece(m)
		return
	case kindAsk, kindChal, kindEcho, kindAnswer:
		err = s.pullMessage(m)
		es = nil
	default:
		err = fmt.Errorf("unknown kind %q", m.Data[0])
	}
	if err != nil {
		s.rejected.Add(1)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyAll(es)
}
