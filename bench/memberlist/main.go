// Command memberlist-bench runs fdkit's SWIM agent and hashicorp/memberlist
// side by side on loopback, N members each in one process, through the same
// user-space impairment (see Impair), in the same scenarios, and prints one
// comparison table:
//
//	steady        nothing happens for the window
//	kill-refused  one member dies at the start of the window, its host up:
//	              its datagrams are lost, a dial to it is refused
//	kill-silent   one member's process hangs, or its host is cut off
//	              behind something that accepts: its datagrams are lost, a
//	              dial to it connects and is never answered
//	kill-dropped  one member's host goes down, or a firewall drops its
//	              traffic: its datagrams are lost, a dial to it gets no
//	              answer to its SYN and times out at the dialler's deadline
//	pause         one member (-pausers members) is paused (SIGSTOP-like, or
//	              SIGSTOP itself with -procs) for -pause every -pause-every;
//	              several start their cycles spread evenly over -pause-every,
//	              as in the Lifeguard paper's interval experiment
//	lossy         one member loses -loss of its datagrams in each direction
//
// Columns: FP counts live members declared dead by anyone (events), FP- only
// those about a healthy member by a healthy member (the impaired member is
// not healthy); first and full are the time from the kill to the first
// member and to every live member declaring the dead one dead; msg/s and
// B/s are datagrams (memberlist: plus TCP streams) and bytes sent per
// member per second during the window; CPU is the CPU time of the
// library's process during the window in milliseconds per member per
// second. Each run starts every library at once, each in its own child
// process, and opens their windows together (see concurrent.go);
// -sequential runs them one after the other in this process instead, and
// -procs runs every member in an OS process of its own (see procs.go).
// Times are medians over runs, with their 90th percentiles.
//
// It is a separate module so that fdkit does not depend on memberlist:
//
//	cd bench/memberlist && go run . -n 10
package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

type options struct {
	n          int
	window     time.Duration
	pause      time.Duration
	pauseEvery time.Duration
	pausers    int
	loss       float64
	seed       uint64
	runs       int
	libs       []string
	scenarios  []string
	params     Params
	settle     time.Duration
	joinWait   time.Duration
	cpuProfile string
	profileHz  int
	sequential bool
	procs      bool
	child      string
	member     string // -member: run one member process (procs.go)
	// barrier, in a child, waits until every library's group has formed
	// and settled (concurrent runs); nil runs alone.
	barrier func() error
}

