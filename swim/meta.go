package swim

import (
	"fmt"
	"time"
)

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
	m.announceAlive("", nil)
	return nil
}

// restateMeta answers an Alive about this member in its current
// incarnation that carries other metadata: the group holds a previous
// life's metadata (this member restarted with new metadata and the same
// incarnation, which no one would take as news). Like memberlist, which
// refutes an Alive about itself whose metadata differs, it raises the
// incarnation and disseminates its Alive, without the refutation's health
// penalty (Stats.MetaRestated). An Alive without a version range (relayed
// in wire format 1, which drops the metadata) proves nothing.
func (m *Member) restateMeta(in *inbound, u *Update) {
	if u.Incarnation != m.inc || u.Versions.IsZero() || u.Meta == m.meta || m.inc == MaxIncarnation {
		return
	}
	m.inc++
	m.stats.MetaRestated++
	m.enqueue(m.selfAlive())
	m.announceBounded(in, "", nil)
}

// Meta returns this member's metadata (bytes in a string).
func (m *Member) Meta() string { return m.meta }

// learnMeta takes the metadata and version range of u, an Alive at the
// incarnation stored for p, when p's entry has no range yet: the first
// Alive heard in that incarnation came through a member writing wire
// format 1, which drops both fields, and no later incarnation will bring
// them until p changes its metadata. A change of metadata is reported
// with EventUpdate. With signed self-updates the proof must verify, as it
// covers the metadata.
func (m *Member) learnMeta(now time.Duration, p *peer, u *Update) {
	if u.Incarnation != p.inc || u.Versions.IsZero() || !p.versions.IsZero() || u.Node != p.node {
		return
	}
	if m.signed() && !m.checkSelfUpdate(now, p, u) {
		return
	}
	changed := u.Meta != p.meta
	p.meta, p.versions = u.Meta, u.Versions
	if changed && (p.state == StateAlive || p.state == StateSuspect) {
		m.emit(EventUpdate, p, u.From, now)
	}
}
