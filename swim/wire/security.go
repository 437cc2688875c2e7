package wire

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/fdkit/fdkit/swim"
)

// MaxLabelLen is the longest cluster label, in bytes (Security.Label).
const MaxLabelLen = 255

// EnvelopeLabel starts a labelled packet: EnvelopeLabel, the label's
// length (1 byte), the label, then the plain or encrypted envelope.
const EnvelopeLabel byte = 0x03

// ErrLabel is returned by Security.Open for a packet whose cluster label
// is not this member's (another label, a label where this member has
// none, or none where it has one): a packet of another cluster.
var ErrLabel = errors.New("wire: cluster label mismatch")

// Security seals and opens packets. The zero value is invalid: set Keyring
// for encryption, or Plain to send unauthenticated packets on purpose.
// Its migration switches (SetAcceptPlain, SetSendPlain) are safe to change
// while other goroutines seal and open; use it by pointer.
type Security struct {
	// Keyring encrypts and authenticates every packet. Required unless Plain.
	Keyring *Keyring
	// Plain sends and accepts unencrypted packets. It must be set explicitly
	// and is mutually exclusive with Keyring.
	Plain bool
	// Rand is the nonce source; nil means crypto/rand.Reader.
	Rand io.Reader
	// Label is the cluster label (memberlist's Config.Label), at most
	// MaxLabelLen bytes: every packet and stream frame carries it in front
	// of the envelope, and a packet with another label, or with none when
	// this member has one (or the reverse), is refused with ErrLabel
	// before any key is tried. Sealed packets also authenticate it (it is
	// part of the AES-GCM additional data), so it cannot be changed in
	// flight. It keeps groups that share a network, a port range or, by
	// mistake, a key from merging. Default "": no label, the envelope
	// alone. Members of fdkit before labels refuse labelled packets as an
	// unknown envelope byte.
	Label string
	// SkipInboundLabelCheck (memberlist's SkipInboundLabelCheck) is for a
	// transport in front of Open that checks and strips the label itself:
	// received packets must then carry none, and are opened as if they
	// carried Label (a sealed packet still authenticates it, so one sealed
	// under another label fails with ErrAuth); a packet that still carries
	// a label header is refused with ErrLabel. Seal still writes the label.
	SkipInboundLabelCheck bool

	acceptPlain, sendPlain atomic.Bool
}

// SetAcceptPlain makes a Security with a Keyring also accept plain packets
// (true), or only sealed ones (false, the default): memberlist's
// GossipVerifyIncoming = false and true. With SetSendPlain it turns
// encryption on in a running group without a moment where members refuse
// each other: (1) give every member the key with AcceptPlain and
// SendPlain on (it still sends plain, so the others read it); (2) once all
// have the key, turn SendPlain off everywhere (they accept both); (3) once
// none sends plain, turn AcceptPlain off everywhere. Plain packets have no
// authentication and no replay protection: while AcceptPlain is on, anyone
// who can reach the port can inject them. Ignored in Plain mode.
func (s *Security) SetAcceptPlain(on bool) { s.acceptPlain.Store(on) }

// SetSendPlain makes a Security with a Keyring seal nothing and send plain
// packets (true), or seal every packet (false, the default): memberlist's
// GossipVerifyOutgoing = false and true. See SetAcceptPlain. Ignored in
// Plain mode.
func (s *Security) SetSendPlain(on bool) { s.sendPlain.Store(on) }

// AcceptPlain and SendPlain report the migration switches.
func (s *Security) AcceptPlain() bool { return s.acceptPlain.Load() }

// SendPlain reports whether plain packets are sent (see SetSendPlain).
func (s *Security) SendPlain() bool { return s.sendPlain.Load() }

