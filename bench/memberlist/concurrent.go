package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Concurrent runs (the default; -sequential runs one library after the
// other). Each run starts one child process per library, with this binary's
// flags and -child library/scenario/run. A child forms its library's
// group and lets it settle, then writes "ready" on its standard output and
// waits for "go" on its standard input; once every child is ready, the
// parent sends "go" to all of them, so that their measurement windows open
// at the same moment (plus the run's phase, the same for every library)
// and run side by side. Each child then writes "result" and its Result as
// JSON, and exits.
//
// Why: the CPU column is each process's own CPU time (getrusage), so no
// library is charged for another's goroutines or garbage, and the windows
// share the machine's conditions. On the virtual machine this was measured
// on, the CPU cost of a system call and a wakeup changes by up to 6 times
// from one second to the next with nothing else running (a fixed pipe
// round trip between two threads took 35 to 211 µs of CPU, see ./syscallcost), and one
// library's runs, taken at other moments than the other's, drew those
// spikes at random: fdkit's system time ranged 0.27–1.82 ms/member/s over
// runs with the same number of system calls. Both libraries together use a
// few percent of one core, so running them side by side costs neither
// much.

// exitStart is a child's exit status when its members could not start (a
// port taken between its choice and its bind): the parent runs the whole
// run again.
const exitStart = 3

// runChild runs o.child ("library/scenario/run") and returns the process's
// exit status.
func runChild(o options) int {
	parts := strings.Split(o.child, "/")
	if len(parts) != 3 {
		fmt.Fprintf(os.Stderr, "memberlist-bench: -child %q: want library/scenario/run\n", o.child)
		return 2
	}
	run, err := strconv.Atoi(parts[2])
	if err != nil || run < 0 {
		fmt.Fprintf(os.Stderr, "memberlist-bench: -child %q: run %q is not a number of 0 or more\n", o.child, parts[2])
		return 2
	}
	c, err := cluster(parts[0], o.params)
	if err != nil {
		fmt.Fprintln(os.Stderr, "memberlist-bench:", err)
		return 2
	}
	in := bufio.NewReader(os.Stdin)
	o.barrier = func() error {
		fmt.Println("ready")
		line, err := in.ReadString('\n')
		if err != nil || strings.TrimSpace(line) != "go" {
			return fmt.Errorf("child %s: no go from the parent (%q, %v)", o.child, line, err)
		}
		return nil
	}
	r, err := runOne(c, parts[1], o, run)
	if err != nil {
		fmt.Fprintf(os.Stderr, "memberlist-bench: %s: %v\n", o.child, err)
		if errors.As(err, new(startError)) {
			return exitStart
		}
		return 1
	}
	b, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, "memberlist-bench:", err)
		return 1
	}
	fmt.Printf("result %s\n", b)
	return 0
}

// childProc is one library's child of a concurrent run.
type childProc struct {
	lib   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	ready chan struct{}
	res   chan Result
}

// runConcurrent runs run number run of scenario sc for every library at
// once, each in a child process, and returns their results in o.libs's
// order. A run whose members could not start is started again, at most
// three more times.
func runConcurrent(o options, sc string, run int) ([]Result, error) {
	for try := 0; ; try++ {
		rs, err := runChildren(o, sc, run)
		if err == nil || !errors.As(err, new(startError)) || try == 3 {
			return rs, err
		}
		fmt.Fprintf(os.Stderr, "retry %s run %d (%d): %v\n", sc, run, try+1, err)
	}
}

func runChildren(o options, sc string, run int) ([]Result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var kids []*childProc
	defer func() {
		// After a failure, the others stop too (each child's reader
		// reaps it); after success they have exited and this does nothing.
		for _, k := range kids {
			_ = k.cmd.Process.Kill()
		}
	}()
	exited := make(chan error, len(o.libs))
	for _, lib := range o.libs {
		cmd, stdin, stdout, err := startSelf(self, childArgs(lib, sc, run, os.Args[1:]))
		if err != nil {
			return nil, fmt.Errorf("start the %s child: %w", lib, err)
		}
		k := &childProc{lib: lib, cmd: cmd, stdin: stdin, ready: make(chan struct{}, 1), res: make(chan Result, 1)}
		kids = append(kids, k)
		go func() {
			exited <- k.read(stdout)
		}()
	}
	// Every child ready, or one failed first.
	for _, k := range kids {
		select {
		case <-k.ready:
		case err := <-exited:
			return nil, err
		}
	}
	for _, k := range kids {
		if _, err := io.WriteString(k.stdin, "go\n"); err != nil {
			// It exited: its own error says why better than the pipe's.
			if xerr := <-exited; xerr != nil {
				return nil, xerr
			}
			return nil, fmt.Errorf("%s child: %w", k.lib, err)
		}
	}
	for range kids {
		if err := <-exited; err != nil {
			return nil, err
		}
	}
	rs := make([]Result, len(kids))
	for i, k := range kids {
		rs[i] = <-k.res
	}
	return rs, nil
}

// startSelf starts this binary (self) with args, its standard error the
// parent's, killed with the parent where the system can, and returns its
// standard input and output.
func startSelf(self string, args []string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = childAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, stdin, stdout, nil
}

// childArgs is a child's command line: -child first, since flag parsing
// stops at the first argument that is not a flag (main refuses those, but
// a child must never run as a parent), then the parent's flags.
func childArgs(lib, sc string, run int, parent []string) []string {
	return append([]string{fmt.Sprintf("-child=%s/%s/%d", lib, sc, run)}, parent...)
}

// read follows the child's standard output until it exits, and returns
// why it failed (a startError when it could not start its members), or nil
// once it exited after its result.
func (k *childProc) read(stdout io.Reader) error {
	// fail stops and reaps a child whose output cannot be read.
	fail := func(err error) error {
		_ = k.cmd.Process.Kill()
		_ = k.cmd.Wait()
		return err
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	got := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "ready":
			k.ready <- struct{}{}
		case strings.HasPrefix(line, "result "):
			var r Result
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "result ")), &r); err != nil {
				return fail(fmt.Errorf("%s child: its result: %w", k.lib, err))
			}
			k.res <- r
			got = true
		default:
			return fail(fmt.Errorf("%s child: unexpected output %q", k.lib, line))
		}
	}
	if err := sc.Err(); err != nil {
		return fail(fmt.Errorf("%s child: its output: %w", k.lib, err))
	}
	err := k.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == exitStart:
		return startError{fmt.Errorf("%s child could not start its members", k.lib)}
	case err != nil:
		return fmt.Errorf("%s child: %w", k.lib, err)
	case !got:
		return fmt.Errorf("%s child exited without a result", k.lib)
	}
	return nil
}
