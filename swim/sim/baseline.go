package sim

import (
	"fmt"
	"math/rand/v2"
)

// The heartbeating baselines run in synchronous rounds (the unit in which they
// are usually described, [Field-vi] in docs/algorithms.md, “Published field
// measurements”): in round r every live member sends what it knows at the end
// of round r−1, packets are lost independently with probability Loss, and
// receivers merge them at the end of round r. A round plays the part of SWIM's
// protocol period.

// BaselineConfig configures a heartbeating baseline.
type BaselineConfig struct {
	// N members, at least 2.
	N int
	// Rounds to run.
	Rounds int
	// Seed makes the run reproducible.
	Seed uint64
	// Loss is the probability that a message is lost, in [0, 1).
	Loss float64
	// Fanout is the number of distinct random members a gossiping member
	// sends its table to each round (gossip only; default 2).
	Fanout int
	// TFail: a member is suspected (declared failed) by an observer whose
	// entry for it has not increased for more than TFail rounds (default 10).
	TFail int
	// TCleanup: a failed entry is forgotten TCleanup rounds after it was
	// declared failed (gossip only; default 2·TFail, van Renesse et al.).
	// Until then its counter is kept so that stale gossip cannot revive it.
	TCleanup int
	// Crash lists members that crash, and CrashRound the round at which
	// they stop sending (0: none).
	Crash      []int
	CrashRound int
}

// BaselineResult reports a baseline run.
type BaselineResult struct {
	// MsgsPerRound is the mean number of messages sent per round by the
	// whole group; BytesPerRound their estimated size (a heartbeat is an ID
	// and a counter; a gossip message a table of IDs and counters).
	MsgsPerRound  float64
	BytesPerRound float64
	// FalseSuspicions counts (observer, subject, round) triples in which a
	// live member suspects a live member.
	FalseSuspicions int
	// FalseNodeRounds counts (observer, round) pairs in which the observer
	// suspects at least one live member.
	FalseNodeRounds int
	// DetectAll is the mean number of rounds from the crash round to the
	// round at which every live member suspects the crashed member (−1 when
	// some crashed member was not detected by all before the end).
	DetectAll float64
	// Spread is the mean number of rounds a fresh heartbeat counter needs
	// to reach every live member (gossip only): measured for the counter
	// value every member has at the first round after warm-up.
	Spread float64
}

func (c *BaselineConfig) normalize() error {
	if c.N < 2 {
		return fmt.Errorf("sim: baseline needs N >= 2, got %d", c.N)
	}
	if c.Loss < 0 || c.Loss >= 1 {
		return fmt.Errorf("sim: baseline loss %v outside [0, 1)", c.Loss)
	}
	if c.Fanout == 0 {
		c.Fanout = 2
	}
	if c.TFail == 0 {
		c.TFail = 10
	}
	if c.TCleanup == 0 {
		c.TCleanup = 2 * c.TFail
	}
	if c.Fanout < 1 || c.Fanout >= c.N || c.TFail < 1 || c.TCleanup < 1 || c.Rounds < 1 {
		return fmt.Errorf("sim: baseline needs 1 <= Fanout < N, TFail >= 1, TCleanup >= 1, Rounds >= 1")
	}
	for _, i := range c.Crash {
		if i < 0 || i >= c.N {
			return fmt.Errorf("sim: baseline crash of member %d outside [0, %d)", i, c.N)
		}
	}
	return nil
}

// heartbeatBytes and entryBytes estimate message sizes like swim.Packet.Size:
// a header, then per entry an ID of 5 bytes with its length and a 10-byte
// uvarint counter.
const (
	baselineHeader = 4 + 2 + 5
	entryBytes     = 2 + 5 + 10
)

// AllToAll runs all-to-all heartbeating: every round each live member sends
// a heartbeat to each of the other N−1 members (N·(N−1) messages per
// round); an observer suspects a member whose heartbeat it has not received
// for more than TFail rounds.
func AllToAll(cfg BaselineConfig) (BaselineResult, error) {
	if err := cfg.normalize(); err != nil {
		return BaselineResult{}, err
	}
	n := cfg.N
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xA11))
	crashed := make([]bool, n)
	last := make([][]int32, n) // last[obs][subj]: round of the newest heartbeat
	for i := range last {
		last[i] = make([]int32, n)
	}
	var res BaselineResult
	var msgs int64
	det := newDetectTracker(cfg, n)
	for r := 1; r <= cfg.Rounds; r++ {
		if cfg.CrashRound > 0 && r == cfg.CrashRound {
			for _, c := range cfg.Crash {
				crashed[c] = true
			}
		}
		for s := 0; s < n; s++ {
			if crashed[s] {
				continue
			}
			for o := 0; o < n; o++ {
				if o == s {
					continue
				}
				msgs++
				if cfg.Loss > 0 && rng.Float64() < cfg.Loss {
					continue
				}
				if !crashed[o] {
					last[o][s] = int32(r)
				}
			}
		}
		for o := 0; o < n; o++ {
			if crashed[o] {
				continue
			}
			any := false
			for s := 0; s < n; s++ {
				if s == o {
					continue
				}
				susp := r-int(last[o][s]) > cfg.TFail
				if susp && !crashed[s] {
					res.FalseSuspicions++
					any = true
				}
				det.observe(r, o, s, susp, crashed)
			}
			if any {
				res.FalseNodeRounds++
			}
		}
	}
	res.MsgsPerRound = float64(msgs) / float64(cfg.Rounds)
	res.BytesPerRound = res.MsgsPerRound * float64(baselineHeader+entryBytes)
	res.DetectAll = det.mean()
	res.Spread = 1
	return res, nil
}