// Validate reports whether exactly one of Keyring and Plain is set and the
// label fits.
func (s *Security) Validate() error {
	switch {
	case s == nil:
		return errors.New("wire: nil Security")
	case s.Plain && s.Keyring != nil:
		return errors.New("wire: Security sets both Plain and a Keyring; choose one")
	case !s.Plain && s.Keyring == nil:
		return errors.New("wire: Security needs a Keyring, or Plain: true to run unencrypted on purpose")
	case s.Keyring != nil && s.Keyring.Len() == 0:
		return errors.New("wire: Security keyring is empty")
	case len(s.Label) > MaxLabelLen:
		return fmt.Errorf("wire: Security Label is %d bytes, at most %d", len(s.Label), MaxLabelLen)
	}
	return nil
}

// labelLen is the size of the label header: 0 without a label.
func (s *Security) labelLen() int {
	if s.Label == "" {
		return 0
	}
	return 2 + len(s.Label)
}

// Overhead is the envelope size for this configuration, label included:
// the largest, the sealed one, when a Keyring is set.
func (s *Security) Overhead() int { return Overhead(!s.Plain) + s.labelLen() }

// sealing reports whether Seal encrypts.
func (s *Security) sealing() bool { return !s.Plain && !s.sendPlain.Load() }

// Seal wraps payload in an envelope, appending to dst, and returns the
// packet: plain when Plain or SendPlain, sealed with the primary key
// otherwise, behind the label when there is one.
func (s *Security) Seal(dst, payload []byte) ([]byte, error) {
	return s.seal(dst, payload, s.sealing(), "")
}

// seal is Seal, encrypting when sealed: the caller reads SendPlain once
// for a packet whose payload depends on it (Codec.Encode's timestamp).
// A sealed packet with a receiver is bound to it (EnvelopeBound).
func (s *Security) seal(dst, payload []byte, sealed bool, receiver swim.ID) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	start := len(dst)
	dst = s.labelHeader(dst)
	if !sealed {
		dst = append(dst, EnvelopePlain)
		return append(dst, payload...), nil
	}
	s.Keyring.mu.RLock()
	aead := s.Keyring.aead[0]
	s.Keyring.mu.RUnlock()
	env := EnvelopeEncrypted
	if receiver != "" {
		env = EnvelopeBound
	}
	dst = append(dst, env)
	ad := len(dst) // the additional data: the label header and the envelope byte
	var nonce [nonceSize]byte
	r := s.Rand
	if r == nil {
		r = rand.Reader
	}
	if _, err := io.ReadFull(r, nonce[:]); err != nil {
		return nil, fmt.Errorf("wire: reading nonce: %w", err)
	}
	dst = append(dst, nonce[:]...)
	return aead.Seal(dst, nonce[:], payload, boundAD(dst[start:ad], receiver)), nil
}

// boundAD returns the additional data of a packet: its label header and
// envelope byte, followed by the receiver's ID when bound to one.
func boundAD(head []byte, receiver swim.ID) []byte {
	if receiver == "" {
		return head
	}
	return append(append(make([]byte, 0, len(head)+len(receiver)), head...), receiver...)
}

// Open checks and removes the envelope and returns the payload (a new slice
// for encrypted packets, a sub-slice of packet for plain ones). Errors wrap
// ErrShort, ErrEnvelope, ErrLabel, ErrPlainRefused, ErrEncrypted or
// ErrAuth. A packet bound to a receiver (EnvelopeBound) is opened by a
// Codec that knows its member's ID (CodecConfig.LocalID); Open refuses it
// with ErrEnvelope.
func (s *Security) Open(packet []byte) ([]byte, error) {
	out, _, err := s.open(packet, "")
	return out, err
}

