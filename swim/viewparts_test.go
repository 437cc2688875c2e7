package swim

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// splitView returns the view member b sends in answer to a's join: b
// knows peers members besides itself and sends them in packets of at most
// maxPacket bytes.
func splitView(t *testing.T, peers, maxPacket int) []Packet {
	t.Helper()
	var ids []string
	for i := range peers {
		ids = append(ids, fmt.Sprintf("p%02d", i))
	}
	b := newTest(t, "b", ModeLifeguard, func(c *Config) { c.MaxPacketSize = maxPacket }, ids...)
	return viewOf(t, b, "a")
}

// viewOf returns the MsgSync packets m answers a join from id with.
func viewOf(t *testing.T, m *Member, id string) []Packet {
	t.Helper()
	j := Packet{Kind: MsgJoin, From: node(id), To: m.self, Updates: []Update{{Kind: UpdateAlive, Node: node(id), From: ID(id)}}}
	require.NoError(t, m.Step(time.Millisecond, &j))
	out, _ := drain(m)
	syncs := only(t, out, MsgSync)
	for i := range syncs {
		syncs[i].Updates = slices.Clone(syncs[i].Updates)
	}
	return syncs
}

// filterLog is a MergeFilter that records the entries it is asked about
// and refuses any transfer naming refuse.
type filterLog struct {
	calls  [][]ID
	refuse ID
}

func (f *filterLog) filter(_ Node, ups []Update) error {
	var ids []ID
	for _, u := range ups {
		ids = append(ids, u.Node.ID)
	}
	f.calls = append(f.calls, ids)
	if slices.Contains(ids, f.refuse) {
		return errors.New("refused")
	}
	return nil
}

// A view cut into parts is marked part by part (offsets contiguous from 0,
// the same total, every entry once: b, its 30 peers and the joiner); one
// that fits a packet is not.
func TestSendSyncMarksParts(t *testing.T) {
	parts := splitView(t, 30, 400)
	require.Greater(t, len(parts), 2)
	next := 0
	for _, p := range parts {
		assert.Equal(t, uint32(next), p.Part.Offset)
		assert.Equal(t, uint32(32), p.Part.Total)
		assert.LessOrEqual(t, p.Size(), 400)
		next += len(p.Updates)
	}
	assert.Equal(t, 32, next)
	whole := splitView(t, 3, 1400)
	require.Len(t, whole, 1)
	assert.True(t, whole[0].Part.IsZero())
}

// The merge veto sees the whole transfer before any of it is merged: a
// view in parts whose last part names a member the filter refuses is
// refused whole (the parts before it were merged one by one before);
// accepted, it is merged at its last part, in whatever order the parts
// came, with one question to the filter.
func TestMergeFilterSeesWholeTransfer(t *testing.T) {
	parts := splitView(t, 30, 400)
	require.Greater(t, len(parts), 2)
	// The view lists b, p00…p29 and the joiner a, in that order: p29 is
	// in the last part.
	require.True(t, slices.ContainsFunc(parts[len(parts)-1].Updates, func(u Update) bool { return u.Node.ID == "p29" }))
	f := &filterLog{refuse: "p29"}
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MergeFilter = f.filter })
	require.NoError(t, a.Join(0, []string{"b:7946"}))
	drain(a)
	parts = echoing(a, parts...)
	for i := range parts {
		require.NoError(t, a.Step(2*time.Millisecond, &parts[i]))
		assert.Equal(t, 1, a.NumAlive(), "part %d merged", i)
	}
	require.Len(t, f.calls, 1)
	assert.Len(t, f.calls[0], 32)
	assert.Equal(t, 1, a.Stats().MergesRefused)
	assert.True(t, a.join.pending, "a refused view does not answer the join")

	// Accepted, in reverse order: nothing before the last part arrives.
	f2 := &filterLog{refuse: "nobody"}
	a2 := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MergeFilter = f2.filter })
	require.NoError(t, a2.Join(0, []string{"b:7946"}))
	drain(a2)
	parts = echoing(a2, parts...)
	for i := len(parts) - 1; i >= 0; i-- {
		assert.Equal(t, 1, a2.NumAlive())
		require.NoError(t, a2.Step(2*time.Millisecond, &parts[i]))
	}
	assert.Equal(t, 32, a2.NumAlive())
	require.Len(t, f2.calls, 1)
	assert.Equal(t, "b", string(f2.calls[0][0]), "entries in the sender's order")
	assert.Len(t, f2.calls[0], 32)
	assert.False(t, a2.join.pending)
	assert.Zero(t, a2.Stats().ViewsIncomplete)
}

