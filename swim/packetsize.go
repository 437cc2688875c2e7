package swim

// Packet sizes: the upper bound of a packet's encoding that the state
// machine keeps within Config.MaxPacketSize (Packet.Size, Update.Size),
// and the receiver check a wire encoding may carry in place of a long
// receiver ID (IDCheck).

// joinTokenSize bounds a join token's extension entry in bytes
// (Packet.Size): tag, length, 8 bytes.
const joinTokenSize = 1 + 1 + 8

// matchBySeqSize is the size of a ping's MatchBySeq entry in bytes
// (Packet.Size): tag and a length of 0.
const matchBySeqSize = 1 + 1

// toCheckSize is the size of a ToCheck's extension entry in bytes
// (Packet.Size): tag, length, 4 bytes.
const toCheckSize = 1 + 1 + 4

// IDCheck returns the check of id that Packet.ToCheck carries: the 32-bit
// FNV-1a hash of its bytes, 1 in place of 0 (0 is no check). It guards
// against a packet reaching a member other than the one it was meant for
// (a member restarted under another ID at the address), not against
// forgery: two IDs share a check with probability 2^-32, and anyone can
// find an ID with a given check, so a ping whose ack verifies its
// receiver names it in full (Ping.Verifies).
func IDCheck(id ID) uint32 {
	// FNV-1a (32-bit offset basis and prime), inline: hash/fnv's hasher
	// escapes to the heap, once per packet encoded or decoded with a
	// check.
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	if h != 0 {
		return h
	}
	return 1
}

// partSize bounds a Part's encoding (Packet.Size): a 1-byte tag, a 1-byte
// length and two uvarints of up to 5 bytes.
const partSize = 1 + 1 + 5 + 5

// Size estimates, in bytes, an upper bound of the encoded size of the
// datagram in wire format 2, assuming a version byte, a kind byte, strings
// prefixed with a uvarint length below 2^14 (2 bytes), uvarint sequence
// numbers (at most 5 bytes) and incarnations (at most 10 bytes), a one-byte
// flag, a two-byte update count, byte strings and extension sections
// prefixed with a length below 2^21 (3 bytes), and updates encoded as kind
// byte, node, incarnation, From and their extension section (see
// Update.Size), a view digest's entry at 15 bytes and a join token's at
// 10. It counts both
// header addresses, which format 1 writes and format 2 leaves out where the
// receiver does not need them (the receiver's own, the sender's in acks and
// nacks: see swim/wire), so it bounds both formats; for format 2 it is
// then larger by the length of each omitted address (15 bytes for
// "127.0.0.1:40123", twice that in an ack) besides the margins above.
// The state machine keeps every packet's Size within Config.MaxPacketSize
// when its header fits: a header alone can exceed the limit with IDs and
// addresses near their 255-byte maximum (a ping-req names three nodes, up to
// 1,555 bytes), and is then sent without updates; a MsgSync packet carries
// at least one update. A wire codec must not encode a packet larger than
// its Size.
func (p *Packet) Size() int {
	n := packetHeaderSize + nodeSize(p.From) + nodeSize(p.To)
	switch p.Kind {
	case MsgPing, MsgAck, MsgNack:
		n += 5
		if p.Kind == MsgPing && p.Ping.MatchBySeq {
			n += matchBySeqSize
		}
	case MsgPingReq:
		n += 5 + nodeSize(p.PingReq.Target) + 1
	case MsgUser:
		n += 3 + len(p.User)
	}
	if p.ToCheck != 0 {
		n += toCheckSize
	}
	if len(p.Broadcasts) > 0 {
		n += 1 + 3 + 3
		for i := range p.Broadcasts {
			n += p.Broadcasts[i].Size()
		}
	}
	if len(p.State) > 0 {
		n += 1 + 3 + len(p.State)
	}
	if len(p.AckPayload) > 0 {
		n += 1 + 3 + len(p.AckPayload)
	}
	if !p.Part.IsZero() {
		n += partSize
	}
	if !p.Digest.IsZero() {
		n += digestSize
	}
	if p.JoinToken != 0 {
		n += joinTokenSize
	}
	for i := range p.Updates {
		n += p.Updates[i].Size()
	}
	return n
}

// Size estimates, in bytes, an upper bound of the update's encoded size
// (see Packet.Size): kind, node, incarnation, From, and an extension
// section of a 2-byte length, the version range (4 bytes when advertised)
// and the metadata (3 bytes plus its length, when not empty).
func (u *Update) Size() int {
	n := 1 + nodeSize(u.Node) + 10 + 2 + len(u.From) + len(u.Proof) + 2
	if !u.Versions.IsZero() {
		n += 4
	}
	if len(u.Meta) > 0 {
		n += 3 + len(u.Meta)
	}
	return n
}

// packetHeaderSize is version, kind, the extension section's length
// (3 bytes) and the update count.
const packetHeaderSize = 1 + 1 + 3 + 2

func nodeSize(n Node) int { return 2 + len(n.ID) + 2 + len(n.Addr) }
