package wire

import (
	"encoding/hex"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/internal/worked"
	"github.com/fdkit/fdkit/swim"
)

// TestWorkedReplay replays the worked example of docs/algorithms.md, “SWIM:
// replay protection for sealed packets”: each row delivers the packet
// sealed at the given instant to the receiver, whose clock and start are
// given; a repeated instant is the same packet delivered again.
func TestWorkedReplay(t *testing.T) {
	tabs, err := worked.Read("../../docs/algorithms.md")
	require.NoError(t, err)
	tab := tabs["swim-replay"]
	require.NotNil(t, tab, "docs/algorithms.md has no worked example \"swim-replay\"")
	require.NotEmpty(t, tab.Rows)
	base := time.Unix(1_800_000_000, 0)
	at := func(i int, col string) time.Time {
		c, err := tab.Cell(i, col)
		require.NoError(t, err)
		v, _, err := worked.Number(c)
		require.NoError(t, err, "row %d column %q", i+1, col)
		return base.Add(time.Duration(v * float64(time.Second)))
	}

	// Seal every packet once, in the order of its sealing instant.
	kr, _ := NewKeyring(key(3, 16))
	var instants []time.Time
	seen := map[time.Time]bool{}
	for i := range tab.Rows {
		if s := at(i, "sealed at (s)"); !seen[s] {
			seen[s] = true
			instants = append(instants, s)
		}
	}
	sort.Slice(instants, func(a, b int) bool { return instants[a].Before(instants[b]) })
	sclk := &fakeClock{t: instants[0]}
	sender := replayCodec(t, kr, sclk, nil)
	packets := map[time.Time][]byte{}
	for n, s := range instants {
		sclk.t = s
		packets[s] = seal(t, sender, pingFrom("s", uint32(n)))
	}

	rclk := &fakeClock{}
	var r *Codec
	var started time.Time
	for i := range tab.Rows {
		if st := at(i, "receiver started at (s)"); r == nil || !st.Equal(started) {
			started, rclk.t = st, st
			r = replayCodec(t, kr, rclk, nil)
		}
		rclk.t = at(i, "receiver's clock (s)")
		_, err := r.Decode(packets[at(i, "sealed at (s)")])
		want, err2 := tab.Cell(i, "result")
		require.NoError(t, err2)
		switch want {
		case "accepted":
			assert.NoError(t, err, "row %d", i+1)
		case "refused":
			assert.ErrorIs(t, err, ErrReplay, "row %d", i+1)
		default:
			t.Fatalf("row %d: result %q", i+1, want)
		}
	}
}

// TestWorkedWire decodes the bytes of the worked example of
// docs/algorithms.md, “SWIM: wire format and extensions”, row by row: the
// packet it describes, one unknown field skipped, and the re-encoding equal
// to the table without the unknown row (with the shorter section length).
func TestWorkedWire(t *testing.T) {
	tabs, err := worked.Read("../../docs/algorithms.md")
	require.NoError(t, err)
	tab := tabs["swim-wire"]
	require.NotNil(t, tab, "docs/algorithms.md has no worked example \"swim-wire\"")
	var all, known []byte
	for i := range tab.Rows {
		field, err := tab.Cell(i, "field")
		require.NoError(t, err)
		hx, err := tab.Cell(i, "bytes (hex)")
		require.NoError(t, err)
		b, err := hex.DecodeString(strings.ReplaceAll(hx, " ", ""))
		require.NoError(t, err, "row %d", i+1)
		all = append(all, b...)
		switch field {
		case "unknown":
		case "update extensions":
			known = append(known, b[0]-byte(len(extraEntry)+2))
		default:
			known = append(known, b...)
		}
	}
	p, info, err := UnmarshalInfo(all, 0)
	require.NoError(t, err)
	assert.Equal(t, Info{Version: 2, UnknownFields: 1}, info)
	want := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "a", Addr: "x:1"}, To: swim.Node{ID: "b"},
		Ping: swim.Ping{Seq: 300}, Broadcasts: []swim.Broadcast{{Origin: "a", Seq: 1, Data: []byte("hi")}},
		Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: swim.Node{ID: "a"}, Incarnation: 1, From: "a",
			Meta: "z", Versions: swim.VersionRange{Min: 1, Max: 2}}}}
	assert.Equal(t, want, p)
	assert.Equal(t, known, mustMarshal(t, p))
}
