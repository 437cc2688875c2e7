package swim

import (
	"slices"
	"time"
)

// Application states under a merge veto. A view transfer's sender sends
// its application state (Config.LocalState) in a MsgSync packet of its
// own, ahead of its view (sendState). A member with a Config.MergeFilter
// delivers that state only once the filter accepted the sender's view,
// as memberlist calls MergeRemoteState only after its MergeDelegate
// accepted the push-pull's remote nodes: a refused view's state never
// reaches the application. The state is held (heldState), its packet
// left unmerged (the sender's Alive it carries comes again with the
// view), until the verdict on the sender's next view transfer; it is
// delivered at once when
//   - the filter accepted that sender's view within heldViewPeriods
//     before (the view may overtake its state on the way), or
//   - it answers this member's own latest anti-entropy exchange (the
//     first state from that exchange's peer, at the peer's address in the
//     view, within ProbeInterval of the pull) and carries the digest of
//     its sender's view (Packet.Digest) equal to this member's own: the
//     views are equal, and a pull whose digests match sends no view. The
//     filter is then asked about this member's own view, as sent in a
//     transfer, which is the view the sender claims: this member's view
//     may hold members that no filter saw (gossip brings them, and
//     memberlist's MergeDelegate likewise sees join push-pulls only). A
//     refusal drops the state and counts as a refused transfer.
//
// A digest is the sender's claim, and this member's own digest is no
// secret: it goes out with every pull. So an equal digest on any other
// state proves nothing: a sender whose view the filter would refuse
// could put this member's digest on its state to have it delivered. Such
// a state is held like any other. The common one is the state of a
// member that pulls this one with an equal digest: the pull is answered
// with this member's state and, as that sender's state is held, a
// request for its view (answerPull), whose verdict delivers the state.
// A group whose members all have a MergeFilter and a LocalState thus
// sends one view per exchange where the views agree (memberlist's
// push-pull sends both, always).
//
// A held state is dropped when the filter refuses its sender's view or a
// join from it, when that sender's transfer in parts is dropped
// incomplete, when another state from the same sender displaces it, and
// when no verdict came within heldViewPeriods protocol periods (the view
// was lost). Each drop is counted (AppStats.StatesWithheld). At most
// maxHeldStates states and as many verdicts are held; a new one
// displaces the oldest. A member without a MergeFilter delivers every
// state as it comes.

// maxHeldStates bounds the states awaiting a verdict, and the verdicts
// remembered, at once.
const maxHeldStates = 8

// heldState is an application state awaiting its sender's view verdict.
type heldState struct {
	at    time.Duration
	state RemoteState
}

// viewVerdict is the time of the MergeFilter's latest acceptance of a
// sender's view.
type viewVerdict struct {
	from ID
	at   time.Duration
}

// holdState holds the application state that pkt, a MsgSync from
// another member that the MergeFilter accepted, carries, unless it may be
// delivered at once (see above), and reports whether it did. A held
// state's packet is not merged either: the sender's Alive it carries
// comes again with the view, if accepted. A state too large is left to
// receiveUser, which refuses it.
func (m *Member) holdState(in *inbound, pkt *Packet) bool {
	now := in.now
	if len(pkt.State) > m.cfg.MaxStateSize {
		return false
	}
	m.expireHeldStates(now)
	if slices.ContainsFunc(m.app.accepted, func(v viewVerdict) bool { return v.from == pkt.From.ID }) {
		return false
	}
	if m.answersOwnPull(in, pkt) {
		from := pkt.From
		if from.Addr == "" {
			from.Addr = m.peers[from.ID].node.Addr // answersOwnPull: held
		}
		if m.cfg.MergeFilter(from, m.viewUpdates()) == nil {
			return false
		}
		m.stats.MergesRefused++
		m.stats.StatesReceived++
		m.stats.StatesWithheld++
		m.viewRefused(pkt.From.ID)
		return true
	}
	m.dropHeldState(pkt.From.ID)
	if len(m.app.held) >= maxHeldStates {
		m.app.held = slices.Delete(m.app.held, 0, 1)
		m.stats.StatesWithheld++
	}
	m.stats.StatesReceived++
	st := RemoteState{From: pkt.From, State: slices.Clone(pkt.State), Join: in.joinAnswer}
	m.app.held = append(m.app.held, heldState{at: now, state: st})
	return true
}

// answersOwnPull reports whether the state pkt answers this member's own
// latest anti-entropy exchange with views equal (see above): the first
// state from the exchange's peer, at its address in the view and from
// that address, within ProbeInterval of the pull, with a digest equal to
// this member's. The exchange's one answer is spent on the first state
// from its peer, whatever its digest.
func (m *Member) answersOwnPull(in *inbound, pkt *Packet) bool {
	if !m.sync.stateDue || pkt.From.ID != m.sync.peer || in.now >= m.sync.peerUntil {
		return false
	}
	p := m.peers[pkt.From.ID]
	if p == nil || in.otherSource || (pkt.From.Addr != "" && pkt.From.Addr != p.node.Addr) {
		return false
	}
	m.sync.stateDue = false
	return !pkt.Digest.IsZero() && pkt.Digest == m.digest()
}

// holdsState reports whether a state from from awaits its view's verdict.
func (m *Member) holdsState(from ID) bool {
	return slices.ContainsFunc(m.app.held, func(h heldState) bool { return h.state.From.ID == from })
}

// viewAccepted records that the MergeFilter accepted a view transfer
// (MsgSync, whole or in parts) from from, and delivers from's held state.
func (m *Member) viewAccepted(now time.Duration, from ID) {
	m.expireHeldStates(now)
	if i := slices.IndexFunc(m.app.held, func(h heldState) bool { return h.state.From.ID == from }); i >= 0 {
		m.app.states = append(m.app.states, m.app.held[i].state)
		m.app.held = slices.Delete(m.app.held, i, i+1)
	}
	m.app.accepted = slices.DeleteFunc(m.app.accepted, func(v viewVerdict) bool { return v.from == from })
	if len(m.app.accepted) >= maxHeldStates {
		m.app.accepted = slices.Delete(m.app.accepted, 0, 1)
	}
	m.app.accepted = append(m.app.accepted, viewVerdict{from: from, at: now})
}

// viewRefused drops from's held state and any earlier acceptance of its
// view: the MergeFilter refused a view transfer or a join from it, or its
// transfer in parts was dropped incomplete.
func (m *Member) viewRefused(from ID) {
	m.dropHeldState(from)
	m.app.accepted = slices.DeleteFunc(m.app.accepted, func(v viewVerdict) bool { return v.from == from })
}

// dropHeldState drops from's held state, if any.
func (m *Member) dropHeldState(from ID) {
	if i := slices.IndexFunc(m.app.held, func(h heldState) bool { return h.state.From.ID == from }); i >= 0 {
		m.app.held = slices.Delete(m.app.held, i, i+1)
		m.stats.StatesWithheld++
	}
}

// expireHeldStates drops the states and verdicts older than
// heldViewPeriods protocol periods.
func (m *Member) expireHeldStates(now time.Duration) {
	limit := mulTimer(m.cfg.ProbeInterval, heldViewPeriods)
	n := len(m.app.held)
	m.app.held = slices.DeleteFunc(m.app.held, func(h heldState) bool { return now-h.at >= limit })
	m.stats.StatesWithheld += n - len(m.app.held)
	m.app.accepted = slices.DeleteFunc(m.app.accepted, func(v viewVerdict) bool { return now-v.at >= limit })
}
