package sim

import (
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// publicKey is the place on the probe ring of a member with ID id when
// the group has no ring key (swim.Config.RingKey): the 64-bit FNV-1a hash
// of the ID, which anybody can compute.
func publicKey(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// sybilIDs returns k IDs for an attacker's identities: ground (tried one
// nonce after another) so that their public ring keys all fall in the
// arc of width 2^52 from at, where no honest member's key does, which
// makes them k consecutive members on a ring without key; or, with ground
// false, the first k IDs as they come (sybil-0, sybil-1, …).
func sybilIDs(t *testing.T, k int, at uint64, honest []string, ground bool) []string {
	t.Helper()
	const width = 1 << 52
	for _, id := range honest {
		require.GreaterOrEqual(t, publicKey(id)-at, uint64(width), "honest %s in the attacker's arc", id)
	}
	var ids []string
	for nonce := 0; len(ids) < k; nonce++ {
		if id := fmt.Sprintf("sybil-%d", nonce); !ground || publicKey(id)-at < width {
			ids = append(ids, id)
		}
	}
	return ids
}

// sybilRun runs a group of honest members and k attacker identities
// (members like any other, whose probes are not counted: an attacker's
// identity need not report what it finds) for 120 s, and returns the mean,
// over the honest members, of the mean wait from an instant uniform in
// [20 s, 120 s) until an honest member next pings that member: the wait
// for the first probe of a crash at a random instant that somebody
// other than the attacker will act on.
func sybilRun(t *testing.T, honest, sybils []string, seed uint64, cfg swim.Config) time.Duration {
	t.Helper()
	const from, end = 20 * time.Second, 120 * time.Second
	ids := append(append([]string(nil), honest...), sybils...)
	s, err := New(Config{N: len(ids), IDs: ids, Seed: seed, StartSpread: time.Second, Member: cfg})
	require.NoError(t, err)
	h := len(honest)
	pinged := make([][]time.Duration, h)
	s.SetPacketHook(func(now time.Duration, to int, p *swim.Packet) {
		if now >= from && to < h && p.Kind == swim.MsgPing && s.Index(p.From.ID) < h {
			pinged[to] = append(pinged[to], now)
		}
	})
	s.RunUntil(end)
	var sum time.Duration
	for v := range h {
		sum += meanWait(pinged[v], from, end)
	}
	return sum / time.Duration(h)
}

// An attacker that joins k identities with IDs of its choosing can place
// them where it wants on a ring everyone can compute: ground into one arc,
// they are k consecutive members of the ring, the probers of every member
// in k consecutive rounds of each pass, and a crash at a random instant
// waits about (k+1)²/2L periods for a real member's probe instead of about
// half a period: 1.6 s for k = 8 identities among 24 members, 2.3 s for
// 12 among 28, worse than SWIM's shuffled order (1.3 s), where identities
// have no place. On the default ring (FNV-1a) the attacker need not even
// grind: sybil-0, sybil-1, … are neighbours. With a ring key
// (swim.Config.RingKey) the identities land at random places, ground or
// not: 0.8 s and 0.9 s, better than the shuffled order.
func TestRingSybilPlacement(t *testing.T) {
	if raceOn {
		t.Skip("groups of 40 for 120 s under -race")
	}
	for _, c := range []struct{ honest, k int }{{24, 8}, {28, 12}} {
		var honest []string
		for i := range c.honest {
			honest = append(honest, fmt.Sprintf("m%04d", i))
		}
		at := uint64(0x5a5a) << 48
		named := sybilIDs(t, c.k, at, honest, false)
		ground := sybilIDs(t, c.k, at, honest, true)
		ring := swim.Config{Mode: swim.ModeDetector}
		shuffled, keyed := ring, ring
		shuffled.ShuffledProbes = true
		keyed.RingKey = []byte("a secret of the group's, 32 byte")
		for _, seed := range []uint64{21, 22} {
			none := sybilRun(t, honest, nil, seed, ring)
			ringNamed := sybilRun(t, honest, named, seed, ring)
			ringGround := sybilRun(t, honest, ground, seed, ring)
			shGround := sybilRun(t, honest, ground, seed, shuffled)
			keyedNamed := sybilRun(t, honest, named, seed, keyed)
			keyedGround := sybilRun(t, honest, ground, seed, keyed)
			t.Logf("%d honest, %d identities, seed %d: mean wait for a real member's probe: none %v; ring: named %v, ground %v; shuffled: ground %v; ring key: named %v, ground %v",
				c.honest, c.k, seed, none, ringNamed, ringGround, shGround, keyedNamed, keyedGround)
			assert.Greater(t, ringGround, 3*none, "seed %d: ground identities on the default ring", seed)
			assert.Greater(t, ringGround, shGround, "seed %d: ground identities on the default ring", seed)
			assert.Less(t, keyedGround, shGround, "seed %d: ground identities on a keyed ring", seed)
			assert.Less(t, keyedNamed, shGround, "seed %d: identities on a keyed ring", seed)
			assert.Less(t, 3*keyedGround, 2*ringGround, "seed %d: ground identities on a keyed ring", seed)
		}
	}
}