// Without a MergeFilter each part is merged as it comes: a lost part
// costs only its own entries.
func TestViewPartsWithoutFilterMergeAtOnce(t *testing.T) {
	parts := splitView(t, 30, 400)
	a := newTest(t, "a", ModeLifeguard, nil)
	require.NoError(t, a.Step(time.Millisecond, &parts[0]))
	assert.Equal(t, 1+len(parts[0].Updates), a.NumAlive())
}

// A transfer missing a part is not merged, and is dropped after two
// protocol periods; a later complete one is merged. A part that overlaps
// one held starts a new transfer.
func TestIncompleteViewNotMerged(t *testing.T) {
	parts := splitView(t, 30, 400)
	f := &filterLog{refuse: "nobody"}
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MergeFilter = f.filter })
	require.NoError(t, a.Step(time.Millisecond, &parts[0]))
	require.NoError(t, a.Step(time.Millisecond, &parts[1]))
	a.Tick(2*time.Second + time.Millisecond)
	assert.Equal(t, 1, a.NumAlive())
	assert.Equal(t, 1, a.Stats().ViewsIncomplete)
	assert.Empty(t, a.heldViews)
	assert.Empty(t, f.calls)

	// A part held twice: the first transfer is dropped, the second
	// completes.
	now := 3 * time.Second
	require.NoError(t, a.Step(now, &parts[0]))
	for i := range parts {
		require.NoError(t, a.Step(now, &parts[i]))
	}
	assert.Equal(t, 2, a.Stats().ViewsIncomplete)
	assert.Equal(t, 32, a.NumAlive())
	assert.Len(t, f.calls, 1)
}

// Held transfers are bounded: at most maxHeldViews at once (the oldest
// displaced), none larger than MaxMembers entries; a part whose entries
// run past its total is malformed.
func TestHeldViewsBounded(t *testing.T) {
	parts := splitView(t, 30, 400)
	f := &filterLog{refuse: "nobody"}
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MergeFilter = f.filter; c.MaxMembers = 100 })
	for i := range 2 * maxHeldViews {
		p := parts[0]
		p.From = node(fmt.Sprintf("s%d", i))
		require.NoError(t, a.Step(time.Millisecond, &p))
		assert.LessOrEqual(t, len(a.heldViews), maxHeldViews)
	}
	assert.Equal(t, maxHeldViews, a.Stats().ViewsIncomplete)

	huge := parts[0]
	huge.From, huge.Part.Total = node("h"), 101
	require.NoError(t, a.Step(time.Millisecond, &huge))
	assert.Equal(t, maxHeldViews+1, a.Stats().ViewsIncomplete)
	assert.False(t, slices.ContainsFunc(a.heldViews, func(v *heldView) bool { return v.from == "h" }))

	bad := parts[len(parts)-1]
	bad.Part.Offset = bad.Part.Total - 1
	assert.ErrorIs(t, a.Step(time.Millisecond, &bad), ErrPacket)
	empty := parts[0]
	empty.Updates = nil
	assert.ErrorIs(t, a.Step(time.Millisecond, &empty), ErrPacket)
	assert.Empty(t, f.calls)
}