func main() {
	var o options
	var libs, scen, key string
	flag.IntVar(&o.n, "n", 10, "members per library")
	flag.DurationVar(&o.window, "window", 30*time.Second, "measurement window per scenario")
	flag.DurationVar(&o.pause, "pause", 3*time.Second, "length of each pause in the pause scenario")
	flag.DurationVar(&o.pauseEvery, "pause-every", 6*time.Second, "interval between pause starts")
	flag.IntVar(&o.pausers, "pausers", 1, "members paused in the pause scenario, their cycles offset by -pause-every/pausers (at most -n minus 1)")
	flag.Float64Var(&o.loss, "loss", 0.3, "drop probability in each direction for the lossy member")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the impairment and of fdkit's members")
	flag.IntVar(&o.runs, "runs", 3, "runs per scenario and library (different seeds and victims); the table sums FP and gives medians of times and rates, with 90th percentiles of times and ranges of rates")
	flag.StringVar(&libs, "libs", "fdkit,fdkit-lifeguard,memberlist", "libraries: fdkit (detector mode), fdkit-lifeguard, fdkit-swim, memberlist, memberlist-piggyback (its gossip loop off)")
	flag.StringVar(&scen, "scenarios", "steady,kill-refused,kill-silent,kill-dropped,pause,lossy", "scenarios to run: steady, kill-refused, kill-silent, kill-dropped, pause, lossy, join (a new member joins the formed group through member 0, in-process only)")
	flag.DurationVar(&o.params.ProbeInterval, "probe-interval", time.Second, "protocol period of both libraries")
	flag.DurationVar(&o.params.ProbeTimeout, "probe-timeout", 500*time.Millisecond, "direct probe timeout of both libraries")
	flag.DurationVar(&o.settle, "settle", 2*time.Second, "wait after every member sees all N, before the window opens (the join announcements of the group that just formed are still draining during it)")
	flag.DurationVar(&o.joinWait, "join-timeout", 60*time.Second, "give up a run when the group has not formed after this long")
	flag.StringVar(&key, "key", "", "hex AES key: encrypt both libraries")
	flag.IntVar(&o.params.NameLen, "name-len", 3, "length in bytes of every member's name, 3 to 255: m00, m01... at 3; longer names are m00- and hex digits (README.md, “Bytes and names”)")
	flag.StringVar(&o.params.NameStyle, "name-style", "hex", "names longer than 3 bytes (-name-len): hex (m00- and hex digits) or host (host names sharing their text, ip-10-0-0-7.eu-west-1.compute.internal...; -name-len 14 or more)")
	flag.BoolVar(&o.params.AllSeeds, "all-seeds", false, "every member joins through every earlier member (default: through member 0 only, as memberlist's users join through one seed)")
	flag.BoolVar(&o.procs, "procs", false, "run every member in an OS process of its own: pauses are SIGSTOP and SIGCONT, kill-refused is SIGKILL, kill-silent is SIGSTOP for good (a hung process), kill-dropped SIGSTOP with every dial to it timed out; both libraries side by side")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of each run's measurement window to `file`, with -LIB-SCENARIO-RUN inserted before its extension (merge them with go tool pprof)")
	flag.IntVar(&o.profileHz, "cpuprofile-hz", 100, "samples per second of CPU time in -cpuprofile (above 100 the runtime prints a harmless warning about the rate)")
	flag.BoolVar(&o.sequential, "sequential", false, "run the libraries one after the other in this process (before 2026-12-02), rather than each run's libraries at the same time, each in its own process")
	flag.StringVar(&o.child, "child", "", "internal: run one `library/scenario/run` as a child process of a concurrent run")
	flag.StringVar(&o.member, "member", "", "internal: run one `library/index` member as a process of a -procs run")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "memberlist-bench: unexpected argument %q: every setting is a flag (for a scenario, -scenarios %s; -h lists them)\n", flag.Arg(0), flag.Arg(0))
		os.Exit(2)
	}
	o.libs = strings.Split(libs, ",")
	o.scenarios = strings.Split(scen, ",")
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "memberlist-bench:", err)
		os.Exit(2)
	}
	if key != "" {
		k, err := wire.ParseKey(key)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		o.params.Key = k
	}
	if o.member != "" {
		os.Exit(runMember(o))
	}
	if o.child != "" {
		os.Exit(runChild(o))
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "memberlist-bench:", err)
		os.Exit(1)
	}
}

