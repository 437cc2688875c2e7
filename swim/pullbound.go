package swim

import "time"

// The pull bound (Config.PullsPerSender, Config.PullsPerPeriod): a pull
// (MsgJoin) costs its receiver O(n), a digest over its view and, unless
// the digests agree, its whole view sent back, so the pulls a member
// answers are counted per window of one ProbeInterval, per sender address
// and in all, and those over either bound go unanswered.

// pullBound is the current window's count of answered pulls.
type pullBound struct {
	until time.Duration  // end of the window
	total int            // pulls answered in the window
	from  map[string]int // by sender address; at most PullsPerPeriod entries
}

// admitPull reports whether the pull from from (with digest d) is
// answered, and counts it; a refused one is counted in Stats.PullsRefused.
// The answer to this member's own latest exchange (its peer's view
// request, without digest, within ProbeInterval: see answerPull) is always
// answered and not counted: this member asked for it.
func (m *Member) admitPull(now time.Duration, from Node, d ViewDigest) bool {
	if d.IsZero() && from.ID == m.sync.peer && now < m.sync.peerUntil {
		return true
	}
	b := &m.sync.pulls
	if now >= b.until {
		b.until, b.total = now+m.cfg.ProbeInterval, 0
		clear(b.from)
	}
	if b.total >= m.cfg.PullsPerPeriod || b.from[from.Addr] >= m.cfg.PullsPerSender {
		m.stats.PullsRefused++
		return false
	}
	if b.from == nil {
		b.from = make(map[string]int)
	}
	b.total++
	b.from[from.Addr]++
	return true
}
