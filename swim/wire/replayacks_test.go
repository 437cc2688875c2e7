package wire

import (
	"errors"
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// Sealed acks keep their sender's ID, so each sender's acks are checked
// in its own replay window. When acks without the ID were sealed they
// shared one window (the empty ID), and two members whose clocks are 3 s
// ahead of and 3 s behind the receiver's (within MaxSkew, 30 s) answering
// the receiver's probes in turn, one ack per period: once the window held
// 64 acks, each forgotten ack of the member ahead lifted the floor to the
// receiver's clock less Window, and every ack of the member behind was
// refused as replayed, at periods of 400 ms and 200 ms (atk28 F3). The
// Packet's NoSenderID no longer changes a sealed ack (encoding).
func TestSealedAcksKeepSenderWindows(t *testing.T) {
	for _, iv := range []time.Duration{time.Second, 400 * time.Millisecond, 200 * time.Millisecond} {
		for _, noID := range []bool{false, true} {
			kr, _ := NewKeyring(key(1, 16))
			base := time.Unix(1_800_000_000, 0)
			rc, ac, bc := &fakeClock{t: base}, &fakeClock{t: base.Add(3 * time.Second)}, &fakeClock{t: base.Add(-3 * time.Second)}
			r := replayCodec(t, kr, rc, nil)
			a, b := replayCodec(t, kr, ac, nil), replayCodec(t, kr, bc, nil)
			refused := map[string]int{}
			for i := range 1000 {
				for _, c := range []*fakeClock{rc, ac, bc} {
					c.t = c.t.Add(iv)
				}
				s, name := a, "ahead"
				if i%2 == 1 {
					s, name = b, "behind"
				}
				p := &swim.Packet{Kind: swim.MsgAck, From: swim.Node{ID: swim.ID(name)}, To: node("r"), Ack: swim.Ack{Seq: uint32(2 * i), NoSenderID: noID}}
				out, _, err := s.Encode(p)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r.Decode(out); i < 40 { // the first acks of b were sealed before r started
				} else if errors.Is(err, ErrReplay) {
					refused[name]++
				} else if err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("interval %v NoSenderID %v: refused %v", iv, noID, refused)
			if len(refused) > 0 {
				t.Errorf("interval %v NoSenderID %v: genuine acks refused as replayed: %v", iv, noID, refused)
			}
		}
	}
}
