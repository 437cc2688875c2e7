package phi_test

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Found by detectortest: with T_last near math.MinInt64, now − T_last
// overflowed for now more than math.MaxInt64 later, so the level went
// negative and decreased in now; an interval that wide entered the window as
// a negative duration.
func TestElapsedWiderThanMaxInt64(t *testing.T) {
	n, err := phi.NewNormal(phi.NormalConfig{})
	require.NoError(t, err)
	a, err := phi.NewAkka(phi.AkkaConfig{})
	require.NoError(t, err)
	c, err := phi.NewCassandra(phi.CassandraConfig{MaxInterval: -1})
	require.NoError(t, err)
	for name, d := range map[string]detector.Accrual{"normal": n, "akka": a, "cassandra": c} {
		d.Observe(detector.Heartbeat{Seq: 3, HasSeq: true, Arrival: -9223372036751763041})
		prev := -1.0
		for _, now := range []time.Duration{0, 271825702995655463, math.MaxInt64 / 2, math.MaxInt64} {
			l := d.Level(now)
			assert.GreaterOrEqual(t, l, prev, "%s: Level(%d)", name, now)
			prev = l
		}
	}
	c.Observe(detector.Heartbeat{Seq: 4, HasSeq: true, Arrival: math.MaxInt64 - 1})
	assert.Greater(t, c.Mean(), time.Duration(0), "the interval saturates instead of wrapping")
}
