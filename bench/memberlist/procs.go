package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// -procs: every member in an OS process of its own, so that a pause is a
// real SIGSTOP and SIGCONT (the kernel keeps receiving the member's
// datagrams and accepting its TCP connections while none of its threads
// runs, timers included), kill-refused is SIGKILL (the kernel then refuses
// its TCP port and its UDP port answers ICMP unreachable), and kill-silent
// is SIGSTOP for good (a hung process: connections accepted, never
// answered), kill-dropped SIGSTOP with every other member's dials to it
// timed out at their deadline, as when its host is down (played in
// user space: there is no firewall on this machine to drop the SYNs). Both libraries run side by side, each run's windows opening
// together, as in concurrent runs. A member process is this binary with
// -member library/index/seed/seeds, and speaks lines on its standard
// output: "addr A" once started and joined, "view K" whenever the members
// it sees alive or suspect change, until it sees all -n, followed by
// "lacks NAME..." when it lacks at most maxLacks, "dead OBSERVER SUBJECT UNIXNANO" for
// each declaration, "counts MSGS BYTES" when asked by "counts" on its
// standard input; "loss P" sets its datagram loss, "drop ADDR" makes its
// dials to ADDR time out (kill-dropped), "quit" stops it. Its
// CPU time is read from /proc/PID/stat, so that a stopped member costs
// its parent nothing to measure.

// runMember runs o.member and returns the process's exit status.
func runMember(o options) int {
	parts := strings.SplitN(o.member, "/", 4)
	if len(parts) != 4 {
		fmt.Fprintf(os.Stderr, "memberlist-bench: -member %q: want library/index/seed/seeds\n", o.member)
		return 2
	}
	idx, err1 := strconv.Atoi(parts[1])
	seed, err2 := strconv.ParseUint(parts[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil || idx < 0 {
		fmt.Fprintf(os.Stderr, "memberlist-bench: -member %q: index and seed must be numbers of 0 or more (%v)\n", o.member, err)
		return 2
	}
	var seeds []string
	if parts[3] != "" {
		seeds = strings.Split(parts[3], ",")
	}
	c, err := cluster(parts[0], o.params)
	if err != nil {
		fmt.Fprintln(os.Stderr, "memberlist-bench:", err)
		return 2
	}
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Printf(format+"\n", args...)
		mu.Unlock()
	}
	rec := &Recorder{onDead: func(e deadEvent) { say("dead %s %s %d", e.observer, e.subject, e.at.UnixNano()) }}
	nd, addr, err := c.StartOne(idx, seeds, rec, seed)
	if err != nil {
		fmt.Fprintf(os.Stderr, "memberlist-bench: member %s: %v\n", o.member, err)
		return exitStart
	}
	say("addr %s", addr)
	done := make(chan struct{})
	go func() {
		last := -1
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			seen := nd.Seen()
			if k := len(seen); k != last {
				last = k
				say("view %d", k)
				if k == o.n {
					// The parent waits for this only: polling on would
					// cost the member CPU in the window (fdkit's Seen
					// copies its view).
					return
				}
				if l := lacking(seen, o.n, o.params); len(l) <= maxLacks {
					say("lacks %s", strings.Join(l, " "))
				}
			}
		}
	}()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch {
		case len(f) == 2 && f[0] == "loss":
			if p, err := strconv.ParseFloat(f[1], 64); err == nil && p >= 0 && p <= 1 {
				nd.Impair().SetLoss(p)
			}
		case len(f) == 2 && f[0] == "drop":
			markDropped(f[1])
		case len(f) == 1 && f[0] == "counts":
			m, b := nd.Impair().Counts()
			say("counts %d %d", m, b)
		case len(f) == 1 && f[0] == "quit":
			close(done)
			nd.Stop()
			return 0
		}
	}
	close(done) // the parent is gone
	nd.Stop()
	return 0
}

// memberProc is one member process of a -procs run.
type memberProc struct {
	name   string
	n      int // members in its group (-n)
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	addr   chan string
	view   atomic.Int64
	fullAt atomic.Int64           // when it first saw all -n, Unix nanoseconds; 0 before
	lacks  atomic.Pointer[string] // whom it last said it lacked ("lacks")
	counts chan [2]uint64
	exited chan struct{}
	mu     sync.Mutex // stdin
}

// startMemberProc starts member i of lib joined through seeds, and waits
// for its address.
func startMemberProc(o options, lib string, i int, seed uint64, seeds []string, rec *Recorder) (*memberProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	arg := fmt.Sprintf("-member=%s/%d/%d/%s", lib, i, seed, strings.Join(seeds, ","))
	cmd, stdin, stdout, err := startSelf(self, append([]string{arg}, os.Args[1:]...))
	if err != nil {
		return nil, fmt.Errorf("start member %d of %s: %w", i, lib, err)
	}
	p := &memberProc{name: o.params.memberName(i), n: o.n, cmd: cmd, stdin: stdin, addr: make(chan string, 1),
		counts: make(chan [2]uint64, 1), exited: make(chan struct{})}
	go p.read(stdout, rec)
	select {
	case a := <-p.addr:
		p.addr <- a
		return p, nil
	case <-p.exited:
		_ = cmd.Wait()
		return nil, startError{fmt.Errorf("member %d of %s exited before it started", i, lib)}
	case <-time.After(30 * time.Second):
		p.stop()
		return nil, fmt.Errorf("member %d of %s: no address after 30 s", i, lib)
	}
}

