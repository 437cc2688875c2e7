package sim

import (
	"crypto/ed25519"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// An adversarial schedule checker: a Schedule is a random but reproducible
// sequence of faults (loss, delay and reordering, duplication, partitions
// and heals, probe traffic blocked while joins and syncs pass, pauses,
// crashes, restarts with and without a persisted
// incarnation, replays of earlier packets, and updates forged by a
// compromised key holder) played against a group for FaultTime, after which
// the faults stop (partitions heal, loss and delay return to normal;
// crashed members stay down) and the group has RecoveryBound to recover.
// Check runs it and checks the invariants; Shrink reduces a failing
// schedule to a minimal one, which GoTest prints as a Go test.
//
// Invariants, checked every CheckEvery and after every step (safety), and
// at the end (liveness, within the stated bound once the faults stop):
//
//   - monotone: the incarnation a view stores for a member never
//     decreases (while the member is in the view; a restarted observer
//     starts a new view);
//   - memory: no view holds more than CheckMaxMembers members, however
//     many fake IDs are forged;
//   - alive: every live member (not crashed; with a majority of the group
//     live, so it is reachable by a majority) is alive in every live view
//     RecoveryBound after the faults stop;
//   - dead: every crashed member, and every fake ID, is dead (or
//     forgotten) in every live view by then;
//   - converge: all live views then agree on every member's state.

// FaultKind is one kind of schedule step.
type FaultKind uint8

// Fault kinds.
const (
	FaultLoss       FaultKind = iota + 1 // random loss P for D
	FaultDelay                           // one-way delays uniform in [0.5 ms, D] for 10 s: reordering
	FaultDuplicate                       // each packet delivered to A in the next 10 s duplicated with probability P
	FaultPartition                       // members < A on one side, the rest on the other, for D
	FaultPause                           // member A paused for D
	FaultCrash                           // member A crashes
	FaultRestart                         // crashed member A restarts, joining through B; persisted incarnation when Persist
	FaultReplay                          // the K-th packet recorded so far delivered again to member B
	FaultForge                           // an update of kind Kind about member A (or a fake ID when A < 0) at incarnation Inc (relative when Rel) sent to B
	FaultProbeBlock                      // member A's probe traffic (all but MsgJoin and MsgSync) lost both ways for D: UDP blocked, joins and syncs pass
	FaultFlood                           // K forged Alive updates about new fake IDs sent to member B
	FaultForgeChain                      // Alive(A, h+2^20), Alive(A, h+2^21), Suspect(A, h+2^21) sent to B, h what B holds; signed with the forger's own key when K is odd
)

func (k FaultKind) String() string {
	return [...]string{"?", "FaultLoss", "FaultDelay", "FaultDuplicate", "FaultPartition", "FaultPause",
		"FaultCrash", "FaultRestart", "FaultReplay", "FaultForge", "FaultProbeBlock", "FaultFlood", "FaultForgeChain"}[min(int(k), 12)]
}

// Step is one fault of a schedule, at instant At.
type Step struct {
	At      time.Duration
	Fault   FaultKind
	A, B, K int
	P       float64
	D       time.Duration
	Persist bool
	Kind    swim.UpdateKind
	Inc     swim.Incarnation
	Rel     bool // Inc is added to the incarnation the target holds for A
}

// Schedule is a reproducible fault schedule for a group of N members.
type Schedule struct {
	Seed  uint64
	N     int
	Mode  swim.Mode
	Steps []Step
	// Unsigned runs the members without signed self-updates
	// (swim.Config.SigningKey nil). Forged Alive updates can then raise
	// the incarnation others store for a member beyond what it refutes,
	// so such schedules never draw FaultForgeChain (docs/algorithms.md,
	// “SWIM: hostile and stale updates”).
	Unsigned bool
}

// Checker parameters.
const (
	// FaultTime is how long faults are injected.
	FaultTime = 40 * time.Second
	// RecoveryBound is the stated bound: RecoveryBound after the faults
	// stop, the liveness invariants hold. For the checked configuration
	// (CheckConfig, at most CheckMaxMembers members, T = 1 s) it covers a
	// round of probes over a full view (16 periods) to suspect each fake
	// or crashed member, the longest Lifeguard suspicion timeout
	// (β·α·log10(16)·T = 28.9 s) to declare it, and two reconnect
	// intervals (10 s) for members that declared each other dead to meet
	// again: 55 s, rounded up to 60 s.
	RecoveryBound = 60 * time.Second
	// CheckEvery is the period of the safety checks.
	CheckEvery = 250 * time.Millisecond
)

// CheckMaxMembers is the memory bound checked: no view holds more
// members (swim.Config.MaxMembers in CheckConfig).
const CheckMaxMembers = 16

// CheckConfig is the member configuration the checker uses: the defaults,
// with reconnect pings every 5 s and push-pull every 10 s so that the
// recovery bound stays short, and views of at most CheckMaxMembers.
func CheckConfig(mode swim.Mode) swim.Config {
	return swim.Config{Mode: mode, ReconnectInterval: new(5 * time.Second), PushPullInterval: new(10 * time.Second),
		MaxMembers: CheckMaxMembers}
}

// RandomSchedule draws a schedule from seed: 4 to 7 members, a random mode,
// and 1 to 12 faults.
func RandomSchedule(seed uint64) Schedule {
	r := rand.New(rand.NewPCG(seed, 0xc4ec))
	s := Schedule{Seed: seed, N: 4 + r.IntN(4), Mode: swim.Mode(r.IntN(3))}
	s.Unsigned = r.IntN(4) == 0
	crashed := map[int]bool{}
	n := 1 + r.IntN(12)
	for range n {
		st := Step{At: time.Duration(r.Int64N(int64(FaultTime)))}
		st.Fault = FaultKind(1 + r.IntN(12))
		if st.Fault == FaultForgeChain && s.Unsigned {
			st.Fault = FaultForge
		}
		st.A, st.B = r.IntN(s.N), r.IntN(s.N)
		switch st.Fault {
		case FaultLoss:
			st.P, st.D = 0.05+0.5*r.Float64(), time.Duration(1+r.IntN(15))*time.Second
		case FaultDelay:
			st.D = time.Duration(1+r.IntN(400)) * time.Millisecond
		case FaultDuplicate:
			st.P = r.Float64()
		case FaultPartition:
			st.A = 1 + r.IntN(s.N-1)
			st.D = time.Duration(1+r.IntN(20)) * time.Second
		case FaultPause:
			st.D = time.Duration(100+r.IntN(8000)) * time.Millisecond
		case FaultProbeBlock:
			st.D = time.Duration(1+r.IntN(20)) * time.Second
		case FaultFlood:
			st.K = 1 + r.IntN(64)
		case FaultForgeChain:
			st.K = r.IntN(2)
		case FaultCrash:
			if len(crashed)+1 > (s.N-1)/2 { // keep a majority live
				st.Fault, st.D = FaultPause, time.Second
			}
			crashed[st.A] = true
		case FaultRestart:
			st.Persist = r.IntN(2) == 0
		case FaultReplay:
			st.K = r.IntN(1 << 16)
		case FaultForge:
			if r.IntN(4) == 0 {
				st.A = -1 - r.IntN(3) // fake IDs
			}
			st.Kind = swim.UpdateKind(1 + r.IntN(3))
			switch r.IntN(4) {
			case 0:
				st.Inc = swim.MaxIncarnation - swim.Incarnation(r.IntN(3))
			case 1:
				st.Inc = swim.Incarnation(r.IntN(4))
			default:
				st.Inc, st.Rel = swim.Incarnation(r.IntN(3)), true
			}
		}
		s.Steps = append(s.Steps, st)
	}
	slices.SortStableFunc(s.Steps, func(a, b Step) int { return int(a.At - b.At) })
	return s
}

// Violation is a broken invariant.
type Violation struct {
	Invariant string // monotone, memory, alive, dead, converge
	At        time.Duration
	Detail    string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("%s at %v: %s", v.Invariant, v.At, v.Detail)
}

// checkRun is one run of a schedule.
type checkRun struct {
	sc       Schedule
	s        *Sim
	loss     float64
	delayHi  time.Duration
	dupUntil []time.Duration
	dupP     []float64
	blocked  []time.Duration // probe traffic of member i lost until
	recorded []recorded
	fakes    map[swim.ID]bool
	seen     []map[swim.ID]swim.Incarnation // per observer: highest incarnation seen
	gens     []*swim.Member
	v        *Violation
	r        *rand.Rand
}

type recorded struct {
	to  int
	pkt swim.Packet
}

// Check runs the schedule and returns the first violation, or nil.
func (sc Schedule) Check() *Violation { return sc.check(nil) }

// check is Check with the simulation's configuration changed by mut (when
// not nil): the checker's tests break the configuration on purpose to show
// that each invariant can fail.
func (sc Schedule) check(mut func(*Config)) *Violation { return sc.checkObserved(mut, nil) }

// checkObserved is check with observe (when not nil) called on the
// simulation before it runs, after the checker's own hooks are installed:
// the golden test records the run through it.
func (sc Schedule) checkObserved(mut func(*Config), observe func(*Sim)) *Violation {
	c := &checkRun{sc: sc, fakes: map[swim.ID]bool{}, r: rand.New(rand.NewPCG(sc.Seed, 0xfa17))}
	c.delayHi = 1500 * time.Microsecond
	cfg := Config{N: sc.N, Seed: sc.Seed, Member: CheckConfig(sc.Mode), StartSpread: time.Second, Signed: !sc.Unsigned,
		Delay: func(_, _ int, r *rand.Rand) time.Duration {
			lo := 500 * time.Microsecond
			return lo + time.Duration(r.Int64N(int64(c.delayHi-lo)+1))
		},
		LinkLoss: func(int, int) float64 { return c.loss },
		Drop: func(now time.Duration, from, to int, p *swim.Packet) bool {
			return p.Kind != swim.MsgJoin && p.Kind != swim.MsgSync && (now < c.blocked[from] || now < c.blocked[to])
		},
	}
	if mut != nil {
		mut(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		return &Violation{Invariant: "setup", Detail: err.Error()}
	}
	c.s = s
	c.dupUntil = make([]time.Duration, sc.N)
	c.dupP = make([]float64, sc.N)
	c.blocked = make([]time.Duration, sc.N)
	c.seen = make([]map[swim.ID]swim.Incarnation, sc.N)
	c.gens = make([]*swim.Member, sc.N)
	s.SetPacketHook(c.onPacket)
	if observe != nil {
		observe(s)
	}
	for _, st := range sc.Steps {
		s.At(st.At, func() { c.apply(st); c.safety() })
	}
	s.At(FaultTime, func() { c.loss, c.delayHi = 0, 1500*time.Microsecond; s.Heal() })
	for t := CheckEvery; t <= FaultTime+RecoveryBound && c.v == nil; t += CheckEvery {
		s.RunUntil(t)
		c.safety()
	}
	if c.v == nil {
		c.liveness()
	}
	return c.v
}

func (c *checkRun) fail(inv, format string, a ...any) {
	if c.v == nil {
		c.v = &Violation{Invariant: inv, At: c.s.Now(), Detail: fmt.Sprintf(format, a...)}
	}
}

func (c *checkRun) onPacket(now time.Duration, to int, p *swim.Packet) {
	if len(c.recorded) < 4096 {
		cp := *p
		cp.Updates = slices.Clone(p.Updates)
		c.recorded = append(c.recorded, recorded{to: to, pkt: cp})
	}
	if now < c.dupUntil[to] && c.r.Float64() < c.dupP[to] {
		cp := *p
		cp.Updates = slices.Clone(p.Updates)
		c.s.Inject(to, cp, time.Duration(c.r.Int64N(int64(50*time.Millisecond))))
	}
}

func (c *checkRun) apply(st Step) {
	s := c.s
	now := s.Now()
	switch st.Fault {
	case FaultLoss:
		c.loss = st.P
		s.At(now+st.D, func() { c.loss = 0 })
	case FaultDelay:
		c.delayHi = max(st.D, 500*time.Microsecond)
		s.At(now+10*time.Second, func() { c.delayHi = 1500 * time.Microsecond })
	case FaultDuplicate:
		c.dupUntil[st.B], c.dupP[st.B] = min(now+10*time.Second, FaultTime), st.P
	case FaultPartition:
		g := make([]int, c.sc.N)
		for i := st.A; i < c.sc.N; i++ {
			g[i] = 1
		}
		_ = s.Partition(g)
		s.At(min(now+st.D, FaultTime), s.Heal)
	case FaultPause:
		s.Pause(st.A, min(st.D, FaultTime-now))
	case FaultCrash:
		if !s.Crashed(st.A) {
			s.Crash(st.A)
		}
	case FaultRestart:
		if !s.Crashed(st.A) || st.A == st.B || s.Crashed(st.B) {
			return
		}
		inc := swim.Incarnation(0)
		if st.Persist {
			inc = s.Member(st.A).Incarnation().Next()
		}
		_ = s.RestartAt(st.A, st.B, inc)
	case FaultReplay:
		if len(c.recorded) > 0 {
			rp := c.recorded[st.K%len(c.recorded)]
			s.Inject(rp.to, rp.pkt, 0)
		}
	case FaultForge:
		c.forge(st)
	case FaultForgeChain:
		h := c.held(st.A, st.B)
		for _, f := range []Step{
			{A: st.A, B: st.B, Kind: swim.UpdateAlive, Inc: h + swim.MaxIncarnationJump, K: st.K},
			{A: st.A, B: st.B, Kind: swim.UpdateAlive, Inc: h + 2*swim.MaxIncarnationJump, K: st.K},
			{A: st.A, B: st.B, Kind: swim.UpdateSuspect, Inc: h + 2*swim.MaxIncarnationJump},
		} {
			c.forge(f)
		}
	case FaultProbeBlock:
		c.blocked[st.A] = min(now+st.D, FaultTime)
	case FaultFlood:
		from := s.Node((st.B + 1) % c.sc.N)
		var ups []swim.Update
		for k := range st.K {
			id := swim.ID(fmt.Sprintf("flood%d.%d", st.At, k))
			c.fakes[id] = true
			u := swim.Update{Kind: swim.UpdateAlive, Node: swim.Node{ID: id, Addr: string(id)}, From: id}
			u.Proof = swim.Sign(forgerKey, u) // the forger's own key: new IDs are its to claim
			ups = append(ups, u)
		}
		s.Inject(st.B, swim.Packet{Kind: swim.MsgGossip, From: from, To: s.Node(st.B), Updates: ups}, 0)
	}
}

// forge sends member B an update written by a compromised key holder,
// relayed by another member.
func (c *checkRun) forge(st Step) {
	s := c.s
	var about swim.Node
	if st.A < 0 {
		id := swim.ID(fmt.Sprintf("fake%d", -st.A))
		about = swim.Node{ID: id, Addr: string(id)}
		c.fakes[id] = true
	} else {
		about = s.Node(st.A)
	}
	inc := st.Inc
	if st.Rel {
		if ps, ok := s.Member(st.B).Member(about.ID, s.Now()); ok {
			inc += ps.Incarnation
		} else if about.ID == s.Node(st.B).ID {
			inc += s.Member(st.B).Incarnation()
		}
	}
	from := s.Node((st.B + 1) % c.sc.N)
	u := swim.Update{Kind: st.Kind, Node: about, Incarnation: inc, From: from.ID}
	if st.Kind == swim.UpdateAlive {
		u.From = about.ID
		if st.A < 0 || (st.Fault == 0 && st.K%2 == 1) {
			// A fake member's Alive, or a chain's: signed with the
			// forger's own key, which it may bind to an ID no one holds
			// (a new member) but not to one already bound.
			u.Proof = swim.Sign(forgerKey, u)
		}
	}
	s.Inject(st.B, swim.Packet{Kind: swim.MsgGossip, From: from, To: s.Node(st.B), Updates: []swim.Update{u}}, 0)
}

// held is the incarnation member b holds for member a (its own for a = b;
// 0 when unknown).
func (c *checkRun) held(a, b int) swim.Incarnation {
	s := c.s
	if a == b {
		return s.Member(b).Incarnation()
	}
	if ps, ok := s.Member(b).Member(s.Node(a).ID, s.Now()); ok {
		return ps.Incarnation
	}
	return 0
}

// forgerKey is the compromised key holder's own signing key: it can sign
// updates, but not with the key bound to another member's ID.
var forgerKey = ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))

