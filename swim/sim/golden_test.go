package sim

import (
	"flag"
	"fmt"
	"hash"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// The golden test pins what the simulator and the adversarial checker
// produce for fixed seeds: every membership event, a digest of every
// delivered packet, the final views and traffic, and the experiments'
// results. A refactor of swim that keeps its behaviour leaves the files
// unchanged; a deliberate change of behaviour rewrites them with
// go test ./swim/sim -run Golden -update, in the commit that makes it.

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/*.txt from the current code")

// goldenSeeds are the seeds every golden run is played with.
var goldenSeeds = []uint64{1, 2, 3, 4, 5}

// recorder writes a run's membership events, a digest of every delivered
// packet, and the members' final views and traffic: two runs with equal
// records took the same protocol steps.
type recorder struct {
	b       strings.Builder
	h       hash.Hash64
	packets int
}

// observe installs the recorder's hooks on s, keeping a packet hook that is
// already there.
func (r *recorder) observe(s *Sim) {
	prev := s.phook
	r.h, r.packets = fnv.New64a(), 0
	s.SetPacketHook(func(now time.Duration, to int, p *swim.Packet) {
		fmt.Fprintf(r.h, "%d %d %v\n", now, to, *p)
		r.packets++
		if prev != nil {
			prev(now, to, p)
		}
	})
	s.SetEventHook(func(now time.Duration, obs int, ev swim.Event) {
		fmt.Fprintf(&r.b, "%v m%d %v %s inc=%d from=%s", now, obs, ev.Kind, ev.Node.ID, ev.Incarnation, ev.From)
		if ev.Held != (swim.Node{}) {
			fmt.Fprintf(&r.b, " held=%s@%s", ev.Held.ID, ev.Held.Addr)
		}
		if ev.Meta != "" {
			fmt.Fprintf(&r.b, " meta=%q", ev.Meta)
		}
		r.b.WriteByte('\n')
	})
}

// end appends the digest of the packets and the final state of s.
func (r *recorder) end(s *Sim) {
	fmt.Fprintf(&r.b, "packets delivered %d, digest %016x, dropped %d\n", r.packets, r.h.Sum64(), s.Dropped())
	for i := range s.N() {
		st := s.Stats(i)
		fmt.Fprintf(&r.b, "m%d crashed=%v sent=%d/%dB sync=%d recv=%d/%dB inc=%d view:", i, s.Crashed(i),
			st.SentMsgs, st.SentBytes, st.SentSync, st.RecvMsgs, st.RecvBytes, s.Member(i).Incarnation())
		for _, ps := range s.Member(i).Members(s.Now()) {
			fmt.Fprintf(&r.b, " %s=%v/%d", ps.Node.ID, ps.State, ps.Incarnation)
		}
		r.b.WriteByte('\n')
	}
}

// goldenCompare compares got with testdata/golden/name, or rewrites the
// file with -update.
func goldenCompare(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *updateGolden {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./swim/sim -run Golden -update to create it")
	if string(want) != got {
		wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
		for i := range min(len(wl), len(gl)) {
			if wl[i] != gl[i] {
				t.Fatalf("%s differs from the golden file at line %d:\nwant %s\ngot  %s\n(-update rewrites it, for a deliberate change of behaviour)", path, i+1, wl[i], gl[i])
			}
		}
		t.Fatalf("%s differs from the golden file in length: %d lines, want %d", path, len(gl), len(wl))
	}
}

// TestGoldenChecker plays the adversarial checker's random schedules for
// the golden seeds and records every run and its verdict.
func TestGoldenChecker(t *testing.T) {
	var out strings.Builder
	for seed := uint64(1); seed <= 20; seed++ {
		sc := RandomSchedule(seed)
		fmt.Fprintf(&out, "== schedule %d: N=%d mode=%v unsigned=%v\n", seed, sc.N, sc.Mode, sc.Unsigned)
		for _, st := range sc.Steps {
			fmt.Fprintf(&out, "step %+v\n", st)
		}
		var r recorder
		var s *Sim
		v := sc.checkObserved(nil, func(x *Sim) { s = x; r.observe(x) })
		r.end(s)
		out.WriteString(r.b.String())
		fmt.Fprintf(&out, "verdict: %v\n", v)
	}
	goldenCompare(t, "checker.txt", out.String())
}

// TestGoldenScript plays a scripted run in every mode for the golden seeds:
// a crash, a pause, a leave, a restart through a seed with a lower
// incarnation, a partition and a heal, under 5 % loss.
func TestGoldenScript(t *testing.T) {
	var out strings.Builder
	for _, mode := range modes {
		for _, seed := range goldenSeeds {
			fmt.Fprintf(&out, "== mode %v seed %d\n", mode, seed)
			s, err := New(Config{N: 8, Seed: seed, Member: swim.Config{Mode: mode}, StartSpread: time.Second, Loss: 0.05})
			require.NoError(t, err)
			var r recorder
			r.observe(s)
			s.At(5*time.Second, func() { s.Crash(1) })
			s.At(10*time.Second, func() { s.Pause(2, 8*time.Second) })
			s.At(20*time.Second, func() { require.NoError(t, s.Leave(3)) })
			s.At(30*time.Second, func() { require.NoError(t, s.Restart(1, 0)) })
			s.At(40*time.Second, func() { require.NoError(t, s.Partition([]int{0, 0, 0, 0, 1, 1, 1, 1})) })
			s.At(50*time.Second, s.Heal)
			s.RunUntil(90 * time.Second)
			r.end(s)
			out.WriteString(r.b.String())
		}
	}
	goldenCompare(t, "script.txt", out.String())
}

// TestGoldenExperiments runs the scenarios' experiments, shrunk, for the
// golden seeds and records their results.
func TestGoldenExperiments(t *testing.T) {
	var out strings.Builder
	for _, mode := range modes {
		mc := swim.Config{Mode: mode}
		for _, seed := range goldenSeeds {
			fmt.Fprintf(&out, "== mode %v seed %d\n", mode, seed)
			load, err := Load(8, 20, seed, mc)
			require.NoError(t, err)
			fmt.Fprintf(&out, "load %+v\n", load)
			det, err := Detection(8, 3, seed, mc)
			require.NoError(t, err)
			fmt.Fprintf(&out, "detect %+v\n", det)
			kill, err := KillOne(8, 2, seed, mc, seed%2 == 0)
			require.NoError(t, err)
			fmt.Fprintf(&out, "kill %+v\n", kill)
			pause, err := PauseOne(8, 3*time.Second, 2, seed, mc)
			require.NoError(t, err)
			fmt.Fprintf(&out, "pause %+v\n", pause)
			rs, err := RestartAfter(8, 3*time.Second, seed, mc)
			require.NoError(t, err)
			fmt.Fprintf(&out, "restart %+v\n", rs)
			part, err := PartitionHalves(8, 5*time.Second, seed, mc)
			require.NoError(t, err)
			fmt.Fprintf(&out, "partition %+v\n", part)
			iv, err := Interval(IntervalConfig{N: 8, C: 2, D: 6 * time.Second, I: 12 * time.Second, Duration: 60 * time.Second, Seed: seed, Member: mc})
			require.NoError(t, err)
			fmt.Fprintf(&out, "interval %+v\n", iv)
		}
	}
	goldenCompare(t, "experiments.txt", out.String())
}