// detectTracker measures when every live member suspects each crashed one.
type detectTracker struct {
	cfg   BaselineConfig
	isC   []bool
	count map[int]map[int]bool
	done  map[int]int
}

func newDetectTracker(cfg BaselineConfig, n int) *detectTracker {
	t := &detectTracker{cfg: cfg, isC: make([]bool, n), count: map[int]map[int]bool{}, done: map[int]int{}}
	for _, c := range cfg.Crash {
		t.isC[c] = true
		t.count[c] = map[int]bool{}
	}
	return t
}

func (t *detectTracker) observe(r, o, s int, susp bool, crashed []bool) {
	if !t.isC[s] || t.cfg.CrashRound == 0 || r < t.cfg.CrashRound {
		return
	}
	if _, ok := t.done[s]; ok || !susp {
		return
	}
	t.count[s][o] = true
	live := 0
	for i := range crashed {
		if !crashed[i] {
			live++
		}
	}
	if len(t.count[s]) == live {
		t.done[s] = r - t.cfg.CrashRound + 1
	}
}

func (t *detectTracker) mean() float64 {
	if len(t.cfg.Crash) == 0 || t.cfg.CrashRound == 0 {
		return 0
	}
	sum := 0
	for _, c := range t.cfg.Crash {
		d, ok := t.done[c]
		if !ok {
			return -1
		}
		sum += d
	}
	return float64(sum) / float64(len(t.cfg.Crash))
}

// GossipHeartbeat runs gossip-style heartbeating (van Renesse, Minsky,
// Hayden, "A gossip-style failure detection service", Middleware 1998):
// every round each live member increments its own heartbeat counter and
// sends its whole table of counters to Fanout distinct random members;
// receivers keep the larger counter of each entry and note the round it
// last increased. An observer suspects a member whose counter has not
// increased for more than TFail rounds, and forgets it TCleanup rounds
// later (keeping its counter until then so that stale copies do not revive
// it).
func GossipHeartbeat(cfg BaselineConfig) (BaselineResult, error) {
	if err := cfg.normalize(); err != nil {
		return BaselineResult{}, err
	}
	g := newGossipRun(cfg)
	for r := 1; r <= cfg.Rounds; r++ {
		if cfg.CrashRound > 0 && r == cfg.CrashRound {
			for _, c := range cfg.Crash {
				g.crashed[c] = true
			}
		}
		for o := range g.next {
			copy(g.next[o], g.ctr[o])
		}
		for s := range g.ctr {
			if !g.crashed[s] {
				g.beat(s, r)
			}
		}
		for o := range g.ctr {
			if !g.crashed[o] {
				g.merge(o, r)
			}
		}
		g.trackSpread(r)
	}
	return g.result(), nil
}

// gossipRun is the state of one GossipHeartbeat run: each member's table
// of counters, indexed [observer][subject].
type gossipRun struct {
	cfg     BaselineConfig
	rng     *rand.Rand
	crashed []bool
	ctr     [][]int32 // counters
	upd     [][]int32 // round in which ctr[obs][subj] last increased
	gone    [][]bool  // forgotten after TCleanup
	next    [][]int32 // merged counters, applied at round end
	det     *detectTracker
	res     BaselineResult
	msgs    int64
	bytes   int64
	targets []int // the current sender's gossip targets

	// Spread of the counter values members hold after round spreadFrom:
	// reached[s] is the round at which every live member knew target[s].
	spreadFrom int
	target     []int32
	reached    []int
}

func newGossipRun(cfg BaselineConfig) *gossipRun {
	n := cfg.N
	g := &gossipRun{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6055)),
		crashed: make([]bool, n), ctr: make([][]int32, n), upd: make([][]int32, n),
		gone: make([][]bool, n), next: make([][]int32, n), det: newDetectTracker(cfg, n),
		targets: make([]int, cfg.Fanout), spreadFrom: min(cfg.TFail+5, cfg.Rounds/2),
		target: make([]int32, n), reached: make([]int, n)}
	for i := range g.ctr {
		g.ctr[i], g.upd[i], g.next[i], g.gone[i] = make([]int32, n), make([]int32, n), make([]int32, n), make([]bool, n)
	}
	return g
}

