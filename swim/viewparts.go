package swim

import (
	"slices"
	"time"
)

// View transfers in parts. A view too large for one packet (a join's
// answer, an anti-entropy exchange) goes out in several MsgSync packets,
// each marked with its place in the whole (Packet.Part: Offset is the
// index of its first entry, Total the number of entries of the transfer;
// sendSync). A member with a Config.MergeFilter holds the parts of a
// sender's transfer until it has them all, asks the filter once about
// every entry, and then merges all of them, or none: memberlist's
// MergeDelegate is likewise given a push-pull's whole remote state
// before any of it is merged (its state travels on one TCP stream). Asked
// part by part, the filter could refuse the part that names a member of
// another datacenter after the earlier parts had been merged.
//
// A member without a MergeFilter merges each part as it comes, as it
// merges any packet: a part lost on the way (views go as datagrams when
// the stream path is off or fails) costs only its own entries. Packets
// without a Part (a view whole in one packet, or from a sender that does
// not mark its parts) are asked about one by one.
//
// Memory is bounded: at most maxHeldViews transfers are held at once (a
// new one displaces the oldest), each of at most MaxMembers entries, and a
// transfer still incomplete heldViewPeriods protocol periods after its
// first part is dropped. Every transfer dropped incomplete is counted
// (Stats.ViewsIncomplete).

// maxHeldViews bounds the incomplete view transfers held at once.
const maxHeldViews = 4

// heldViewPeriods is how long, in protocol periods, an incomplete view
// transfer is held: its parts leave the sender together (a burst of
// datagrams or one stream), so one still missing after that was lost.
const heldViewPeriods = 2

// heldView is one sender's view transfer being collected.
type heldView struct {
	from  ID
	total int
	have  int // entries held
	first time.Duration
	parts []heldPart
}

// heldPart is one received part, with what Step knew of where it came from.
type heldPart struct {
	pkt           Packet
	sourceChecked bool
	otherSource   bool
}

// viewPart reports whether pkt is a part of a view transfer split over
// several packets (not the whole of one).
func viewPart(pkt *Packet) bool {
	return pkt.Kind == MsgSync && !pkt.Part.IsZero() && (pkt.Part.Offset > 0 || int(pkt.Part.Total) > len(pkt.Updates))
}

// holdViewPart keeps pkt, a part of a view transfer from from, and once
// every part of that transfer is in, asks the MergeFilter about all of its
// entries and, unless it refuses, steps every part in order. Step's
// context flags of each part are kept with it.
func (m *Member) holdViewPart(in *inbound, from Node, pkt *Packet) {
	m.expireHeldViews(in.now)
	total := int(pkt.Part.Total)
	if total > m.cfg.MaxMembers {
		// More entries than any view holds: never merged, not held.
		m.stats.ViewsIncomplete++
		m.viewRefused(pkt.From.ID)
		return
	}
	i := slices.IndexFunc(m.heldViews, func(v *heldView) bool { return v.from == pkt.From.ID })
	if i >= 0 && (m.heldViews[i].total != total || m.heldViews[i].overlaps(pkt)) {
		// Another transfer from the same sender (a part already held
		// again, or another size): the older one will not complete.
		m.dropHeldView(i)
		i = -1
	}
	if i < 0 {
		if len(m.heldViews) >= maxHeldViews {
			m.dropHeldView(0)
		}
		m.heldViews = append(m.heldViews, &heldView{from: pkt.From.ID, total: total, first: in.now})
		i = len(m.heldViews) - 1
	}
	v := m.heldViews[i]
	keep := *pkt
	keep.Updates = slices.Clone(pkt.Updates)
	keep.State = slices.Clone(pkt.State)
	keep.Broadcasts = slices.Clone(pkt.Broadcasts)
	v.parts = append(v.parts, heldPart{pkt: keep, sourceChecked: in.sourceChecked, otherSource: in.otherSource})
	v.have += len(pkt.Updates)
	if v.have < v.total {
		return
	}
	m.heldViews = slices.Delete(m.heldViews, i, i+1)
	slices.SortFunc(v.parts, func(a, b heldPart) int { return int(a.pkt.Part.Offset) - int(b.pkt.Part.Offset) })
	all := make([]Update, 0, v.total)
	for k := range v.parts {
		all = append(all, v.parts[k].pkt.Updates...)
	}
	if m.cfg.MergeFilter(from, all) != nil {
		m.stats.MergesRefused++
		m.viewRefused(v.from)
		m.seedViewRefused(from, v.parts[0].pkt.JoinToken)
		return
	}
	m.viewAccepted(in.now, v.from)
	for k := range v.parts {
		hp := &v.parts[k]
		// Already validated and screened but for the filter, which
		// has seen the whole transfer: cannot fail.
		_ = m.step(&inbound{now: in.now, sourceChecked: hp.sourceChecked, otherSource: hp.otherSource, viewChecked: true}, &hp.pkt)
	}
}

// overlaps reports whether pkt's entries overlap a part already held.
func (v *heldView) overlaps(pkt *Packet) bool {
	lo, hi := int(pkt.Part.Offset), int(pkt.Part.Offset)+len(pkt.Updates)
	for k := range v.parts {
		p := &v.parts[k].pkt
		if plo, phi := int(p.Part.Offset), int(p.Part.Offset)+len(p.Updates); lo < phi && plo < hi {
			return true
		}
	}
	return false
}

// dropHeldView forgets the incomplete transfer held at index i.
func (m *Member) dropHeldView(i int) {
	m.stats.ViewsIncomplete++
	m.viewRefused(m.heldViews[i].from)
	m.heldViews = slices.Delete(m.heldViews, i, i+1)
}

// expireHeldViews drops the transfers held for heldViewPeriods protocol
// periods or more.
func (m *Member) expireHeldViews(now time.Duration) {
	for i := 0; i < len(m.heldViews); {
		if now-m.heldViews[i].first >= mulTimer(m.cfg.ProbeInterval, heldViewPeriods) {
			m.dropHeldView(i)
			continue
		}
		i++
	}
}