// safety checks the monotone and memory invariants on every live view.
func (c *checkRun) safety() {
	s := c.s
	for i := range c.sc.N {
		if s.Crashed(i) {
			continue
		}
		m := s.Member(i)
		if c.gens[i] != m { // restarted: a new view
			c.gens[i], c.seen[i] = m, map[swim.ID]swim.Incarnation{}
		}
		view := m.Members(s.Now())
		if len(view) > CheckMaxMembers {
			c.fail("memory", "member %d holds %d members, more than the bound %d", i, len(view), CheckMaxMembers)
		}
		present := map[swim.ID]bool{}
		for _, ps := range view[1:] {
			present[ps.Node.ID] = true
			if prev, ok := c.seen[i][ps.Node.ID]; ok && ps.Incarnation < prev {
				c.fail("monotone", "member %d stores %s at incarnation %d after %d", i, ps.Node.ID, ps.Incarnation, prev)
			}
			c.seen[i][ps.Node.ID] = ps.Incarnation
		}
		for id := range c.seen[i] {
			if !present[id] {
				delete(c.seen[i], id) // forgotten (reaped): may come back lower
			}
		}
	}
}

// liveness checks the alive, dead and converge invariants.
func (c *checkRun) liveness() {
	s := c.s
	live := 0
	for i := range c.sc.N {
		if !s.Crashed(i) {
			live++
		}
	}
	if 2*live <= c.sc.N {
		return // no majority: nothing is promised
	}
	var ref map[swim.ID]swim.State
	refObs := -1
	for i := range c.sc.N {
		if s.Crashed(i) {
			continue
		}
		states := map[swim.ID]swim.State{}
		for _, ps := range s.Member(i).Members(s.Now()) {
			states[ps.Node.ID] = ps.State
		}
		for j := range c.sc.N {
			id := s.Node(j).ID
			st := states[id]
			switch {
			case !s.Crashed(j) && st != swim.StateAlive:
				c.fail("alive", "live member %s is %v in the view of %s", id, st, s.Node(i).ID)
			case s.Crashed(j) && st != swim.StateDead && st != swim.StateLeft && st != 0:
				c.fail("dead", "crashed member %s is %v in the view of %s", id, st, s.Node(i).ID)
			}
		}
		for id := range c.fakes {
			if st := states[id]; st == swim.StateAlive || st == swim.StateSuspect {
				c.fail("dead", "fake member %s is %v in the view of %s", id, st, s.Node(i).ID)
			}
		}
		norm := map[swim.ID]swim.State{}
		for id, st := range states {
			if st == swim.StateLeft {
				st = swim.StateDead
			}
			if st != swim.StateDead { // dead and forgotten are the same
				norm[id] = st
			}
		}
		if ref == nil {
			ref, refObs = norm, i
		} else if !mapsEqual(ref, norm) {
			c.fail("converge", "views of %s and %s differ: %v vs %v", s.Node(refObs).ID, s.Node(i).ID, ref, norm)
		}
	}
}

