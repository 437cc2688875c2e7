package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newInput's one read gives the clock rule's answer
// (qos.ClocksLookSynchronized, which --clock auto uses) and, with a
// report, the report's Summary: on a trace whose delays are all 10 ms
// (synchronized) and on one where a heartbeat arrives before it was sent
// (not), in memory and spooled.
func TestInputReadOnceFacts(t *testing.T) {
	sync := regularTrace(300)
	early := strings.Replace(sync, "p 7 700000000 710000000", "p 7 700000000 690000000", 1)
	require.NotEqual(t, sync, early)
	for _, mem := range []int{defaultMemHeartbeats, 100} {
		for name, want := range map[string]bool{"sync": true, "early": false} {
			text := map[string]string{"sync": sync, "early": early}[name]
			path := writeFile(t, name+".fdk", text)
			for _, report := range []bool{false, true} {
				args := []string{path}
				if report {
					args = append(args, "--out", filepath.Join(t.TempDir(), "o"))
				}
				o, files, err := parseFlags(args, io.Discard)
				require.NoError(t, err)
				o.process = withMem(mem)
				ins, err := loadInputs(o, files, io.Discard)
				require.NoError(t, err)
				require.Len(t, ins, 1)
				in := ins[0]
				var hbs []detector.Heartbeat
				seq, done := in.source().Pass()
				for hb := range seq {
					hbs = append(hbs, hb)
				}
				require.NoError(t, done())
				require.Len(t, hbs, 300)
				assert.Equal(t, want, qos.ClocksLookSynchronized(hbs), name)
				assert.Equal(t, want, in.clocksSync, "%s, memory bound %d", name, mem)
				assert.Equal(t, report, in.summary != nil, "a Summary only with a report")
				closeInputs(ins)
			}
		}
	}
}