// open is Open that also returns the envelope byte: EnvelopePlain,
// EnvelopeEncrypted, or EnvelopeBound for a packet bound to self (a
// packet bound to another receiver fails with ErrAuth; self "" refuses
// bound packets with ErrEnvelope).
func (s *Security) open(packet []byte, self swim.ID) (payload []byte, env byte, err error) {
	if err := s.Validate(); err != nil {
		return nil, 0, err
	}
	if len(packet) < 1 {
		return nil, 0, fmt.Errorf("%w: empty packet", ErrShort)
	}
	body, err := s.stripLabel(packet)
	if err != nil {
		return nil, 0, err
	}
	ad := packet[:len(packet)-len(body)+1] // the label header and the envelope byte
	if s.SkipInboundLabelCheck && s.Label != "" {
		ad = append(s.labelHeader(make([]byte, 0, s.labelLen()+1)), body[0])
	}
	switch env = body[0]; env {
	case EnvelopePlain:
		if !s.Plain && !s.acceptPlain.Load() {
			return nil, 0, ErrPlainRefused
		}
		return body[1:], env, nil
	case EnvelopeEncrypted, EnvelopeBound:
		if s.Plain {
			return nil, 0, ErrEncrypted
		}
		if env == EnvelopeBound {
			if self == "" {
				return nil, 0, fmt.Errorf("%w 0x%02x: a packet bound to its receiver, and this opener has no member ID (CodecConfig.LocalID)", ErrEnvelope, env)
			}
			ad = boundAD(ad, self)
		}
	default:
		return nil, 0, fmt.Errorf("%w 0x%02x (want 0x01 plain, 0x02 encrypted, 0x03 labelled or 0x04 bound)", ErrEnvelope, body[0])
	}
	if len(body) < Overhead(true) {
		return nil, 0, fmt.Errorf("%w: %d bytes, an encrypted packet has at least %d", ErrShort, len(body), Overhead(true))
	}
	nonce, ct := body[1:1+nonceSize], body[1+nonceSize:]
	s.Keyring.mu.RLock()
	defer s.Keyring.mu.RUnlock()
	for _, a := range s.Keyring.aead {
		if out, err := a.Open(nil, nonce, ct, ad); err == nil {
			return out, env, nil
		}
	}
	return nil, 0, ErrAuth
}

// labelHeader appends the label header (none without a label) to dst.
func (s *Security) labelHeader(dst []byte) []byte {
	if s.Label == "" {
		return dst
	}
	dst = append(dst, EnvelopeLabel, byte(len(s.Label)))
	return append(dst, s.Label...)
}

// stripLabel checks the packet's label against s.Label and returns what
// follows it (the packet itself when neither has a label), never empty.
// With SkipInboundLabelCheck the packet must carry no label.
func (s *Security) stripLabel(packet []byte) ([]byte, error) {
	if s.SkipInboundLabelCheck {
		if packet[0] == EnvelopeLabel {
			return nil, fmt.Errorf("%w: a labelled packet, where the transport strips labels (SkipInboundLabelCheck)", ErrLabel)
		}
		return packet, nil
	}
	if packet[0] != EnvelopeLabel {
		if s.Label != "" && (packet[0] == EnvelopePlain || packet[0] == EnvelopeEncrypted || packet[0] == EnvelopeBound) {
			return nil, fmt.Errorf("%w: packet has no label, want %q", ErrLabel, s.Label)
		}
		// Without a label, or not an envelope at all (garbage is not a
		// packet of another group): open judges the envelope byte
		// (ErrEnvelope).
		return packet, nil
	}
	if len(packet) < 2 {
		return nil, fmt.Errorf("%w: a labelled packet cut before its label's length", ErrShort)
	}
	if n := int(packet[1]); len(packet) < 3+n {
		return nil, fmt.Errorf("%w: %d bytes, a labelled packet with %d bytes of label has at least %d", ErrShort, len(packet), n, 3+n)
	}
	got := packet[2 : 2+int(packet[1])]
	if string(got) != s.Label {
		if s.Label == "" {
			return nil, fmt.Errorf("%w: packet labelled %q, this member has no label", ErrLabel, got)
		}
		return nil, fmt.Errorf("%w: packet labelled %q, want %q", ErrLabel, got, s.Label)
	}
	return packet[2+len(got):], nil
}
