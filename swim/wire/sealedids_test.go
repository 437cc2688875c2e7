package wire

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// (atk28b) a sealed ack without its sender's and receiver's IDs, as members
// at 606b6d2..db233a9 sealed them (an encoding that leaves the IDs out,
// sealed), is still decoded by the current Codec, with an empty From.ID:
// the agent then fills the sender in by AckSender, so an outsider who
// replays such an ack, captured from an older member during a rolling
// upgrade, from a crashed member's host answers a current prober's probe
// of the round (atk28 F2), and such acks still share the empty ID's
// replay window (atk28 F3).
func TestSealedAckWithoutIDsRefused(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	old := replayCodec(t, kr, clk, nil)
	r := replayCodec(t, kr, clk, nil)
	clk.t = clk.t.Add(time.Second)
	p := &swim.Packet{Kind: swim.MsgAck, From: swim.Node{ID: "j"}, To: node("a"), Ack: swim.Ack{Seq: 42, NoSenderID: true}}
	// As the older sealer wrote it: the plain layout (no IDs), sealed.
	head := binary.BigEndian.AppendUint64(nil, uint64(old.replay.stamp()))
	payload, _, err := marshal(head, p, old.MaxPayload(), encoding{v: 2})
	if err != nil {
		t.Fatal(err)
	}
	pkt, err := old.sec.seal(nil, payload, true, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Decode(pkt)
	if err == nil {
		t.Errorf("a sealed ack naming neither member was accepted: From %+v To %+v seq %d NoSenderID %v", got.From, got.To, got.Ack.Seq, got.Ack.NoSenderID)
	}
}