// read follows the member's output until it exits.
func (p *memberProc) read(stdout io.Reader, rec *Recorder) {
	defer close(p.exited)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "addr":
			p.addr <- f[1]
		case len(f) == 2 && f[0] == "view":
			if k, err := strconv.Atoi(f[1]); err == nil {
				p.view.Store(int64(k))
				if k == p.n {
					p.fullAt.CompareAndSwap(0, time.Now().UnixNano())
				}
			}
		case len(f) >= 2 && f[0] == "lacks":
			l := strings.Join(f[1:], " ")
			p.lacks.Store(&l)
		case len(f) == 4 && f[0] == "dead":
			if ns, err := strconv.ParseInt(f[3], 10, 64); err == nil {
				rec.add(deadEvent{at: time.Unix(0, ns), observer: f[1], subject: f[2]})
			}
		case len(f) == 3 && f[0] == "counts":
			m, err1 := strconv.ParseUint(f[1], 10, 64)
			b, err2 := strconv.ParseUint(f[2], 10, 64)
			if err1 == nil && err2 == nil {
				p.counts <- [2]uint64{m, b}
			}
		default:
			fmt.Fprintf(os.Stderr, "memberlist-bench: member %s: unexpected output %q\n", p.name, sc.Text())
		}
	}
}

func (p *memberProc) say(line string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

// askCounts returns the messages and bytes the member has sent.
func (p *memberProc) askCounts() ([2]uint64, error) {
	if err := p.say("counts"); err != nil {
		return [2]uint64{}, fmt.Errorf("member %s: %w", p.name, err)
	}
	select {
	case c := <-p.counts:
		return c, nil
	case <-time.After(5 * time.Second):
		return [2]uint64{}, fmt.Errorf("member %s: no counts after 5 s", p.name)
	}
}

func (p *memberProc) signal(s syscall.Signal) { _ = p.cmd.Process.Signal(s) }

// stop resumes the member if stopped, asks it to quit, and kills it if it
// has not exited within 3 s.
func (p *memberProc) stop() {
	p.signal(syscall.SIGCONT)
	_ = p.say("quit")
	select {
	case <-p.exited:
	case <-time.After(3 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	_ = p.cmd.Wait()
}

// runProcs runs run number run of scenario sc for every library at once,
// each member in a process of its own, and returns their results in
// clusters' order.
func runProcs(o options, clusters []Cluster, sc string, run int) ([]Result, error) {
	rs := make([]Result, len(clusters))
	errs := make([]error, len(clusters))
	var ready sync.WaitGroup
	ready.Add(len(clusters))
	start := make(chan struct{})
	go func() {
		ready.Wait()
		close(start)
	}()
	var wg sync.WaitGroup
	for j, c := range clusters {
		wg.Go(func() {
			var once sync.Once
			arrive := func() { once.Do(ready.Done) }
			defer arrive() // a failed library lets the others go on
			rs[j], errs[j] = runProcsOne(c.Library(), sc, o, run, func() { arrive(); <-start })
		})
	}
	wg.Wait()
	return rs, errors.Join(errs...)
}

// runProcsOne is one library's part of runProcs; barrier returns once
// every library's group has formed and settled.
func runProcsOne(lib, sc string, o options, run int, barrier func()) (Result, error) {
	res := Result{Lib: lib, Scenario: sc, First: -1, Full: -1}
	rec := &Recorder{}
	seed := o.seed + uint64(run)*1000
	var procs []*memberProc
	defer func() {
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Go(p.stop)
		}
		wg.Wait()
	}()
	t0 := time.Now()
	var addrs []string
	for i := 0; i < o.n; i++ {
		var seeds []string
		if i > 0 {
			seeds = addrs[:1]
			if o.params.AllSeeds {
				seeds = addrs
			}
		}
		p, err := startMemberProc(o, lib, i, seed, seeds, rec)
		if err != nil {
			return res, err
		}
		procs = append(procs, p)
		addrs = append(addrs, <-p.addr)
	}
	up := time.Since(t0)
	deadline := time.Now().Add(o.joinWait)
	for !allSee(procs, o.n) {
		if time.Now().After(deadline) {
			return res, fmt.Errorf("%s: no full view after %v (-join-timeout)", lib, o.joinWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res.Converge = time.Since(t0)
	fmt.Fprintln(os.Stderr, joinReport(lib, run, t0, up, res.Converge, procs, addrs))
	var joinBytes uint64
	for _, p := range procs {
		c, err := p.askCounts()
		if err != nil {
			return res, err
		}
		joinBytes += c[1]
	}
	res.JoinBytes = float64(joinBytes) / float64(o.n)
	phase := time.Duration(rand.New(rand.NewPCG(seed, 11)).Int64N(int64(o.params.ProbeInterval)))
	time.Sleep(o.settle)
	barrier()
	time.Sleep(phase)

	victim := procs[len(procs)-1-run%(len(procs)-1)]
	impaired := map[*memberProc]bool{victim: true}
	if sc == "pause" {
		for j := 1; j < o.pausers; j++ {
			impaired[procs[len(procs)-1-(run+j)%(len(procs)-1)]] = true
		}
	}
	var names []string
	for p := range impaired {
		names = append(names, p.name)
	}
	slices.Sort(names)
	before := map[*memberProc][2]uint64{}
	for _, p := range procs {
		if !impaired[p] {
			c, err := p.askCounts()
			if err != nil {
				return res, err
			}
			before[p] = c
		}
	}
	cpu0 := procsCPU(procs, nil)
	wStart := time.Now()
	var paused []*memberProc
	for _, p := range procs {
		if impaired[p] {
			paused = append(paused, p)
		}
	}
	killAt, err := act(sc, o, rec, victim.name, wStart, scenarioActs{
		kill: func(sc string) {
			switch sc {
			case "kill-silent":
				victim.signal(syscall.SIGSTOP) // for good: a hung process
			case "kill-dropped":
				// A host gone: nothing answers its datagrams (the
				// stopped process reads none) nor its SYNs (every other
				// member's dials to it time out, played in user space:
				// the kernel would accept them).
				victim.signal(syscall.SIGSTOP)
				for p, line := range dropOrders(procs, addrs, victim) {
					_ = p.say(line)
				}
			default:
				victim.signal(syscall.SIGKILL)
			}
		},
		pauses: len(paused),
		pause: func(k int, d time.Duration) {
			paused[k].signal(syscall.SIGSTOP)
			time.AfterFunc(d, func() { paused[k].signal(syscall.SIGCONT) })
		},
		lose: func(p float64) error { return victim.say(fmt.Sprintf("loss %v", p)) },
	})
	if err != nil {
		return res, err
	}
	wEnd := time.Now()
	elapsed := wEnd.Sub(wStart)
	res.CPU = float64(sumDiff(cpu0, procsCPU(procs, cpu0)).Milliseconds()) / float64(o.n) / elapsed.Seconds()
	var msgs, bytes uint64
	for p, b := range before {
		c, err := p.askCounts()
		if err != nil {
			return res, err
		}
		msgs += c[0] - b[0]
		bytes += c[1] - b[1]
	}
	res.MsgRate = float64(msgs) / float64(len(before)) / elapsed.Seconds()
	res.ByteRt = float64(bytes) / float64(len(before)) / elapsed.Seconds()
	score(&res, rec.events(), sc, victim.name, names, o.n, wStart, wEnd, killAt)
	return res, nil
}

// allSee reports whether every member process sees n members.
func allSee(procs []*memberProc, n int) bool {
	for _, p := range procs {
		if p.view.Load() != int64(n) {
			return false
		}
	}
	return true
}

// procsCPU returns the CPU time (user and system) each member process
// has used, from /proc; a process that is gone (killed) keeps its value
// in prev.
func procsCPU(procs []*memberProc, prev []time.Duration) []time.Duration {
	out := make([]time.Duration, len(procs))
	for i, p := range procs {
		out[i] = procCPU(p.cmd.Process.Pid)
		if out[i] == 0 && prev != nil {
			out[i] = prev[i]
		}
	}
	return out
}

// sumDiff is the sum of b's values less a's.
func sumDiff(a, b []time.Duration) time.Duration {
	var d time.Duration
	for i := range b {
		d += b[i] - a[i]
	}
	return d
}

// procCPU returns the user and system CPU time of process pid from
// /proc/PID/stat (fields 14 and 15, in clock ticks of 10 ms: Linux's
// USER_HZ on every architecture Go supports), 0 when it cannot be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+st) * 10 * time.Millisecond
}

// dropOrders returns the line that tells each member but victim that the
// victim's host went down (kill-dropped): "drop ADDR", ADDR the victim's
// address (addrs[i] is procs[i]'s), so that the member's dials to it time
// out. Before 2026-12-05 every member was told its own address, which
// turned the -procs kill-dropped rows into a second silent kill.
func dropOrders(procs []*memberProc, addrs []string, victim *memberProc) map[*memberProc]string {
	at := slices.Index(procs, victim)
	orders := make(map[*memberProc]string, len(procs))
	for _, p := range procs {
		if p != victim {
			orders[p] = "drop " + addrs[at]
		}
	}
	return orders
}
