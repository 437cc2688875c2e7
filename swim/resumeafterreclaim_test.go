package swim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member wrongly declared dead (paused) that resumes at its old address
// after a restart reclaimed its ID elsewhere hears at once that its ID is
// held at the new address (EventConflict): the holders answer its stale
// Alive with the entry they keep. Before, they ignored it silently and the
// resumed process ran on, believing itself a member, until an
// anti-entropy exchange told it (13.85 s after it resumed here).
func TestPausedMemberResumesAfterReclaim(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "o", "c")
	o := newTest(t, "o", ModeLifeguard, nil, "s", "c")
	c := newTest(t, "c", ModeLifeguard, nil, "s", "o") // paused from the start
	killC(t, time.Second, s, o)
	c2, err := New(Config{Self: Node{ID: "c", Addr: "c2:7946"}, Mode: ModeLifeguard}, rand.New(rand.NewPCG(3, 4)))
	require.NoError(t, err)
	require.NoError(t, c2.Join(2*time.Second, []string{"o:7946"}))
	runNet(t, 2*time.Second, 10*time.Second, s, o, c2)
	ev := runNet(t, 10*time.Second, 13*time.Second, s, o, c, c2)
	for _, m := range []*Member{s, o} {
		st, _ := m.Member("c", 13*time.Second)
		assert.Equal(t, "c2:7946", st.Node.Addr)
	}
	assert.True(t, hasEvent(ev[c], EventConflict), "the resumed process hears it was replaced")
}
