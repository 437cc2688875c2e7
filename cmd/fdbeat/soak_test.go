//go:build experiment

package main

// The soak of issue 26: one fdbeat send at Δ = 100 ms to fdbeat recv with its
// default detectors over loopback, a stretch idle and a stretch with the
// cores oversubscribed by busy loops, then the sender killed with SIGKILL.
// Run it with scripts/fdbeat-soak.sh (about 20 minutes with the defaults).

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/require"
)

// soakEnv returns the duration in the environment variable name, or def.
func soakEnv(t *testing.T, name string, def time.Duration) time.Duration {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	require.NoError(t, err, name)
	return d
}

// TestSoak runs the soak and logs, per default detector, its suspicions of
// the unimpaired sender in each stretch and how long after the SIGKILL it
// suspected the sender; and the host lateness recv measured in each stretch.
// Environment: FDBEAT_SOAK_IDLE and FDBEAT_SOAK_LOAD (default 10m each),
// FDBEAT_SOAK_BUSY (busy loops, default 4), FDBEAT_SOAK_DIR (where the
// recv log, its table and the trace go; default a temporary directory).
func TestSoak(t *testing.T) {
	idle := soakEnv(t, "FDBEAT_SOAK_IDLE", 10*time.Minute)
	load := soakEnv(t, "FDBEAT_SOAK_LOAD", 10*time.Minute)
	busy := 4
	if s := os.Getenv("FDBEAT_SOAK_BUSY"); s != "" {
		var err error
		busy, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	dir := os.Getenv("FDBEAT_SOAK_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	child := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}

	logPath := filepath.Join(dir, "recv.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	defer logFile.Close()
	table, err := os.Create(filepath.Join(dir, "recv.out"))
	require.NoError(t, err)
	defer table.Close()
	addr := freeUDPPort(t)
	recv := fdbeatCommand("recv", "--listen", addr, "--plain", "--refresh", "1m", "--out", filepath.Join(dir, "soak.fdk.gz"), "--force")
	recv.Stdout, recv.Stderr, recv.SysProcAttr = table, logFile, child
	require.NoError(t, recv.Start())
	t.Cleanup(func() { _ = recv.Process.Kill() })
	time.Sleep(time.Second)
	send := fdbeatCommand("send", "--name", "soak", "--interval", "100ms", addr)
	send.SysProcAttr = child
	require.NoError(t, send.Start())
	t.Cleanup(func() { _ = send.Process.Kill() })
	start := time.Now()
	t.Logf("soak: recv and send started %s; idle for %v", start.UTC().Format(time.RFC3339), idle)

	time.Sleep(idle)
	loadAvgIdle := loadAvg()
	loadStart := time.Now()
	var loops []*exec.Cmd
	for range busy {
		c := exec.Command("nice", "-n", "0", "sh", "-c", "while :; do :; done")
		c.SysProcAttr = child
		require.NoError(t, c.Start())
		loops = append(loops, c)
	}
	stopLoops := func() {
		for _, c := range loops {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			_ = c.Wait()
		}
		loops = nil
	}
	t.Cleanup(stopLoops)
	t.Logf("soak: %d busy loops started %s; loaded for %v", busy, loadStart.UTC().Format(time.RFC3339), load)
	time.Sleep(load)
	loadAvgLoaded := loadAvg()
	kill := time.Now()
	require.NoError(t, send.Process.Signal(syscall.SIGKILL))
	_ = send.Wait()
	time.Sleep(10 * time.Second) // longer than the 3 s timeout plus the 5 s lateness cap
	stopLoops()
	require.NoError(t, recv.Process.Signal(syscall.SIGINT))
	require.NoError(t, waitExit(t, recv, 30*time.Second))
	t.Logf("soak: sender killed %s; load average (1, 5, 15 min) %s at the end of the idle stretch, %s at the end of the loaded one", kill.UTC().Format(time.RFC3339Nano), loadAvgIdle, loadAvgLoaded)

	s := summariseSoak(t, logPath, filepath.Join(dir, "soak.fdk.gz"), loadStart, kill)
	out, err := os.ReadFile(filepath.Join(dir, "recv.out"))
	require.NoError(t, err)
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "received") || strings.HasPrefix(l, "refused") || strings.HasPrefix(l, "host lateness") {
			s += l + "\n"
		}
	}
	t.Log("\n" + s)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(s), 0o644))
}

var (
	soakAttr  = regexp.MustCompile(`(\S+?)=("(?:[^"\\]|\\.)*"|\S+)`)
	soakKinds = []string{"timeout-300ms", "timeout-1s", "timeout-3s", "phi-8", "phi-12"}
)

