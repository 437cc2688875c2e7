// Command jointail runs hashicorp/memberlist alone, with no impairment
// shim and none of the bench's code around it, to tell memberlist's own
// join behaviour from the bench's: -n members with DefaultLANConfig on
// 127.0.0.1, started one after the other in this process, each joining
// through member 0 with Join (-config local: DefaultLocalConfig, memberlist's
// settings for loopback, with a 100 ms gossip interval and 15 s push-pull
// interval, but other probe parameters than fdkit's). For each of -runs groups it prints how long
// the Join calls took in all, and how long until every member saw all -n
// (the bench's join column); when a group has not converged after -report,
// it names the members still missing someone and what they see, and waits
// up to -give-up for the rest.
//
// A member that memberlist's gossip misses learns of the joiner only at
// its next push-pull (PushPullInterval, 30 s, scaled up above 32 members),
// which is the tail of the bench's join column:
//
//	cd bench/memberlist && go run ./jointail -n 8 -runs 25
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/hashicorp/memberlist"
)

func main() {
	n := flag.Int("n", 8, "members per group")
	runs := flag.Int("runs", 20, "groups to form, one after the other")
	report := flag.Duration("report", 5*time.Second, "name the members still missing someone after this long")
	giveUp := flag.Duration("give-up", 90*time.Second, "stop waiting for a group after this long")
	every := flag.Duration("every", 0, "wait between one member's Join and the next member's start (0: back to back, as the bench starts them)")
	config := flag.String("config", "lan", "memberlist's configuration: lan (DefaultLANConfig, the bench's) or local (DefaultLocalConfig)")
	flag.Parse()
	if *n < 2 || *runs < 1 || *report <= 0 || *giveUp < *report {
		fmt.Fprintln(os.Stderr, "jointail: want -n of 2 or more, -runs of 1 or more, and 0 < -report <= -give-up")
		os.Exit(2)
	}
	defaults := map[string]func() *memberlist.Config{"lan": memberlist.DefaultLANConfig, "local": memberlist.DefaultLocalConfig}[*config]
	if defaults == nil {
		fmt.Fprintf(os.Stderr, "jointail: -config %q: want lan or local\n", *config)
		os.Exit(2)
	}
	tails := 0
	for r := range *runs {
		ms, joins, err := form(defaults, *n, r, *every)
		if err != nil {
			fmt.Fprintln(os.Stderr, "jointail:", err)
			os.Exit(1)
		}
		conv, missing := converge(ms, *n, joins.start, *report, *giveUp)
		fmt.Printf("run %2d: Join calls %.3f s in all, every member sees all %d after %.2f s\n", r, joins.calls.Seconds(), *n, conv.Seconds())
		for _, line := range missing {
			fmt.Println("   ", line)
		}
		if len(missing) > 0 {
			tails++
		}
		for _, m := range ms {
			_ = m.Shutdown()
		}
	}
	fmt.Printf("%d of %d groups took longer than %v\n", tails, *runs, *report)
}

type joinTimes struct {
	start time.Time
	calls time.Duration // the sum of the Join calls' durations
}

// form starts n members configured from defaults, every after the
// last one's Join, each after the first joining through member 0.
func form(defaults func() *memberlist.Config, n, run int, every time.Duration) ([]*memberlist.Memberlist, joinTimes, error) {
	jt := joinTimes{start: time.Now()}
	var ms []*memberlist.Memberlist
	var seed string
	for i := range n {
		if i > 1 {
			time.Sleep(every)
		}
		cfg := defaults()
		cfg.Name = fmt.Sprintf("r%d-m%02d", run, i)
		cfg.BindAddr = "127.0.0.1"
		cfg.BindPort = 0
		cfg.LogOutput = io.Discard
		m, err := memberlist.Create(cfg)
		if err != nil {
			return ms, jt, fmt.Errorf("member %d: %w", i, err)
		}
		ms = append(ms, m)
		if i == 0 {
			seed = fmt.Sprintf("127.0.0.1:%d", m.LocalNode().Port)
			continue
		}
		t := time.Now()
		if _, err := m.Join([]string{seed}); err != nil {
			return ms, jt, fmt.Errorf("member %d: join: %w", i, err)
		}
		jt.calls += time.Since(t)
	}
	return ms, jt, nil
}

// converge waits until every member sees n, and returns how long that took
// from start, with a line for each member still missing someone at report.
func converge(ms []*memberlist.Memberlist, n int, start time.Time, report, giveUp time.Duration) (time.Duration, []string) {
	var missing []string
	for {
		var short []*memberlist.Memberlist
		for _, m := range ms {
			if m.NumMembers() != n {
				short = append(short, m)
			}
		}
		el := time.Since(start)
		if len(short) == 0 || el > giveUp {
			return el, missing
		}
		if el > report && missing == nil {
			for _, m := range short {
				var names []string
				for _, x := range m.Members() {
					names = append(names, x.Name)
				}
				slices.Sort(names)
				missing = append(missing, fmt.Sprintf("at %.1f s %s sees %d: %v", el.Seconds(), m.LocalNode().Name, len(names), names))
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