// beat increments s's own counter for round r and sends s's table (the
// entries it has not forgotten) to Fanout distinct random members.
func (g *gossipRun) beat(s, r int) {
	g.ctr[s][s]++
	g.next[s][s] = g.ctr[s][s]
	g.upd[s][s] = int32(r)
	entries := 0
	for _, gone := range g.gone[s] {
		if !gone {
			entries++
		}
	}
	pickDistinct(g.rng, len(g.ctr), s, g.targets)
	for _, o := range g.targets {
		g.msgs++
		g.bytes += int64(baselineHeader + entries*entryBytes)
		if g.cfg.Loss > 0 && g.rng.Float64() < g.cfg.Loss {
			continue
		}
		if g.crashed[o] {
			continue
		}
		src, dst := g.ctr[s], g.next[o]
		for j := range src {
			if src[j] > dst[j] && !g.gone[s][j] {
				dst[j] = src[j]
			}
		}
	}
}

// merge applies what o received in round r, then judges every other
// member: suspected past TFail rounds without an increase, forgotten
// TCleanup rounds later.
func (g *gossipRun) merge(o, r int) {
	any := false
	for j := range g.ctr[o] {
		if g.next[o][j] > g.ctr[o][j] {
			g.ctr[o][j] = g.next[o][j]
			g.upd[o][j] = int32(r)
			g.gone[o][j] = false
		}
		if j == o {
			continue
		}
		age := r - int(g.upd[o][j])
		susp := age > g.cfg.TFail
		if age > g.cfg.TFail+g.cfg.TCleanup {
			g.gone[o][j] = true
		}
		if susp && !g.crashed[j] {
			g.res.FalseSuspicions++
			any = true
		}
		g.det.observe(r, o, j, susp, g.crashed)
	}
	if any {
		g.res.FalseNodeRounds++
	}
}

// trackSpread records, from round spreadFrom on, the round at which every
// live member holds each live member's counter of round spreadFrom.
func (g *gossipRun) trackSpread(r int) {
	if r == g.spreadFrom {
		for s := range g.target {
			g.target[s] = g.ctr[s][s]
		}
	}
	if r < g.spreadFrom {
		return
	}
	for s := range g.target {
		if g.crashed[s] || g.reached[s] > 0 {
			continue
		}
		all := true
		for o := 0; o < len(g.ctr) && all; o++ {
			if !g.crashed[o] && g.ctr[o][s] < g.target[s] {
				all = false
			}
		}
		if all {
			g.reached[s] = r - g.spreadFrom + 1
		}
	}
}

// result returns the run's averages.
func (g *gossipRun) result() BaselineResult {
	res := g.res
	res.MsgsPerRound = float64(g.msgs) / float64(g.cfg.Rounds)
	res.BytesPerRound = float64(g.bytes) / float64(g.cfg.Rounds)
	res.DetectAll = g.det.mean()
	sum, cnt := 0, 0
	for _, d := range g.reached {
		if d > 0 {
			sum += d
			cnt++
		}
	}
	if cnt > 0 {
		res.Spread = float64(sum) / float64(cnt)
	}
	return res
}

// pickDistinct fills out with distinct random members other than self.
func pickDistinct(rng *rand.Rand, n, self int, out []int) {
	for i := range out {
	again:
		x := rng.IntN(n)
		if x == self {
			goto again
		}
		for _, y := range out[:i] {
			if y == x {
				goto again
			}
		}
		out[i] = x
	}
}

// RumorSpread measures how many rounds a single new fact needs to reach
// all n members when every member that knows it pushes it, each round, to
// fanout distinct random members (the dynamics of one fresh counter in
// gossip-style heartbeating, with no loss), averaged over trials. It needs
// O(n) memory, so it scales to 10,000 members where a full table of
// counters would not.
func RumorSpread(n, fanout, trials int, seed uint64) (float64, error) {
	if n < 2 || fanout < 1 || fanout >= n || trials < 1 {
		return 0, fmt.Errorf("sim: rumor spread needs n >= 2, 1 <= fanout < n, trials >= 1")
	}
	rng := rand.New(rand.NewPCG(seed, 0x52))
	know := make([]bool, n)
	newly := make([]int, 0, n)
	targets := make([]int, fanout)
	total := 0
	for t := 0; t < trials; t++ {
		clear(know)
		know[rng.IntN(n)] = true
		count, rounds := 1, 0
		for count < n {
			rounds++
			newly = newly[:0]
			for s := 0; s < n; s++ {
				if !know[s] {
					continue
				}
				pickDistinct(rng, n, s, targets)
				for _, o := range targets {
					if !know[o] {
						newly = append(newly, o)
					}
				}
			}
			for _, o := range newly {
				if !know[o] {
					know[o] = true
					count++
				}
			}
		}
		total += rounds
	}
	return float64(total) / float64(trials), nil
}
