package swim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The pings of a stale node under a held ID (c at its old address, after
// a restart reclaimed c at c2) are no heartbeats of the holder: when c2
// crashes, the others declare it dead, in every mode, and c, hearing
// that declaration of its ID at c2, refutes it and takes its ID back.
func TestStaleNodeDoesNotKeepHolderAlive(t *testing.T) {
	for _, mode := range []Mode{ModeSWIM, ModeLifeguard, ModeDetector} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newTest(t, "s", mode, nil, "o", "c")
			o := newTest(t, "o", mode, nil, "s", "c")
			c := newTest(t, "c", mode, nil, "s", "o") // paused from the start
			killC(t, time.Second, s, o)
			c2, err := New(Config{Self: Node{ID: "c", Addr: "c2:7946"}, Mode: mode}, rand.New(rand.NewPCG(3, 4)))
			require.NoError(t, err)
			require.NoError(t, c2.Join(2*time.Second, []string{"o:7946"}))
			runNet(t, 2*time.Second, 10*time.Second, s, o, c2)
			require.Equal(t, StateAlive, s.State("c"))
			runNet(t, 10*time.Second, 60*time.Second, s, o, c) // c2 crashed, c resumed
			for _, m := range []*Member{s, o} {
				st, _ := m.Member("c", 60*time.Second)
				assert.Equal(t, StateAlive, st.State, "%s", m.Self().ID)
				assert.Equal(t, "c:7946", st.Node.Addr, "%s: c2 crashed 50 s ago; c, resumed, took its ID back", m.Self().ID)
			}
		})
	}
}
