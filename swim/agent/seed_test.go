package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fdkit/fdkit/swim"
)

// Agents given one Config.Seed (a service that fixes it for
// reproducibility, the same in every process) still draw different random
// sequences, so that the phases of their first probes (swim's staggered
// start) and their target orders differ; one agent's sequence stays the
// same from run to run. Were the seed alone to choose the sequence, every
// such agent would probe at the same phase of its period, and members
// started together would probe in step again.
func TestSameSeedDifferentMembers(t *testing.T) {
	draw := func(id string) [4]int64 {
		r := machineRand(7, swim.ID("m-"+id))
		var out [4]int64
		for i := range out {
			out[i] = r.Int64N(int64(time.Second))
		}
		return out
	}
	assert.NotEqual(t, draw("a"), draw("b"), "one seed, two members")
	assert.Equal(t, draw("a"), draw("a"), "one seed, one member: reproducible")
}
