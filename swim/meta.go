package swim

import "fmt"

// Node metadata: a small byte payload per member (memberlist's node meta),
// carried in the member's Alive updates. A change is an Alive in a higher
// incarnation, disseminated like a refutation, so that every view keeps the
// metadata of the member's latest incarnation (SWIM §4.2's precedence:
// an Alive overrides one of a lower incarnation only).

// SetMeta replaces this member's metadata (at most MaxMetaLen bytes; the
// slice is copied) and disseminates it: the incarnation rises by one and
// the new Alive is queued and, outside ModeSWIM, sent at once to a few
// members, as a refutation is. Other members report the change with
// EventUpdate. Setting the metadata it already has does nothing. Errors:
// ErrMetaTooLarge, ErrLeft after Leave, ErrIncarnationExhausted when the
// incarnation is already MaxIncarnation.
func (m *Member) SetMeta(meta []byte) error {
	switch {
	case len(meta) > MaxMetaLen:
		return fmt.Errorf("%w: %d bytes", ErrMetaTooLarge, len(meta))
	case m.st != running:
		return ErrLeft
	case string(meta) == m.meta:
		return nil
	case m.inc == MaxIncarnation:
		return ErrIncarnationExhausted
	}
	m.meta = string(meta)
	m.inc++
	m.enqueue(m.selfAlive())
	m.announceAlive()
	return nil
}

// Meta returns this member's metadata (bytes in a string).
func (m *Member) Meta() string { return m.meta }