// check refuses flags a run cannot use: -n below 2 (a scenario needs a
// victim and an observer), a -probe-interval that is not positive (the
// window's phase is drawn from it), -pausers outside 1 to -n minus 1, no
// -runs or -window, a -pause-every that is not positive (each pauser's
// loop would spin for the whole window, on the CPU being measured), a
// negative -pause, a -loss outside 0 to 1, a -name-len outside 3 to
// MaxNameLen, an unknown scenario.
func (o options) check() error {
	switch {
	case o.n < 2:
		return fmt.Errorf("-n %d: want at least 2 members", o.n)
	case o.params.ProbeInterval <= 0:
		return fmt.Errorf("-probe-interval %v: want a positive duration", o.params.ProbeInterval)
	case o.pausers < 1 || o.pausers > o.n-1:
		return fmt.Errorf("-pausers %d: want 1 to -n minus 1 (%d)", o.pausers, o.n-1)
	case o.runs < 1:
		return fmt.Errorf("-runs %d: want at least 1", o.runs)
	case o.window <= 0:
		return fmt.Errorf("-window %v: want a positive duration", o.window)
	case o.pauseEvery <= 0:
		return fmt.Errorf("-pause-every %v: want a positive duration", o.pauseEvery)
	case o.pause < 0:
		return fmt.Errorf("-pause %v: want a duration of 0 or more", o.pause)
	case !(o.loss >= 0 && o.loss <= 1):
		return fmt.Errorf("-loss %v: want a probability from 0 to 1", o.loss)
	case o.params.NameLen < 3 || o.params.NameLen > MaxNameLen:
		return fmt.Errorf("-name-len %d: want 3 to %d bytes", o.params.NameLen, MaxNameLen)
	case o.params.NameStyle != "hex" && o.params.NameStyle != "host":
		return fmt.Errorf("-name-style %q: want hex or host", o.params.NameStyle)
	case o.params.NameStyle == "host" && o.params.NameLen < 14:
		return fmt.Errorf("-name-style host: want -name-len 14 or more (got %d), so that every name holds its member's number", o.params.NameLen)
	}
	for _, sc := range o.scenarios {
		if !slices.Contains(scenarios, sc) {
			return fmt.Errorf("-scenarios: unknown scenario %q: want %s (kill is kill-refused, kill-silent or kill-dropped)", sc, strings.Join(scenarios, ", "))
		}
		if sc == "join" && o.procs {
			return errors.New("-scenarios join: runs in-process only, not with -procs")
		}
	}
	return nil
}

func cluster(lib string, p Params) (Cluster, error) {
	switch lib {
	case "fdkit":
		return fdCluster{p: p, mode: swim.ModeDetector, name: lib}, nil
	case "fdkit-lifeguard":
		return fdCluster{p: p, mode: swim.ModeLifeguard, name: lib}, nil
	case "fdkit-swim":
		return fdCluster{p: p, mode: swim.ModeSWIM, name: lib}, nil
	case "memberlist":
		return mlCluster{cfg: p}, nil
	case "memberlist-piggyback":
		return mlCluster{cfg: p, piggybackOnly: true}, nil
	}
	return nil, fmt.Errorf("unknown library %q", lib)
}

// Result is one run of one library in one scenario.
type Result struct {
	Lib, Scenario string
	Converge      time.Duration
	// JoinBytes is what the members sent, datagrams and streams, from
	// the first one's start until every member saw all N, per member.
	JoinBytes   float64
	FP, FPMinus int
	// FPMembers is how many distinct live members were declared dead by
	// anyone in the run: an episode seen by every observer counts once
	// here, N − 1 times in FP.
	FPMembers       int
	First, Full     time.Duration // -1: not detected / not by everyone
	Detected        int           // live members that declared the killed one dead
	MsgRate, ByteRt float64       // per member per second
	// CPU is the process's CPU time (user + system) during the window, in
	// milliseconds per member per second: its members' and the shim's
	// (the same code for both libraries).
	CPU float64
	// CPUDetail splits one run's CPU (not aggregated): user and system
	// time, the runtime's estimate of its garbage collector's share, and
	// the GC cycles and goroutines of the window.
	CPUDetail cpuDetail
}

