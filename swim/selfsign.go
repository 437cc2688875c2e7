package swim

import (
	"crypto/ed25519"
	"encoding/binary"
	"time"
)

// Signed self-updates (Config.SigningKey): only a member itself can raise
// the incarnation others store for it. See docs/algorithms.md, “SWIM:
// hostile and stale updates”.

// Proof is a member's own signature of one of its self-updates (an Alive,
// or a leave: a Dead with From equal to the member's ID): empty, or
// ProofSize bytes, the Ed25519 public key (32 bytes) followed by the
// signature (64 bytes) of the update's kind, ID, address and incarnation
// (signedBytes). It travels with the update through gossip and view
// transfers unchanged, so that every receiver can check it. A string, so
// that Update stays comparable and cheap to copy.
type Proof string

// ProofSize is the length in bytes of a non-empty Proof.
const ProofSize = ed25519.PublicKeySize + ed25519.SignatureSize

// Key returns the public key the proof claims, or nil for a proof of the
// wrong length.
func (p Proof) Key() ed25519.PublicKey {
	if len(p) != ProofSize {
		return nil
	}
	return ed25519.PublicKey(p[:ed25519.PublicKeySize])
}

// signedBytes is what a Proof signs: a domain-separation prefix, the
// update kind, the member's ID and address (each uvarint-length prefixed),
// the incarnation (8 bytes, big-endian) and the metadata (uvarint-length
// prefixed). The From field is implied (the member itself) and the proof
// is bound to the address, so that it cannot be replayed for another node,
// and to the metadata, so that a holder of the group key cannot change a
// member's metadata in flight. (An Alive relayed through a member writing
// wire format 1 has lost its metadata, and with it a valid proof.)
func signedBytes(u *Update) []byte {
	const domain = "fdkit swim self-update v1\x00"
	b := make([]byte, 0, len(domain)+1+3*binary.MaxVarintLen16+len(u.Node.ID)+len(u.Node.Addr)+8+len(u.Meta))
	b = append(b, domain...)
	b = append(b, byte(u.Kind))
	b = binary.AppendUvarint(b, uint64(len(u.Node.ID)))
	b = append(b, u.Node.ID...)
	b = binary.AppendUvarint(b, uint64(len(u.Node.Addr)))
	b = append(b, u.Node.Addr...)
	b = binary.BigEndian.AppendUint64(b, uint64(u.Incarnation))
	b = binary.AppendUvarint(b, uint64(len(u.Meta)))
	return append(b, u.Meta...)
}

// Sign returns the Proof of u made with key: u must be an Alive or a leave
// about the key's owner. Members sign their own updates (Config.SigningKey);
// Sign is exported for tools and tests that craft updates.
func Sign(key ed25519.PrivateKey, u Update) Proof {
	pub := key.Public().(ed25519.PublicKey)
	return Proof(string(pub) + string(ed25519.Sign(key, signedBytes(&u))))
}

// verifyProof reports whether u.Proof is a valid signature of u by key
// (by the proof's own key when key is nil).
func verifyProof(key ed25519.PublicKey, u *Update) bool {
	pk := u.Proof.Key()
	if pk == nil || (key != nil && !pk.Equal(key)) {
		return false
	}
	return ed25519.Verify(pk, signedBytes(u), []byte(u.Proof[ed25519.PublicKeySize:]))
}

// signed reports whether this member runs with signed self-updates.
func (m *Member) signed() bool { return m.cfg.SigningKey != nil }

// selfProof returns the proof of this member's own update u (cached for
// the current incarnation's Alive), or "" without a SigningKey.
func (m *Member) selfProof(u Update) Proof {
	if !m.signed() {
		return ""
	}
	if u.Kind == UpdateAlive {
		if m.keys.aliveProof == "" || m.keys.aliveProofInc != u.Incarnation {
			m.keys.aliveProof, m.keys.aliveProofInc = Sign(m.cfg.SigningKey, u), u.Incarnation
		}
		return m.keys.aliveProof
	}
	return Sign(m.cfg.SigningKey, u)
}

// Trust binds key to the member id ahead of first sight, for groups whose
// members' public keys are distributed beforehand (static clusters): an
// Alive or leave about id is then accepted only under this key, and the
// first update heard cannot bind another (trust on first use). It replaces
// an earlier binding. It has effect only with Config.SigningKey set.
func (m *Member) Trust(id ID, key ed25519.PublicKey) {
	if m.keys.trusted == nil {
		m.keys.trusted = make(map[ID]string)
	}
	m.keys.trusted[id] = string(key)
	if p := m.peers[id]; p != nil {
		p.key = string(key)
	}
}

// checkSelfUpdate reports whether u, an Alive or a leave about p (nil: a
// member not yet known) that would change this member's view, may be
// applied: without signed self-updates always; with them only with a valid
// proof under the key bound to the ID (Trust, or the first key seen). A
// proof under another key is a conflicting claim of the ID (EventConflict);
// a missing or invalid one is counted in Stats.BadProofs. The key of a
// valid proof is bound to p when none was.
// ownProof reports, without counting or recording anything, whether u
// about p carries a valid proof under the key already bound to p's ID (its
// held key, or the trusted one): the member's own word, as
// checkSelfUpdate would take it. False when no key is bound yet.
func (m *Member) ownProof(p *peer, u *Update) bool {
	bound := m.keys.trusted[u.Node.ID]
	if p != nil && p.key != "" {
		bound = p.key
	}
	return bound != "" && string(u.Proof.Key()) == bound && verifyProof(nil, u)
}

func (m *Member) checkSelfUpdate(now time.Duration, p *peer, u *Update) bool {
	if !m.signed() {
		return true
	}
	bound := m.keys.trusted[u.Node.ID]
	if p != nil && p.key != "" {
		bound = p.key
	}
	if !verifyProof(nil, u) {
		m.stats.BadProofs++
		return false
	}
	if bound != "" && string(u.Proof.Key()) != bound {
		m.stats.BadProofs++
		held := u.Node
		if p != nil {
			held = p.node
		}
		m.conflict(now, u.Node, held)
		return false
	}
	if p != nil {
		p.key = string(u.Proof.Key())
	}
	return true
}