func mapsEqual(a, b map[swim.ID]swim.State) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Shrink returns a minimal schedule that still violates the same
// invariant: steps are removed, first in halves, then one at a time, while
// the violation remains (at most budget runs).
func (sc Schedule) Shrink(v *Violation, budget int) (Schedule, *Violation) {
	best, bv := sc, v
	try := func(cand Schedule) bool {
		if budget <= 0 {
			return false
		}
		budget--
		if w := cand.Check(); w != nil && w.Invariant == v.Invariant {
			best, bv = cand, w
			return true
		}
		return false
	}
	for chunk := len(best.Steps) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(best.Steps); {
			cand := best
			cand.Steps = slices.Concat(best.Steps[:i], best.Steps[i+chunk:])
			if !try(cand) {
				i += chunk
			}
		}
	}
	for n := best.N - 1; n >= 3; n-- { // fewer members, when no step needs them
		cand := best
		cand.N = n
		ok := true
		for _, st := range cand.Steps {
			if st.A >= n || st.B >= n {
				ok = false
			}
		}
		if !ok || !try(cand) {
			break
		}
	}
	return best, bv
}

// GoTest prints the schedule as a Go test that fails while the violation
// persists.
func (sc Schedule) GoTest(name string, v *Violation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\nfunc Test%s(t *testing.T) {\n", v.Error(), name)
	fmt.Fprintf(&b, "\tsc := sim.Schedule{Seed: %d, N: %d, Mode: swim.Mode(%d), Unsigned: %v, Steps: []sim.Step{\n", sc.Seed, sc.N, sc.Mode, sc.Unsigned)
	for _, st := range sc.Steps {
		fmt.Fprintf(&b, "\t\t{At: %d, Fault: sim.%v, A: %d, B: %d, K: %d, P: %g, D: %d, Persist: %v, Kind: %d, Inc: %d, Rel: %v},\n",
			st.At, st.Fault, st.A, st.B, st.K, st.P, st.D, st.Persist, st.Kind, st.Inc, st.Rel)
	}
	b.WriteString("\t}}\n\tif v := sc.Check(); v != nil {\n\t\tt.Fatal(v)\n\t}\n}\n")
	return b.String()
}
