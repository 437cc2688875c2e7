package swim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A view entry that does not fit MaxPacketSize even alone after the
// header (a 255-byte ID with MaxPacketSize 300) is left out of the join's
// answer and counted; the other entries still go, and no MsgSync is above
// the limit or without updates. The entry used to go alone in a packet
// over the limit, which the codec, encoding what fits, sent empty.
func TestViewEntryTooLargeSkipped(t *testing.T) {
	long := Node{ID: ID(strings.Repeat("c", MaxIDLen)), Addr: "10.0.0.3:7946"}
	b := newTest(t, "b", ModeLifeguard, func(c *Config) { c.MaxPacketSize = 300 }, "d")
	b.Bootstrap([]Node{long})
	require.Equal(t, 3, b.NumAlive())
	a := newTest(t, "a", ModeLifeguard, nil)
	require.NoError(t, a.Join(0, []string{"b:7946"}))
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	require.NoError(t, b.Step(time.Millisecond, &pk[0]))
	out, _ := drain(b)
	syncs := only(t, out, MsgSync)
	require.NotEmpty(t, syncs)
	var got []ID
	for _, s := range syncs {
		assert.NotEmpty(t, s.Updates, "a view transfer without updates")
		assert.LessOrEqual(t, s.Size(), 300, "a view transfer above MaxPacketSize")
		for _, u := range s.Updates {
			got = append(got, u.Node.ID)
		}
	}
	assert.ElementsMatch(t, []ID{"b", "d", "a"}, got, "every entry that fits is sent")
	assert.Equal(t, 1, b.Stats().ViewEntriesSkipped)
}