func run(o options) error {
	fmt.Printf("N=%d window=%v probe-interval=%v probe-timeout=%v pause=%v every %v loss=%.0f%% seed=%d encrypted=%v all-seeds=%v procs=%v name-len=%d name-style=%s\n\n",
		o.n, o.window, o.params.ProbeInterval, o.params.ProbeTimeout, o.pause, o.pauseEvery, 100*o.loss, o.seed, o.params.Key != nil, o.params.AllSeeds, o.procs, o.params.NameLen, o.params.NameStyle)
	clusters := make([]Cluster, len(o.libs))
	for i, lib := range o.libs {
		c, err := cluster(lib, o.params)
		if err != nil {
			return err
		}
		clusters[i] = c
	}
	var rows []Row
	for _, sc := range o.scenarios {
		// Runs interleave the libraries (run 0 of each, then run 1 of
		// each...), so that a change in the machine's load during the
		// scenario falls on all of them alike.
		rs := make([][]Result, len(clusters))
		for i := 0; i < o.runs; i++ {
			if o.procs || !o.sequential {
				var r []Result
				var err error
				if o.procs {
					r, err = runProcs(o, clusters, sc, i)
				} else {
					r, err = runConcurrent(o, sc, i)
				}
				if err != nil {
					return err
				}
				for j := range clusters {
					fmt.Fprintf(os.Stderr, "done %s/%s run %d: %+v\n", o.libs[j], sc, i, r[j])
					rs[j] = append(rs[j], r[j])
				}
				continue
			}
			for j, c := range clusters {
				r, err := runOne(c, sc, o, i)
				for try := 1; try < 4 && errors.As(err, new(startError)); try++ {
					// A port taken between its choice and its bind (other
					// processes on the machine): start the run again.
					fmt.Fprintf(os.Stderr, "retry %s/%s run %d (%d): %v\n", c.Library(), sc, i, try, err)
					r, err = runOne(c, sc, o, i)
				}
				if err != nil {
					return fmt.Errorf("%s/%s run %d: %w", c.Library(), sc, i, err)
				}
				fmt.Fprintf(os.Stderr, "done %s/%s run %d: %+v\n", c.Library(), sc, i, r)
				rs[j] = append(rs[j], r)
			}
		}
		for j := range clusters {
			rows = append(rows, aggregate(rs[j]))
		}
	}
	printTable(os.Stdout, rows, o)
	printWins(os.Stdout, rows, o)
	return nil
}

// scenarioActs are what a scenario does to a run's members: kill the
// victim as kill scenario sc says, pause impaired member k (of pauses) for d
// and return at once, set the victim's datagram loss, start a new member.
type scenarioActs struct {
	kill   func(sc string)
	pauses int
	pause  func(k int, d time.Duration)
	lose   func(p float64) error
	// join starts a new member into the formed group (joinFormed) and
	// returns once every member sees it or at end.
	join func(end time.Time) error
}

// act plays scenario sc from wStart, the window's start, to the window's
// end (a kill: until every live member has declared the victim dead, see
// waitDeclared), and returns the kill's instant.
func act(sc string, o options, rec *Recorder, victim string, wStart time.Time, a scenarioActs) (killAt time.Time, err error) {
	end := wStart.Add(o.window)
	switch sc {
	case "steady":
		time.Sleep(o.window)
	case "kill-refused", "kill-silent", "kill-dropped":
		killAt = time.Now()
		a.kill(sc)
		waitDeclared(rec, victim, o.n, killAt, end)
	case "pause":
		pauseCycles(o, a.pauses, end, a.pause)
	case "lossy":
		if err := a.lose(o.loss); err != nil {
			return killAt, err
		}
		time.Sleep(o.window)
	case "join":
		if err := a.join(end); err != nil {
			return killAt, err
		}
		time.Sleep(time.Until(end))
	}
	return killAt, nil
}

// waitDeclared returns once every live member of n has declared victim
// dead since killAt (events in rec), a second later so that late
// messages are counted, or at end.
func waitDeclared(rec *Recorder, victim string, n int, killAt, end time.Time) {
	for time.Now().Before(end) {
		time.Sleep(100 * time.Millisecond)
		seen := map[string]bool{}
		for _, e := range rec.events() {
			if e.subject == victim && e.observer != victim && !e.at.Before(killAt) {
				seen[e.observer] = true
			}
		}
		if len(seen) == n-1 {
			time.Sleep(time.Second)
			return
		}
	}
}

