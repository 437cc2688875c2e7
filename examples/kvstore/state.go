package kvstore

import (
	"context"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// A piece of a store, sent to a member that asked for it, is kindState,
// the asker's token from its echo (tokenLen bytes), the sender's Lamport
// clock as it was when it copied the store (8 bytes, big-endian), and a
// JSON array of entries. A member takes the pieces of the pull it asked
// for last only, from the member it asked, carrying its token; it moves
// its clock to the sender's, up to maxAdopted, before it applies their
// entries (package comment).
const pieceHeader = 1 + tokenLen + 8

// maxAdopted bounds the clock a member takes from the member it pulled
// the store from: 2^63, which a member's clock passes only after 2^31
// forged messages each moving it by MaxClockLead; a hostile member asked
// leaves the joiner at least 2^63 − MaxClockLead writes.
const maxAdopted = 1 << 63

// pullReq is a member that asked for the store, the address its
// challenge was sent to and its echo redeemed at (empty in a joiner's
// want), and its token.
type pullReq struct {
	id    swim.ID
	addr  string
	token [tokenLen]byte
}

// receivePiece applies a piece of a store (pieceHeader): refused whole
// (Rejected) when it is malformed or not of this store's last pull.
func (s *Store) receivePiece(m swim.Message) {
	var es []entry
	if len(m.Data) < pieceHeader || json.Unmarshal(m.Data[pieceHeader:], &es) != nil {
		s.rejected.Add(1)
		s.piecesRefused.Add(1)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.pull.want
	if w.id == "" || m.From != w.id || subtle.ConstantTimeCompare(m.Data[1:1+tokenLen], w.token[:]) != 1 {
		s.rejected.Add(1)
		s.piecesRefused.Add(1)
		return
	}
	s.clock = max(s.clock, min(binary.BigEndian.Uint64(m.Data[1+tokenLen:pieceHeader]), maxAdopted))
	s.applyAll(es)
	select {
	case s.pull.arrived <- struct{}{}:
	default:
	}
}

// applyAll applies es, received in one message, each bounded by the
// clock before it (apply); an entry that does not fit a broadcast is
// refused too (fits). Callers hold mu.
func (s *Store) applyAll(es []entry) {
	base := s.clock
	for _, e := range es {
		if !fits(e) || !s.apply(e, base) {
			s.rejected.Add(1)
		}
	}
}

// fits reports whether e, encoded as an update, fits one broadcast
// (swim.MaxBroadcastLen bytes), as Set requires of the entries it writes.
// A received entry that does not is refused: no pull carries it
// (statePieces) and no broadcast could, so a store that kept it would
// differ from every joiner's for good.
func fits(e entry) bool {
	b, err := json.Marshal(e)
	return err == nil && 1+len(b) <= swim.MaxBroadcastLen
}

// sendState sends the whole store to the member r.id at r.addr, the
// address its challenge went to and its echo was redeemed at, over
// streams, in pieces of at most StatePiece bytes (statePieces) with r's
// token and this store's clock, each within 10 s: not to the address
// the view holds for r.id by then, which a rejoin, or in plain mode an
// Alive forged with a higher incarnation, may have moved to one that
// never echoed (issue 27, user39b). A
// piece that fails is counted with its error (StateErrors) and the others
// are still sent: the receiver applies each piece on its own, and a
// later write of a key repairs what is missing.
func (s *Store) sendState(r pullReq) {
	id := r.id
	head := append([]byte{kindState}, r.token[:]...)
	s.mu.Lock()
	es := make([]entry, 0, len(s.data))
	for _, e := range s.data {
		es = append(es, e)
	}
	head = binary.BigEndian.AppendUint64(head, s.clock)
	s.mu.Unlock()
	pieces, err := statePieces(head, es, StatePiece)
	if err != nil {
		s.stateFailed(id, err)
	}
	for _, p := range pieces {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.a.SendReliableToAddress(ctx, r.addr, p)
		cancel()
		if err != nil {
			s.stateFailed(id, err)
		}
	}
}

// stateFailed records a piece of the store not sent to id.
func (s *Store) stateFailed(id swim.ID, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stateErrs++
	s.lastStateErr = fmt.Errorf("kvstore: sending the store to %s: %w", id, err)
}

// statePieces encodes es as state messages (head, then a JSON array of
// entries) of at most limit bytes each, in order; none for no entries.
// An entry that does not fit a piece alone is an error, and is left out;
// with limit StatePiece it cannot happen, since a store holds only
// entries that fit a broadcast (Set, and fits for received ones), at
// most swim.MaxBroadcastLen bytes.
func statePieces(head []byte, es []entry, limit int) ([][]byte, error) {
	var out [][]byte
	var errs []error
	open := len(head) + 1 // head and '['
	cur := append(slices.Clip(head), '[')
	for _, e := range es {
		b, err := json.Marshal(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("entry %q: %w", e.Key, err))
			continue
		}
		if open+len(b)+1 > limit {
			errs = append(errs, fmt.Errorf("entry %q: %d bytes encoded, over a piece of %d", e.Key, len(b), limit))
			continue
		}
		if len(cur) > open && len(cur)+1+len(b)+1 > limit {
			out = append(out, append(cur, ']'))
			cur = append(slices.Clip(head), '[')
		}
		if len(cur) > open {
			cur = append(cur, ',')
		}
		cur = append(cur, b...)
	}
	if len(cur) > open {
		out = append(out, append(cur, ']'))
	}
	return out, errors.Join(errs...)
}
