package swim

import "slices"

// The delivery window of broadcasts (usermsg.go): which numbers of one
// origin's broadcasts a member has delivered, so that each is delivered
// once, however many members pass it on.

// seenWindow remembers the broadcasts delivered from one origin: the
// highest numbers delivered, ascending, up to a length (seenLen, or
// Config.MaxQueuedBroadcasts for an origin held live: windowLen). A
// number is new when it is not among them and, once the length is
// remembered, above the lowest.
// Numbers need not be consecutive: an agent numbers each broadcast with
// its clock in nanoseconds (BroadcastAt), and a window of the 64 numbers
// below the highest (RFC 4303 §3.4.3's bitmap, the first version) dropped
// every broadcast that arrived after a later one.
type seenWindow struct {
	nums []uint64
}

// seenLen is how many delivered numbers a seenWindow remembers for an
// origin not held live: the reordering of its broadcasts tolerated. An
// origin held live gets Config.MaxQueuedBroadcasts (windowLen): a queue
// sends the least-sent broadcasts first, the newest among equals, so a
// receiver gets a burst of one origin's far out of order, by up to the
// queue's length, and a window of 64 dropped every broadcast that came
// after 64 later ones as old news (usr30 M1: 4 members each broadcasting
// 100 writes at once kept 354–359 of the 400). The windows then hold at
// most 8 bytes × MaxQueuedBroadcasts for each member held live and 8 ×
// 64 for each other origin (MaxMembers origins).
const seenLen = 64

// windowLen returns how many numbers the window of broadcasts from
// origin remembers (seenLen).
func (m *Member) windowLen(origin ID) int {
	if m.heldLive(origin) {
		return max(seenLen, m.cfg.MaxQueuedBroadcasts)
	}
	return seenLen
}

// above reports whether seq is above every number remembered (or none
// is).
func (w *seenWindow) above(seq uint64) bool {
	return len(w.nums) == 0 || seq > w.nums[len(w.nums)-1]
}

// fresh reports whether seq is new, and marks it seen, in a window of
// length n (seenLen unless the caller says otherwise). Below the lowest of
// n remembered numbers it is taken as seen (old news: such a broadcast
// has finished spreading long ago, or is a replay), and stale reports it.
// A window longer than n (its origin no longer held live) loses its
// lowest numbers first.
func (w *seenWindow) fresh(seq uint64) bool {
	ok, _ := w.freshIn(seq, seenLen)
	return ok
}

func (w *seenWindow) freshIn(seq uint64, n int) (ok, stale bool) {
	if over := len(w.nums) - n; over > 0 {
		w.nums = slices.Delete(w.nums, 0, over)
	}
	i, found := slices.BinarySearch(w.nums, seq)
	switch {
	case found:
		return false, false
	case len(w.nums) < n:
		w.nums = slices.Insert(w.nums, i, seq)
	case i == 0:
		return false, true
	default:
		copy(w.nums[:i-1], w.nums[1:i]) // the lowest leaves
		w.nums[i-1] = seq
	}
	return true, false
}

// forgettableOrigin returns the origin whose window to forget, the
// windows being at their bound (MaxMembers), for a broadcast from origin:
// one not held live among the first forgetScan the map yields (in its
// random order); else, for an origin held live, the first; else none (ok
// false: the broadcast is refused). A flood of broadcasts from made-up
// origins then forgets made-up ones or is refused, never a live member's
// window, whose old broadcasts were delivered a second time once it was
// forgotten (usr30b C; atk30d F1: in a view full of live members the one
// window not live was rarely among those scanned). The scan is bounded,
// so that a new origin costs at most forgetScan lookups.
func (m *Member) forgettableOrigin(origin ID) (ID, bool) {
	var first ID
	n := 0
	for id := range m.app.seen {
		if n == 0 {
			first = id
		}
		if !m.heldLive(id) {
			return id, true
		}
		if n++; n == forgetScan {
			break
		}
	}
	return first, m.heldLive(origin)
}

// heldLive reports whether id is held alive or suspect.
func (m *Member) heldLive(id ID) bool {
	p := m.peers[id]
	return p != nil && (p.state == StateAlive || p.state == StateSuspect)
}

// forgetScan bounds the windows forgettableOrigin looks at.
const forgetScan = 64