// summariseSoak reads recv's log: suspicions per detector before loadStart
// (idle), from loadStart to kill (loaded), and the first after kill (the
// detection, as the instant it was found and the freshness point it took
// effect at, both from the kill); the largest lateness margin of each
// minute ("host lateness" lines, each covering the minute before it; the
// first loaded minute may hold idle seconds), each source's largest
// lateness up to the last idle minute and to the end, and the late
// heartbeats excused. For each false suspicion it also gives, from the
// trace, the heartbeat that ended it: how long after the one before it was
// sent (a stall of the sender) and arrived, and its transit time (a delay
// after sending: the network or the receiving process).
func summariseSoak(t *testing.T, path, tracePath string, loadStart, kill time.Time) string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var origin time.Time
	idleS, loadS, warm := map[string]int{}, map[string]int{}, map[string]int{}
	detFound, detAt := map[string]time.Duration{}, map[string]time.Duration{}
	var idleMargins, loadMargins []string
	var idleLate, endLate string
	pauses := 0
	var falses []falseSuspicion
	sources := []string{"margin", "timer_max", "gc-pause_max", "other-pause_max", "scheduling_max", "timer_ticks", "excused"}
	lateFields := func(kv map[string]string) string {
		var parts []string
		for _, k := range sources {
			parts = append(parts, k+"="+kv[k])
		}
		return strings.Join(parts, " ")
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		kv := map[string]string{}
		for _, m := range soakAttr.FindAllStringSubmatch(line, -1) {
			if _, dup := kv[m[1]]; !dup {
				kv[m[1]] = strings.Trim(m[2], `"`)
			}
		}
		mono := func(key string) time.Time {
			d, err := time.ParseDuration(kv[key])
			require.NoError(t, err, line)
			return origin.Add(d)
		}
		switch kv["msg"] {
		case "receiving heartbeats":
			ns, err := strconv.ParseInt(kv["clock_origin_unix_ns"], 10, 64)
			require.NoError(t, err, line)
			origin = time.Unix(0, ns)
		case "transition":
			if kv["new"] != "suspected" || kv["peer"] != "soak" {
				continue
			}
			det, found, at := kv["detector"], mono("found"), mono("at")
			switch {
			case kv["warming_up"] == "true":
				warm[det]++
			case found.Before(loadStart):
				idleS[det]++
				falses = append(falses, falseSuspicion{det, "idle", at, found})
			case found.Before(kill):
				loadS[det]++
				falses = append(falses, falseSuspicion{det, "loaded", at, found})
			default:
				if _, ok := detFound[det]; !ok {
					detFound[det], detAt[det] = found.Sub(kill), at.Sub(kill)
				}
			}
		case "host lateness":
			at, err := time.Parse(time.RFC3339Nano, kv["time"])
			require.NoError(t, err, line)
			switch {
			case !at.After(loadStart):
				idleMargins = append(idleMargins, kv["margin_max"])
				idleLate = lateFields(kv)
			case !at.After(kill):
				loadMargins = append(loadMargins, kv["margin_max"])
			}
		case "host lateness at the end":
			endLate = lateFields(kv)
		case "the receiver itself was paused; convicting nobody during the grace period":
			pauses++
		}
	}
	require.NoError(t, sc.Err())
	var b strings.Builder
	fmt.Fprintf(&b, "| detector | suspicions idle | suspicions loaded | kill: suspicion found after | kill: its τ after |\n|---|---|---|---|---|\n")
	for _, det := range soakKinds {
		found, at := "not detected", "-"
		if d, ok := detFound[det]; ok {
			found, at = d.Round(time.Millisecond).String(), detAt[det].Round(time.Millisecond).String()
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", det, idleS[det], loadS[det], found, at)
	}
	fmt.Fprintf(&b, "suspicions while warming up: %v; local pauses logged: %d\n", warm, pauses)
	fmt.Fprintf(&b, "largest lateness margin per minute, idle: %s\n", strings.Join(idleMargins, " "))
	fmt.Fprintf(&b, "largest lateness margin per minute, loaded: %s\n", strings.Join(loadMargins, " "))
	fmt.Fprintf(&b, "host lateness up to the last idle minute: %s\n", idleLate)
	fmt.Fprintf(&b, "host lateness at the end: %s\n", endLate)
	if len(falses) > 0 {
		recs, err := trace.ReadFile(tracePath, trace.ReaderConfig{})
		require.NoError(t, err)
		for _, fs := range falses {
			at := time.Duration(fs.at.UnixNano())
			i, _ := slices.BinarySearchFunc(recs, at, func(r trace.Record, x time.Duration) int { return cmp.Compare(r.Arrival, x) })
			if i == 0 || i >= len(recs) {
				continue
			}
			p, r := recs[i-1], recs[i]
			fmt.Fprintf(&b, "false suspicion (%s, %s): τ+%v when found; ended by seq %d, sent %v after seq %d, arrived %v after it, transit %v\n",
				fs.det, fs.stretch, fs.found.Sub(fs.at).Round(time.Millisecond), r.Seq, (r.Sent - p.Sent).Round(100*time.Microsecond), p.Seq,
				(r.Arrival - p.Arrival).Round(100*time.Microsecond), (r.Arrival - r.Sent).Round(10*time.Microsecond))
		}
	}
	return b.String()
}

// falseSuspicion is a suspicion of the unimpaired sender: its detector, its
// stretch (idle or loaded), its freshness point and when it was found.
type falseSuspicion struct {
	det, stretch string
	at, found    time.Time
}
