package wire

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fdkit/fdkit/swim"
)

// A configuration whose envelope leaves no room for a payload: a 255-byte
// label (257 bytes of header) and the sealed envelope and timestamp (37)
// within a MaxPacketSize of 128, or an 89-byte label that leaves exactly
// none. NewCodec took it, MaxPayload was 0 or less, and Encode, whose
// marshal reads a limit of 0 or less as none, wrote datagrams over
// MaxPacketSize, which every decoder refuses as oversize (atk29 F3; also
// at 2451311). Either NewCodec refuses the configuration, naming
// MaxPacketSize and the label, or Encode keeps within MaxPacketSize.
func TestEnvelopeLeavesNoRoom(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	ping := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "a", Addr: "127.0.0.1:1"}, To: swim.Node{ID: "b"}, Ping: swim.Ping{Seq: 2}}
	for _, label := range []string{strings.Repeat("l", 255), strings.Repeat("l", 128-2-37)} {
		c, err := NewCodec(CodecConfig{Security: &Security{Keyring: kr, Label: label}, MaxPacketSize: 128, LocalID: "a"})
		if err != nil {
			continue // refused: fine
		}
		b, _, err := c.Encode(ping)
		if err == nil {
			assert.LessOrEqual(t, len(b), c.MaxPacketSize(), "label of %d bytes: MaxPayload %d, a datagram over MaxPacketSize", len(label), c.MaxPayload())
		}
	}
}
