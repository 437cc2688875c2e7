// Command memberlist-bench runs fdkit's SWIM agent and hashicorp/memberlist
// side by side on loopback, N members each in one process, through the same
// user-space impairment (see Impair), in the same scenarios, and prints one
// comparison table:
//
//	steady  nothing happens for the window
//	kill    one member dies (black-holed) at the start of the window
//	pause   one member (-pausers members) is paused (SIGSTOP-like) for -pause
//	        every -pause-every; several start their cycles spread evenly over
//	        -pause-every, as in the Lifeguard paper's interval experiment
//	lossy   one member loses -loss of its datagrams in each direction
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
// -sequential runs them one after the other in this process instead.
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
	child      string
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
	flag.IntVar(&o.runs, "runs", 3, "runs per scenario and library (different seeds and victims); the table sums FP and averages times and rates")
	flag.StringVar(&libs, "libs", "fdkit,fdkit-lifeguard,memberlist", "libraries: fdkit (detector mode), fdkit-lifeguard, fdkit-swim, memberlist, memberlist-piggyback (its gossip loop off)")
	flag.StringVar(&scen, "scenarios", "steady,kill,pause,lossy", "scenarios to run")
	flag.DurationVar(&o.params.ProbeInterval, "probe-interval", time.Second, "protocol period of both libraries")
	flag.DurationVar(&o.params.ProbeTimeout, "probe-timeout", 500*time.Millisecond, "direct probe timeout of both libraries")
	flag.DurationVar(&o.settle, "settle", 2*time.Second, "wait after every member sees all N, before the window opens (the join announcements of the group that just formed are still draining during it)")
	flag.DurationVar(&o.joinWait, "join-timeout", 60*time.Second, "give up a run when the group has not formed after this long")
	flag.StringVar(&key, "key", "", "hex AES key: encrypt both libraries")
	flag.BoolVar(&o.params.SingleSeed, "single-seed", false, "every member joins through member 0 only (default: through every earlier member)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of each run's measurement window to `file`, with -LIB-SCENARIO-RUN inserted before its extension (merge them with go tool pprof)")
	flag.IntVar(&o.profileHz, "cpuprofile-hz", 100, "samples per second of CPU time in -cpuprofile (above 100 the runtime prints a harmless warning about the rate)")
	flag.BoolVar(&o.sequential, "sequential", false, "run the libraries one after the other in this process (before 2026-12-02), rather than each run's libraries at the same time, each in its own process")
	flag.StringVar(&o.child, "child", "", "internal: run one `library/scenario/run` as a child process of a concurrent run")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "memberlist-bench: unexpected argument %q: every setting is a flag (for a scenario, -scenarios %s; -h lists them)\n", flag.Arg(0), flag.Arg(0))
		os.Exit(2)
	}
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "memberlist-bench:", err)
		os.Exit(2)
	}
	o.libs = strings.Split(libs, ",")
	o.scenarios = strings.Split(scen, ",")
	if key != "" {
		k, err := wire.ParseKey(key)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		o.params.Key = k
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
// negative -pause, a -loss outside 0 to 1.
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

// Result is one row of the table.
type Result struct {
	Lib, Scenario string
	Converge      time.Duration
	FP, FPMinus   int
	First, Full   time.Duration // -1: not detected / not by everyone
	Detected      int           // live members that declared the killed one dead (aggregate: runs with full detection)
	Runs          int
	// Spread holds, after aggregate, the smallest and largest per-run
	// values of full dissemination, bytes and CPU.
	Spread          *spread
	MsgRate, ByteRt float64 // per member per second
	// CPU is the process's CPU time (user + system) during the window, in
	// milliseconds per member per second: only one library's members run
	// at a time, so it is theirs (plus the shim's, the same for both).
	CPU float64
	// CPUDetail splits one run's CPU (not aggregated): user and system
	// time, the runtime's estimate of its garbage collector's share, and
	// the GC cycles and goroutines of the window.
	CPUDetail cpuDetail
}

func run(o options) error {
	fmt.Printf("N=%d window=%v probe-interval=%v probe-timeout=%v pause=%v every %v loss=%.0f%% seed=%d encrypted=%v single-seed=%v\n\n",
		o.n, o.window, o.params.ProbeInterval, o.params.ProbeTimeout, o.pause, o.pauseEvery, 100*o.loss, o.seed, o.params.Key != nil, o.params.SingleSeed)
	clusters := make([]Cluster, len(o.libs))
	for i, lib := range o.libs {
		c, err := cluster(lib, o.params)
		if err != nil {
			return err
		}
		clusters[i] = c
	}
	var rows []Result
	for _, sc := range o.scenarios {
		// Runs interleave the libraries (run 0 of each, then run 1 of
		// each...), so that a change in the machine's load during the
		// scenario falls on all of them alike.
		rs := make([][]Result, len(clusters))
		for i := 0; i < o.runs; i++ {
			if !o.sequential {
				r, err := runConcurrent(o, sc, i)
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
	printTable(rows, o)
	return nil
}

// aggregate sums false positives and averages the rest over runs; a
// detection time is averaged over the runs that have one, and Detected
// counts the runs in which every live member detected the kill.
func aggregate(rs []Result) Result {
	a := Result{Lib: rs[0].Lib, Scenario: rs[0].Scenario, Runs: len(rs)}
	var first, full []time.Duration
	for _, r := range rs {
		a.Converge += r.Converge / time.Duration(len(rs))
		a.FP += r.FP
		a.FPMinus += r.FPMinus
		a.MsgRate += r.MsgRate / float64(len(rs))
		a.ByteRt += r.ByteRt / float64(len(rs))
		a.CPU += r.CPU / float64(len(rs))
		if r.First >= 0 {
			first = append(first, r.First)
		}
		if r.Full >= 0 {
			full = append(full, r.Full)
			a.Detected++
		}
	}
	a.First, a.Full = mean(first), mean(full)
	sp := &spread{full: [2]time.Duration{-1, -1}}
	for i, r := range rs {
		if i == 0 {
			sp.bytes, sp.cpu = [2]float64{r.ByteRt, r.ByteRt}, [2]float64{r.CPU, r.CPU}
		}
		sp.bytes = [2]float64{min(sp.bytes[0], r.ByteRt), max(sp.bytes[1], r.ByteRt)}
		sp.cpu = [2]float64{min(sp.cpu[0], r.CPU), max(sp.cpu[1], r.CPU)}
	}
	for i, d := range full {
		if i == 0 {
			sp.full = [2]time.Duration{d, d}
		}
		sp.full = [2]time.Duration{min(sp.full[0], d), max(sp.full[1], d)}
	}
	a.Spread = sp
	return a
}

// spread is the range of per-run values behind an aggregated row.
type spread struct {
	full       [2]time.Duration // -1 when no run had full dissemination
	bytes, cpu [2]float64
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return -1
	}
	var s time.Duration
	for _, d := range ds {
		s += d
	}
	return s / time.Duration(len(ds))
}

func runOne(c Cluster, sc string, o options, run int) (Result, error) {
	if !slices.Contains([]string{"steady", "kill", "pause", "lossy"}, sc) {
		return Result{}, fmt.Errorf("unknown scenario %q", sc)
	}
	rec := &Recorder{}
	t0 := time.Now()
	seed := o.seed + uint64(run)*1000
	nodes, err := c.Start(o.n, rec, seed)
	defer func() {
		for _, n := range nodes {
			n.Stop()
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
	isImpaired := func(name string) bool { return slices.Contains(names, name) }
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
	var killAt time.Time
	switch sc {
	case "steady":
		time.Sleep(o.window)
	case "kill":
		killAt = time.Now()
		victim.Impair().Kill()
		// Stop early once every live member has declared the victim dead.
		for time.Since(wStart) < o.window {
			time.Sleep(100 * time.Millisecond)
			seen := map[string]bool{}
			for _, e := range rec.events() {
				if e.subject == victim.Name() && e.observer != victim.Name() && !e.at.Before(killAt) {
					seen[e.observer] = true
				}
			}
			if len(seen) == o.n-1 {
				time.Sleep(time.Second)
				break
			}
		}
	case "pause":
		end := wStart.Add(o.window)
		var wg sync.WaitGroup
		j := 0
		for _, n := range nodes {
			if !impaired[n] {
				continue
			}
			offset := time.Duration(j) * o.pauseEvery / time.Duration(len(impaired))
			j++
			wg.Go(func() {
				time.Sleep(offset)
				for time.Now().Before(end) {
					n.Impair().Pause(min(o.pause, time.Until(end)))
					time.Sleep(min(o.pauseEvery, time.Until(end)))
				}
			})
		}
		wg.Wait()
	case "lossy":
		victim.Impair().SetLoss(o.loss)
		time.Sleep(o.window)
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

	firstBy := map[string]time.Time{}
	for _, e := range rec.events() {
		if e.at.After(wEnd) {
			continue // shutting down
		}
		if e.at.Before(wStart) {
			res.FP++ // a false declaration during start-up counts too
			continue
		}
		if sc == "kill" && e.subject == victim.Name() {
			if e.observer != victim.Name() {
				if _, ok := firstBy[e.observer]; !ok {
					firstBy[e.observer] = e.at
				}
			}
			continue
		}
		if sc == "kill" && e.observer == victim.Name() {
			continue // a dead process declares nothing
		}
		res.FP++
		if sc == "steady" || (!isImpaired(e.observer) && !isImpaired(e.subject)) {
			res.FPMinus++
		}
		fmt.Fprintf(os.Stderr, "  %s/%s: false positive at +%.2f s: %s declared %s dead (impaired: %s)\n",
			res.Lib, sc, e.at.Sub(wStart).Seconds(), e.observer, e.subject, strings.Join(names, ","))
	}
	if sc == "kill" {
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
		if len(firstBy) == o.n-1 {
			res.Full = last.Sub(killAt)
		}
	}
	return res, nil
}

// startError is a failure to start a library's members.
type startError struct{ err error }

func (e startError) Error() string { return "start: " + e.err.Error() }
func (e startError) Unwrap() error { return e.err }

func dur(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func printTable(rows []Result, o options) {
	fmt.Println("| N | scenario | library | join (s) | FP | FP- | first detection | full dissemination | msg/member/s | bytes/member/s | CPU ms/member/s |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		first, full := "", ""
		if r.Scenario == "kill" {
			first, full = dur(r.First), dur(r.Full)
			if sp := r.Spread; sp != nil && r.Detected > 1 {
				full += fmt.Sprintf(" (%.2f–%.2f)", sp.full[0].Seconds(), sp.full[1].Seconds())
			}
			if r.Detected < r.Runs {
				full = fmt.Sprintf("%s (%d/%d runs complete)", full, r.Detected, r.Runs)
			}
		}
		bytes, cpu := fmt.Sprintf("%.0f", r.ByteRt), fmt.Sprintf("%.2f", r.CPU)
		if sp := r.Spread; sp != nil && r.Runs > 1 {
			bytes += fmt.Sprintf(" (%.0f–%.0f)", sp.bytes[0], sp.bytes[1])
			cpu += fmt.Sprintf(" (%.2f–%.2f)", sp.cpu[0], sp.cpu[1])
		}
		fmt.Printf("| %d | %s | %s | %.2f | %d | %d | %s | %s | %.2f | %s | %s |\n",
			o.n, r.Scenario, r.Lib, r.Converge.Seconds(), r.FP, r.FPMinus, first, full, r.MsgRate, bytes, cpu)
	}
}
