package main

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fdkit/fdkit/monitor"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// recentMax is the number of recent transitions shown under the table on a
// terminal, a summary that stays in view while the log scrolls above.
const recentMax = 8

func (r *receiver) transition(det string, t monitor.Transition) {
	line := fmt.Sprintf("%v  %s  %s: %s → %s (%s)", t.At.Round(time.Millisecond), t.Peer, det, t.Old, t.New, t.Cause)
	r.mu.Lock()
	r.stats.Transitions[det]++
	r.recent = append(r.recent, line)
	if len(r.recent) > recentMax {
		r.recent = r.recent[len(r.recent)-recentMax:]
	}
	r.mu.Unlock()
	if r.transLimiter().Allow(t.Found, "transition") {
		r.log.Info("transition", "detector", det, "peer", t.Peer, "old", t.Old.String(), "new", t.New.String(),
			"cause", t.Cause.String(), "level", t.Level, "at", t.At, "found", t.Found, "warming_up", t.WarmingUp)
	}
	if r.cfg.onTransition != nil {
		r.cfg.onTransition(det, t)
	}
}

type row struct {
	peer string
	det  int
	st   monitor.PeerState
}

// tableRows returns the rows of the TableSenders senders with the most
// heartbeats (then by name), all their detectors, sorted by sender and
// detector; and how many senders were left out, and how many of those have a
// detector suspecting them. Forged names, with a heartbeat or two each, sink
// below the real senders, and the table's size stays bounded in a flood.
func (r *receiver) tableRows() (rows []row, more, moreSuspected int) {
	type agg struct {
		beats     uint64
		suspected bool
		rows      []row
	}
	by := map[string]*agg{}
	r.eval.Lock()
	for i, nm := range r.mons {
		for _, s := range nm.m.Snapshot() {
			a := by[s.Peer]
			if a == nil {
				a = &agg{}
				by[s.Peer] = a
			}
			a.beats = max(a.beats, s.Heartbeats)
			a.suspected = a.suspected || s.Status == monitor.Suspected
			a.rows = append(a.rows, row{s.Peer, i, s})
		}
	}
	r.eval.Unlock()
	peers := slices.Collect(maps.Keys(by))
	k := min(r.cfg.TableSenders, len(peers))
	slices.SortFunc(peers, func(a, b string) int {
		return cmp.Or(cmp.Compare(by[b].beats, by[a].beats), strings.Compare(a, b))
	})
	for _, p := range peers[k:] {
		more++
		if by[p].suspected {
			moreSuspected++
		}
	}
	peers = peers[:k]
	slices.Sort(peers)
	for _, p := range peers {
		rs := by[p].rows
		slices.SortFunc(rs, func(a, b row) int { return cmp.Compare(a.det, b.det) })
		rows = append(rows, rs...)
	}
	return rows, more, moreSuspected
}

func fmtLevel(x float64) string {
	if x > 1e6 {
		return "inf"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// region returns the terminal region the table is drawn in (made on Table
// on first use for the receivers tests build by hand; runRecv makes it
// before any goroutine).
func (r *receiver) region() *liveRegion {
	if r.cfg.display == nil {
		r.cfg.display = newLiveRegion(r.cfg.Table, nil, nil)
	}
	return r.cfg.display
}

func (r *receiver) printTable() {
	rows, more, moreSusp := r.tableRows()
	w := r.cfg.Table
	elapsed := r.clock.Now().Round(100 * time.Millisecond)
	if !r.cfg.Terminal {
		for _, x := range rows {
			fmt.Fprintf(w, "t=%v sender=%s detector=%s status=%s level=%s heartbeats=%d suspicions=%d\n",
				elapsed, x.peer, r.mons[x.det].name, x.st.Status, fmtLevel(x.st.Level), x.st.Heartbeats, x.st.Suspicions)
		}
		if more > 0 {
			fmt.Fprintf(w, "t=%v more_senders=%d suspected=%d (not shown: --table-senders %d)\n", elapsed, more, moreSusp, r.cfg.TableSenders)
		}
		return
	}
	var frame bytes.Buffer
	w = &frame
	defer func() { r.region().Draw(frame.Bytes()) }()
	fmt.Fprintf(w, "fdbeat recv: %v, %d sender(s), host lateness %v   level: φ for phi-*, elapsed/timeout for timeout-*\n",
		elapsed, len(rows)/max(1, len(r.mons))+more, r.latenessBound().Round(time.Millisecond))
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("sender", "detector", "status", "level", "to τ", "since last", "heartbeats", "suspicions")
	for _, x := range rows {
		toTau := "-"
		if x.st.HasFreshnessPoint {
			toTau = (x.st.FreshnessPoint - x.st.Now).Round(time.Millisecond).String()
		}
		_ = t.Append(x.peer, r.mons[x.det].name, x.st.Status.String(), fmtLevel(x.st.Level), toTau,
			(x.st.Now - x.st.LastArrival).Round(time.Millisecond).String(),
			strconv.FormatUint(x.st.Heartbeats, 10), strconv.FormatUint(x.st.Suspicions, 10))
	}
	_ = t.Render()
	if more > 0 {
		fmt.Fprintf(w, "… and %d more sender(s), %d of them suspected (the table shows the %d with the most heartbeats)\n", more, moreSusp, r.cfg.TableSenders)
	}
	r.mu.Lock()
	recent := slices.Clone(r.recent)
	r.mu.Unlock()
	if len(recent) > 0 {
		fmt.Fprintf(w, "last transitions (monitor clock):\n  %s\n", strings.Join(recent, "\n  "))
	}
}
