package main

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The table is printed once the table and the sweep are replayed
// (replayTogether), after the last progress report: a bar redrawn while
// it is printed would break into the table's lines on a terminal.
func TestProgressBeforeTable(t *testing.T) {
	path := writeFile(t, "t.fdk", multiSenderTrace(1000))
	var stdout, stderr syncBuffer
	var mu sync.Mutex
	var seen []string // stdout as each report was drawn
	p := withStdin(strings.NewReader(""))
	p.progress = func(done, total int) {
		s := stdout.String()
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
	}
	code := run(p, []string{"--out", filepath.Join(t.TempDir(), "out"), path}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stdout.String(), "| chen ")
	require.NotEmpty(t, seen)
	for i, s := range seen {
		require.Empty(t, s, "report %d of %d drawn after the tables began", i+1, len(seen))
	}
}

// replayTogether gives what replayTable and then sweepRuns give: the
// same streams kept, the same table and the same curves in every field
// (compared as their JSON, which has every field and the errors'
// messages), from memory and from spools. The trace has a stream that is
// dropped (z: one heartbeat), so every curve of it fails and is replayed
// again; entries that are not merged (a sweep entry, a preset) are
// families of their own; the linear families' rows are computed apart
// (qos.Family.Apart).
func TestReplayTogetherSameAsApart(t *testing.T) {
	path := writeFile(t, "t.fdk", multiSenderTrace(300))
	for _, tc := range []struct {
		mem  int
		args []string
	}{
		{defaultMemHeartbeats, nil},
		{100, nil},
		{defaultMemHeartbeats, []string{"-d", "chen,bertier,phi-akka,fixed(timeout=250ms),chen alpha=1ms..1s", "--sweep"}},
		{defaultMemHeartbeats, []string{"--range", "chen=200ms:400ms", "--points", "3"}},
	} {
		args := append([]string{"--out", filepath.Join(t.TempDir(), "out"), "--no-progress"}, tc.args...)
		o, files, err := parseFlags(append(args, path), io.Discard)
		require.NoError(t, err)
		o.process = withMem(tc.mem)
		res, err := openResources(o, files, io.Discard)
		require.NoError(t, err)
		defer res.close()
		cfg := replayConfig(o)
		all, err := tableRuns(o, res.inputs, io.Discard)
		require.NoError(t, err)

		var warnApart, warnTogether bytes.Buffer
		runs, table, err := replayTable(o, all, cfg, &warnApart)
		require.NoError(t, err)
		sw, err := sweepRuns(o, runs, cfg, func(int, int) {}, io.Discard)
		require.NoError(t, err)

		plan, _, err := planSweep(o, all)
		require.NoError(t, err)
		pt := planTogether(o, all, plan)
		runs2, table2, sw2, err := replayTogether(o, all, pt, cfg, func(int, int) {}, &warnTogether)
		require.NoError(t, err)

		require.Contains(t, warnApart.String(), "skipped", tc.args)
		require.Equal(t, warnApart.String(), warnTogether.String(), tc.args)
		require.Equal(t, len(runs), len(runs2))
		for i := range runs {
			require.Same(t, runs[i].in, runs2[i].in)
		}
		require.Equal(t, jsonOf(t, table), jsonOf(t, table2), tc.args)
		require.Equal(t, jsonOf(t, sw.curves), jsonOf(t, sw2.curves), tc.args)
		require.Equal(t, len(sw.fams), len(sw2.fams))
		for i := range sw.fams {
			for j := range sw.fams[i] {
				require.Equal(t, sw.fams[i][j].Values, sw2.fams[i][j].Values, "the sweep's families keep their values")
			}
		}
		values, apart := 0, 0 // rows computed as a value of a curve, as a value apart
		for _, rows := range pt.rows {
			for _, r := range rows {
				if r.at >= 0 {
					values++
				}
				if r.apart >= 0 {
					apart++
				}
			}
		}
		require.Positive(t, values, "some rows computed as values of a curve, %v", tc.args)
		require.Positive(t, apart, "some rows computed apart, %v", tc.args)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
