package agent

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// Real-socket tests (loopback) of node metadata, application messages and
// groups mixing wire versions. Deadlines are generous: they bound a
// failure, not the expected time.

// groupOf starts one agent per config, each joining through all the
// earlier ones, and waits for every view to hold all of them alive.
func groupOf(t *testing.T, cfgs []Config) []*Agent {
	t.Helper()
	var as []*Agent
	var addrs []string
	for i, c := range cfgs {
		c.Seed = uint64(i + 1)
		c.ID = swim.ID(fmt.Sprintf("m%02d", i))
		as = append(as, start(t, c))
		if i > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			require.NoError(t, as[i].Join(ctx, addrs...))
			cancel()
		}
		addrs = append(addrs, as[i].Self().Addr)
	}
	require.Eventually(t, func() bool {
		for _, a := range as {
			if alive(a) != len(as) {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond, "full view")
	return as
}

func member(a *Agent, id swim.ID) (Member, bool) {
	for _, m := range a.Members() {
		if m.Node.ID == id {
			return m, true
		}
	}
	return Member{}, false
}

// TestMetaSeenByAll: metadata given at start and set at run time on one
// agent is shown by every agent's Members, with an update event; oversize
// metadata is refused with a clear error.
func TestMetaSeenByAll(t *testing.T) {
	cfgs := make([]Config, 5)
	for i := range cfgs {
		cfgs[i] = Config{Plain: true, Protocol: fast()}
	}
	cfgs[2].Protocol.Meta = []byte("zone=a")
	as := groupOf(t, cfgs)
	id := as[2].Self().ID
	for _, a := range as {
		m, ok := member(a, id)
		require.True(t, ok)
		assert.Equal(t, "zone=a", m.Meta, "%s", a.Self().ID)
		assert.Equal(t, wire.Versions(), m.Versions)
	}

	ev, cancel := as[0].Subscribe(0)
	defer cancel()
	require.NoError(t, as[2].SetMeta(context.Background(), []byte("zone=b")))
	require.Eventually(t, func() bool {
		for _, a := range as {
			if m, _ := member(a, id); m.Meta != "zone=b" {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond, "every member shows the new metadata")
	var got *swim.Event
	for got == nil {
		select {
		case e := <-ev:
			if e.Kind == swim.EventUpdate && e.Node.ID == id {
				got = &e
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no update event")
		}
	}
	assert.Equal(t, "zone=b", got.Meta)

	err := as[2].SetMeta(context.Background(), make([]byte, swim.MaxMetaLen+1))
	assert.ErrorIs(t, err, swim.ErrMetaTooLarge)
	assert.ErrorContains(t, err, "513 bytes")
	_, err = Start(context.Background(), Config{Plain: true, Protocol: swim.Config{Meta: make([]byte, 600)}})
	assert.ErrorIs(t, err, swim.ErrMetaTooLarge)
}

// TestBroadcastReachesAll16: one broadcast reaches the 15 other members of
// a 16-agent group, each exactly once; a direct message reaches its
// addressee; application state comes with a join.
func TestBroadcastReachesAll16(t *testing.T) {
	cfgs := make([]Config, 16)
	for i := range cfgs {
		cfgs[i] = Config{Plain: true, Protocol: fast()}
	}
	as := groupOf(t, cfgs)
	var mu sync.Mutex
	got := map[swim.ID][]swim.Message{}
	for _, a := range as {
		ch, cancel := a.Receive(0)
		t.Cleanup(cancel)
		go func(id swim.ID) {
			for m := range ch {
				mu.Lock()
				got[id] = append(got[id], m)
				mu.Unlock()
			}
		}(a.Self().ID)
	}
	origin := as[5].Self().ID
	require.NoError(t, as[5].Broadcast(context.Background(), "k", []byte("hello, group")))
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, a := range as {
			if a.Self().ID != origin && len(got[a.Self().ID]) == 0 {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond, "every member received the broadcast")
	time.Sleep(time.Second) // duplicates, if any, would arrive now
	mu.Lock()
	for _, a := range as {
		if a.Self().ID == origin {
			assert.Empty(t, got[origin])
			continue
		}
		assert.Equal(t, []swim.Message{{From: origin, Data: []byte("hello, group"), Broadcast: true, Key: "k"}}, got[a.Self().ID], "%s", a.Self().ID)
	}
	clear(got)
	mu.Unlock()

	require.NoError(t, as[0].SendTo(context.Background(), as[9].Self().ID, []byte("just you")))
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got[as[9].Self().ID]) == 1
	}, 10*time.Second, 20*time.Millisecond)
	mu.Lock()
	assert.Equal(t, swim.Message{From: as[0].Self().ID, Data: []byte("just you"), FromHeldAddr: true}, got[as[9].Self().ID][0])
	mu.Unlock()
	err := as[0].SendTo(context.Background(), "nobody", []byte("x"))
	assert.ErrorIs(t, err, swim.ErrUnknownMember)
	err = as[0].Broadcast(context.Background(), "", make([]byte, swim.MaxBroadcastLen+1))
	assert.ErrorIs(t, err, swim.ErrMessageSize)
	assert.Positive(t, as[5].Stats().Protocol.BroadcastsQueued)
}

// TestStateWithJoin: a joiner's MergeRemoteState gets the seed's
// LocalState, marked as a join.
func TestStateWithJoin(t *testing.T) {
	type st struct {
		from swim.ID
		data string
		join bool
	}
	got := make(chan st, 16)
	seed := start(t, Config{Plain: true, ID: "seed", LocalState: func(join bool) []byte { return []byte(fmt.Sprint("seed state, join=", join)) }})
	joiner := start(t, Config{Plain: true, ID: "joiner", MergeRemoteState: func(from swim.Node, s []byte, join bool) {
		got <- st{from.ID, string(s), join}
	}})
	join(t, joiner, seed)
	select {
	case s := <-got:
		assert.Equal(t, st{"seed", "seed state, join=true", true}, s)
	case <-time.After(10 * time.Second):
		t.Fatal("no state")
	}
}

// TestMixedVersionGroup: a group mixing members that write wire format 1
// (a group being upgraded), the current format, and a later version's
// format (an extension field this version does not know on every packet
// and update, plus datagrams of an unknown message kind) converges,
// counts what it skipped, and detects a crashed member.
func TestMixedVersionGroup(t *testing.T) {
	var cfgs []Config
	for _, c := range []Config{{WireVersion: 1}, {}, {WireExtraTag: 40}, {WireVersion: 1}, {}, {WireExtraTag: 40}} {
		c.Plain, c.Protocol = true, fast()
		cfgs = append(cfgs, c)
	}
	as := groupOf(t, cfgs)

	// A later version's message kind, sent to everyone.
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer conn.Close()
	unknown := []byte{wire.EnvelopePlain, wire.Version, 200, 2, 'z', 'z', 0, 0, 0, 0, 0}
	for _, a := range as {
		addr, err := net.ResolveUDPAddr("udp", a.Self().Addr)
		require.NoError(t, err)
		_, err = conn.WriteToUDP(unknown, addr)
		require.NoError(t, err)
	}

	// Format-1 writers advertise no range; the others 1..2. A joiner
	// holds the members of the first view that answers its join as that
	// view's writer sent them: from a format-1 seed, without their
	// ranges, until a later view or update from a format-2 member brings
	// them (apply keeps a range once known). The CI rehearsal of session
	// 19 caught m05 holding m01 without its range when the check ran at
	// once, on a loaded machine.
	versionsOK := func(a *Agent, i int, b *Agent) bool {
		m, ok := member(a, b.Self().ID)
		if !ok {
			return false
		}
		if cfgs[i].WireVersion == 1 && a != b {
			return m.Versions.IsZero()
		}
		return m.Versions == wire.Versions()
	}
	assert.Eventually(t, func() bool {
		for _, a := range as {
			for i, b := range as {
				if !versionsOK(a, i, b) {
					return false
				}
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "every member's range as its writer's format allows")
	for _, a := range as {
		for i, b := range as {
			m, ok := member(a, b.Self().ID)
			require.True(t, ok)
			if cfgs[i].WireVersion == 1 && a != b {
				assert.True(t, m.Versions.IsZero(), "%s sees %s", a.Self().ID, b.Self().ID)
			} else {
				assert.Equal(t, wire.Versions(), m.Versions, "%s sees %s", a.Self().ID, b.Self().ID)
			}
		}
	}
	require.Eventually(t, func() bool {
		for _, a := range as {
			st := a.Stats()
			if st.UnknownKinds == 0 || st.UnknownFields == 0 || st.Format1Received == 0 {
				return false
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "every member heard all three versions")
	for _, a := range as {
		assert.Zero(t, a.Stats().DecodeErrors, "%s", a.Self().ID)
	}
	assert.ErrorIs(t, as[0].Broadcast(context.Background(), "", []byte("x")), ErrNeedsFormat2)
	assert.ErrorIs(t, as[0].SendTo(context.Background(), as[1].Self().ID, []byte("x")), ErrNeedsFormat2)

	// Crash a format-1 writer: the others declare it dead.
	victim := as[3].Self().ID
	require.NoError(t, as[3].tr.Close())
	require.Eventually(t, func() bool {
		for i, a := range as {
			if i == 3 {
				continue
			}
			if m, _ := member(a, victim); m.State != swim.StateDead {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond, "crashed member declared dead by all")
	for i, a := range as {
		if i != 3 {
			assert.Equal(t, len(as)-1, aliveOrSuspect(a), "%s", a.Self().ID)
		}
	}
}

// TestHostileApplicationData: over a real socket, metadata over 512 bytes
// and a broadcast over 1,024 are decode errors (counted, nothing applied);
// a state over MaxStateSize is refused and counted by the protocol.
func TestHostileApplicationData(t *testing.T) {
	a := start(t, Config{Plain: true, ID: "a"})
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer conn.Close()
	to, err := net.ResolveUDPAddr("udp", a.Self().Addr)
	require.NoError(t, err)
	send := func(b []byte) {
		_, err := conn.WriteToUDP(append([]byte{wire.EnvelopePlain}, b...), to)
		require.NoError(t, err)
	}
	// A gossip from "z" with one Alive of "q" whose metadata is 513 bytes.
	meta := append([]byte{2, byte(swim.MsgGossip), 1, 'z', 0, 0, 0, 0, 0, 1, 1, 1, 'q', 0, 0, 1, 'q', 0x84, 0x04, 2, 0x81, 0x04},
		make([]byte, 513)...)
	_, err = wire.Unmarshal(meta, 0)
	var de *wire.DecodeError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "metadata", de.Field, "the packet is refused for its metadata alone")
	send(meta)
	// A gossip from "z" carrying one broadcast of 1,025 bytes.
	bc := append([]byte{2, byte(swim.MsgGossip), 1, 'z', 0, 0, 0, 0x8b, 0x08, 1, 0x88, 0x08, 1, 1, 'z', 1, 0, 0x81, 0x08},
		make([]byte, 1025)...)
	bc = append(bc, 0, 0)
	_, err = wire.Unmarshal(bc, 0)
	require.ErrorAs(t, err, &de)
	require.Equal(t, "broadcast 0 length", de.Field, "the packet is refused for its broadcast alone")
	send(bc)
	// A valid sync whose application state is over the 512-byte default.
	st, err := wire.Marshal(nil, &swim.Packet{Kind: swim.MsgSync, From: swim.Node{ID: "z", Addr: "127.0.0.1:9"}, To: a.Self(),
		State: make([]byte, 600), Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: swim.Node{ID: "z", Addr: "127.0.0.1:9"}, From: "z"}}}, 0)
	require.NoError(t, err)
	send(st)
	if !assert.Eventually(t, func() bool {
		s := a.Stats()
		return s.DecodeErrors == 2 && s.Protocol.StatesTooLarge == 1
	}, 10*time.Second, 20*time.Millisecond) {
		t.Fatalf("%+v", a.Stats()) // read after the wait
	}
	_, ok := member(a, "q")
	assert.False(t, ok, "the oversize-metadata Alive applied nothing")
	assert.Zero(t, a.Stats().Protocol.BroadcastsReceived)
	assert.Zero(t, a.Stats().Protocol.StatesReceived)
}
