package main

import (
	"fmt"
	"time"
)

// The join scenario: a new member joins the formed group through member 0
// (its one seed, as memberlist's users join), at the window's start. It
// measures what a service pays to add a member to a running group, where
// the rows' `join` column measures a group formed by N members started
// back to back. The detection columns then hold the join's times: “first
// detection” is when the joiner saw all N + 1 members, “full
// dissemination” when every member saw the joiner (and all the others).

// joined is a join scenario's outcome: the new member, and how long after
// its start it saw every member (own) and every member saw it (all); -1
// when that did not happen before the window's end.
type joined struct {
	node     Node
	own, all time.Duration
}

// joinFormed starts member len(nodes) of c joined through seed, the
// address of member 0, and waits until every member, the new one
// included, sees all of them, or until end.
func joinFormed(c Cluster, nodes []Node, seed string, rec *Recorder, runSeed uint64, end time.Time) (joined, error) {
	j := joined{own: -1, all: -1}
	n := len(nodes) + 1
	t0 := time.Now()
	nd, _, err := c.StartOne(len(nodes), []string{seed}, rec, runSeed)
	if err != nil {
		return j, fmt.Errorf("join into the formed group: %w", err)
	}
	j.node = nd
	for time.Now().Before(end) {
		if j.own < 0 && nd.Alive() == n {
			j.own = time.Since(t0)
		}
		all := j.own >= 0
		for _, m := range nodes {
			if m.Alive() != n {
				all = false
				break
			}
		}
		if all {
			j.all = time.Since(t0)
			return j, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return j, nil
}

// timed reports whether scenario sc fills the detection columns: a kill's
// detection, or the join scenario's times.
func timed(sc string) bool { return isKill(sc) || sc == "join" }
