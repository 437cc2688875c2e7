package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// The merge veto sees a seed's whole view over real sockets, though the
// view is too large for one packet and travels in several stream frames:
// with metadata of about 500 bytes, two entries fill a frame, and the one
// member of another datacenter comes last. Asked frame by frame, the
// joiner's filter accepted the first frames (merged at once) and refused
// only the last; now every question about a view of the seed's names
// all of its entries.
func TestMergeVetoSeesWholeStreamView(t *testing.T) {
	pad := strings.Repeat("x", 480)
	cfg := func(dc string) Config {
		c := Config{Plain: true, Protocol: fast()}
		c.Protocol.Meta = []byte("dc=" + dc + ";" + pad)
		return c
	}
	as := groupOf(t, []Config{cfg("dc1"), cfg("dc1"), cfg("dc1"), cfg("dc2")})
	require.Eventually(t, func() bool { return alive(as[0]) == 4 }, 5*time.Second, 10*time.Millisecond)

	var mu sync.Mutex
	var asked []int // entries in each question about the seed's views
	j := cfg("dc1")
	j.Protocol.MergeFilter = func(from swim.Node, ups []swim.Update) error {
		// A pull or view request (MsgJoin) carries only its sender's
		// Alive and is asked about on its own; it is not a part of a view.
		pull := len(ups) == 1 && ups[0].Kind == swim.UpdateAlive && ups[0].Node.ID == from.ID
		if from.ID == as[0].Self().ID && !pull {
			mu.Lock()
			asked = append(asked, len(ups))
			mu.Unlock()
		}
		for _, u := range ups {
			if u.Kind == swim.UpdateAlive && !strings.HasPrefix(u.Meta, "dc=dc1;") {
				return fmt.Errorf("member %q is not in dc1", u.Node.ID)
			}
		}
		return nil
	}
	joiner := start(t, j)
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	// The Join may still return: the group's members probe the joiner
	// (the seed, without a veto, admitted it), and the joiner learns them
	// from their own packets, which no MergeFilter screens.
	_ = joiner.Join(ctx, as[0].Self().Addr)
	require.Eventually(t, func() bool { return joiner.Stats().Protocol.MergesRefused > 0 }, 5*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, asked)
	for _, n := range asked {
		assert.Equal(t, 5, n, "the seed's view (4 members and the joiner) asked about in parts: %v", asked)
	}
	assert.Positive(t, as[0].Stats().StreamSyncs, "the view went over a stream")
}