// pauseCycles pauses each of k members for -pause every -pause-every
// until end, their cycles offset evenly over -pause-every, and returns
// at end: pause(i, d) pauses member i for d and returns at once.
func pauseCycles(o options, k int, end time.Time, pause func(i int, d time.Duration)) {
	var wg sync.WaitGroup
	for i := range k {
		offset := time.Duration(i) * o.pauseEvery / time.Duration(k)
		wg.Go(func() {
			time.Sleep(offset)
			for time.Now().Before(end) {
				pause(i, min(o.pause, time.Until(end)))
				time.Sleep(min(o.pauseEvery, time.Until(end)))
			}
		})
	}
	wg.Wait()
}

// scenarios are the scenarios a run knows.
var scenarios = []string{"steady", "kill-refused", "kill-silent", "kill-dropped", "pause", "lossy", "join"}

// isKill reports whether sc kills a member.
func isKill(sc string) bool {
	return sc == "kill-refused" || sc == "kill-silent" || sc == "kill-dropped"
}

func runOne(c Cluster, sc string, o options, run int) (Result, error) {
	if !slices.Contains(scenarios, sc) {
		return Result{}, fmt.Errorf("unknown scenario %q", sc)
	}
	rec := &Recorder{}
	t0 := time.Now()
	seed := o.seed + uint64(run)*1000
	nodes, addrs, err := startGroup(c, o.n, o.params.AllSeeds, rec, seed)
	defer func() { stopAll(nodes) }()
	var joiner Node // the join scenario's new member, stopped with the others
	defer func() {
		if joiner != nil {
			joiner.Stop()
		}
	}()
	if err != nil {
		return Result{}, startError{err}
	}
	res := Result{Lib: c.Library(), Scenario: sc, First: -1, Full: -1}
	deadline := time.Now().Add(o.joinWait)
	for {
		ok := true
		for _, n := range nodes {
			if n.Alive() != o.n {
				ok = false
				break
			}
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("no full view after %v (-join-timeout)", o.joinWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res.Converge = time.Since(t0)
	var joinBytes uint64
	for _, n := range nodes {
		_, b := n.Impair().Counts()
		joinBytes += b
	}
	res.JoinBytes = float64(joinBytes) / float64(o.n)
	// The window opens at a random point of the protocol period (drawn from
	// the run's seed, the same for every library): members started together
	// probe on a grid fixed by their start, and a fixed settle would put
	// every run's kill or pause at the same phase of that grid, so that a
	// library's detection time would be one sample repeated rather than a
	// distribution.
	phase := time.Duration(rand.New(rand.NewPCG(seed, 11)).Int64N(int64(o.params.ProbeInterval)))
	time.Sleep(o.settle)
	if o.barrier != nil {
		if err := o.barrier(); err != nil {
			return res, err
		}
	}
	time.Sleep(phase)

	victim := nodes[len(nodes)-1-run%(len(nodes)-1)]
	// impaired holds the victim, and in the pause scenario the other
	// members paused (-pausers), the next ones down the list.
	impaired := map[Node]bool{victim: true}
	if sc == "join" {
		impaired = map[Node]bool{} // nobody: the joiner is not among nodes
	}
	if sc == "pause" {
		for j := 1; j < o.pausers; j++ {
			impaired[nodes[len(nodes)-1-(run+j)%(len(nodes)-1)]] = true
		}
	}
	names := make([]string, 0, len(impaired))
	for n := range impaired {
		names = append(names, n.Name())
	}
	slices.Sort(names)
	before := make([][2]uint64, len(nodes))
	for i, n := range nodes {
		m, b := n.Impair().Counts()
		before[i] = [2]uint64{m, b}
	}
	stopProfile, err := startProfile(o.cpuProfile, o.profileHz, c.Library(), sc, run)
	if err != nil {
		return res, err
	}
	cpu0, det0 := cpuTime(), readCPUDetail()
	wStart := time.Now()
	var paused []Node
	for _, n := range nodes {
		if impaired[n] {
			paused = append(paused, n)
		}
	}
	killAt, err := act(sc, o, rec, victim.Name(), wStart, scenarioActs{
		kill: func(sc string) {
			switch sc {
			case "kill-silent":
				victim.Impair().KillSilent()
			case "kill-dropped":
				victim.Impair().KillDropped()
			default:
				victim.Impair().Kill()
			}
		},
		pauses: len(paused),
		pause:  func(k int, d time.Duration) { paused[k].Impair().Pause(d) },
		lose:   func(p float64) error { victim.Impair().SetLoss(p); return nil },
		join: func(end time.Time) error {
			j, err := joinFormed(c, nodes, addrs[0], rec, seed, end)
			res.First, res.Full, joiner = j.own, j.all, j.node
			return err
		},
	})
	if err != nil {
		return res, err
	}
	wEnd := time.Now()
	elapsed := wEnd.Sub(wStart)
	res.CPU = float64((cpuTime() - cpu0).Milliseconds()) / float64(o.n) / elapsed.Seconds()
	res.CPUDetail = readCPUDetail().since(det0, o.n, elapsed)
	if err := stopProfile(); err != nil {
		return res, err
	}
	var msgs, bytes uint64
	k := 0
	for i, n := range nodes {
		if impaired[n] {
			continue
		}
		m, b := n.Impair().Counts()
		msgs += m - before[i][0]
		bytes += b - before[i][1]
		k++
	}
	res.MsgRate = float64(msgs) / float64(k) / elapsed.Seconds()
	res.ByteRt = float64(bytes) / float64(k) / elapsed.Seconds()

	score(&res, rec.events(), sc, victim.Name(), names, o.n, wStart, wEnd, killAt)
	return res, nil
}

// score fills res's false positives and, for a kill, its detection times
// from the declarations events of a run whose window ran from wStart to
// wEnd: victim is the killed or lossy member, impaired the names of the
// impaired members, killAt the kill's instant.
func score(res *Result, events []deadEvent, sc, victim string, impaired []string, n int, wStart, wEnd, killAt time.Time) {
	firstBy := map[string]time.Time{}
	wrong := map[string]bool{} // members declared dead while alive
	defer func() { res.FPMembers = len(wrong) }()
	for _, e := range events {
		if e.at.After(wEnd) {
			continue // shutting down
		}
		if e.at.Before(wStart) {
			res.FP++ // a false declaration during start-up counts too
			wrong[e.subject] = true
			continue
		}
		if isKill(sc) && e.subject == victim {
			if e.observer != victim {
				if _, ok := firstBy[e.observer]; !ok {
					firstBy[e.observer] = e.at
				}
			}
			continue
		}
		if isKill(sc) && e.observer == victim {
			continue // a dead process declares nothing
		}
		res.FP++
		wrong[e.subject] = true
		if sc == "steady" || (!slices.Contains(impaired, e.observer) && !slices.Contains(impaired, e.subject)) {
			res.FPMinus++
		}
		fmt.Fprintf(os.Stderr, "  %s/%s: false positive at +%.2f s: %s declared %s dead (impaired: %s)\n",
			res.Lib, sc, e.at.Sub(wStart).Seconds(), e.observer, e.subject, strings.Join(impaired, ","))
	}
	if isKill(sc) {
		res.Detected = len(firstBy)
		var first, last time.Time
		for _, at := range firstBy {
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if at.After(last) {
				last = at
			}
		}
		if !first.IsZero() {
			res.First = first.Sub(killAt)
		}
		if len(firstBy) == n-1 {
			res.Full = last.Sub(killAt)
		}
	}
}

// stopAll stops nodes at once and returns when all have stopped, as a
// -procs run stops its member processes: each fdkit agent keeps running
// for its LeaveTimeout once stopped, so stopping 64 in turn held every
// run at N = 64 for 6.4 s after its window. Nothing is measured then.
func stopAll(nodes []Node) {
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(n.Stop)
	}
	wg.Wait()
}

// startError is a failure to start a library's members.
type startError struct{ err error }

func (e startError) Error() string { return "start: " + e.err.Error() }
func (e startError) Unwrap() error { return e.err }
