package wire_test

import (
	"fmt"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

func Example() {
	key, _ := wire.ParseKey("000102030405060708090a0b0c0d0e0f")
	kr, _ := wire.NewKeyring(key)
	codec, _ := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: kr}})

	ping := &swim.Packet{
		Kind: swim.MsgPing,
		From: swim.Node{ID: "a", Addr: "127.0.0.1:7946"},
		To:   swim.Node{ID: "b", Addr: "127.0.0.1:7947"},
		Ping: swim.Ping{Seq: 42},
		Updates: []swim.Update{{Kind: swim.UpdateSuspect, Node: swim.Node{ID: "c", Addr: "127.0.0.1:7948"},
			Incarnation: 3, From: "a"}},
	}
	// Payload: 2 (version, kind) + 17 (from) + 3 (to: its ID, and an empty
	// address, which the receiver does not need) + 1 (seq) + 1 (an empty
	// extension section) + 2 (count) + 22 (the update with its empty
	// extension section) = 48 bytes; sealed with its 8-byte timestamp (the
	// replay check): 8 + 48 + 29 = 85.
	datagram, n, _ := codec.Encode(ping)
	fmt.Printf("%d bytes, %d update, envelope overhead %d\n", len(datagram), n, wire.Overhead(true))

	got, _ := codec.Decode(datagram)
	fmt.Println(got.Kind, got.Ping.Seq, got.Updates[0].Kind, got.Updates[0].Node.ID, got.Updates[0].Incarnation)

	datagram[len(datagram)-1] ^= 1 // tamper
	_, err := codec.Decode(datagram)
	fmt.Println(err)
	// Output:
	// 85 bytes, 1 update, envelope overhead 29
	// ping 42 suspect c 3
	// wire: packet failed authentication with every key in the keyring
}
