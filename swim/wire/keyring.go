package wire

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Envelope bytes: the first byte of every packet.
const (
	EnvelopePlain     byte = 0x01
	EnvelopeEncrypted byte = 0x02
	// EnvelopeBound is an encrypted packet bound to its receiver: the
	// receiver's ID is part of the AES-GCM additional data, after the
	// label header and this byte, and is not in the payload. Only the
	// member with that ID opens it (a Codec with LocalID). fdkit sends it
	// for one packet only: the ack to a sealed probe ping that asked for
	// it (packet tag 8), which then names neither member (Codec). Same
	// size as EnvelopeEncrypted. Members of fdkit before it never ask for
	// it, and refuse it as an unknown envelope byte.
	EnvelopeBound byte = 0x04
)

const (
	nonceSize = 12 // standard GCM nonce
	tagSize   = 16 // standard GCM tag
)

// Overhead returns how many bytes the envelope adds to a payload: 1 for a
// plain packet, 1 + 12 + 16 = 29 for an encrypted one.
func Overhead(encrypted bool) int {
	if encrypted {
		return 1 + nonceSize + tagSize
	}
	return 1
}

// Errors returned by Security.Open. Callers drop such packets; ErrAuth is the
// one to count as an authentication failure.
var (
	ErrAuth         = errors.New("wire: packet failed authentication with every key in the keyring")
	ErrPlainRefused = errors.New("wire: plain packet refused: encryption is on")
	ErrEncrypted    = errors.New("wire: encrypted packet received but no keyring is configured")
	ErrEnvelope     = errors.New("wire: unknown envelope byte")
	ErrShort        = errors.New("wire: packet too short")
)

// Keyring is an ordered set of AES keys; the first is the primary, used to
// seal. It is safe for concurrent use.
type Keyring struct {
	mu   sync.RWMutex
	keys [][]byte
	aead []cipher.AEAD
}

// NewKeyring returns a keyring whose primary key is primary, followed by
// others (tried in order when opening). Each key must be 16, 24 or 32 bytes;
// duplicates are rejected.
func NewKeyring(primary []byte, others ...[]byte) (*Keyring, error) {
	k := &Keyring{}
	for _, key := range append([][]byte{primary}, others...) {
		if err := k.AddKey(key); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	switch len(key) {
	case 16, 24, 32:
	default:
		return nil, fmt.Errorf("wire: key is %d bytes, want 16, 24 or 32 (AES-128, -192, -256)", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("wire: %w", err)
	}
	return cipher.NewGCM(block)
}

func (k *Keyring) index(key []byte) int {
	for i, have := range k.keys {
		if subtle.ConstantTimeCompare(have, key) == 1 {
			return i
		}
	}
	return -1
}

// AddKey appends key to the keyring as a secondary key (or as the primary if
// the keyring is empty). Adding a key already present is an error.
func (k *Keyring) AddKey(key []byte) error {
	a, err := newAEAD(key)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.index(key) >= 0 {
		return errors.New("wire: key already in keyring")
	}
	k.keys = append(k.keys, append([]byte(nil), key...))
	k.aead = append(k.aead, a)
	return nil
}

// UseKey makes key, which must already be in the keyring, the primary key.
func (k *Keyring) UseKey(key []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := k.index(key)
	if i < 0 {
		return errors.New("wire: UseKey: key not in keyring")
	}
	k.keys[0], k.keys[i] = k.keys[i], k.keys[0]
	k.aead[0], k.aead[i] = k.aead[i], k.aead[0]
	return nil
}

// RemoveKey removes a secondary key. The primary key cannot be removed: make
// another key primary first.
func (k *Keyring) RemoveKey(key []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := k.index(key)
	switch {
	case i < 0:
		return errors.New("wire: RemoveKey: key not in keyring")
	case i == 0:
		return errors.New("wire: RemoveKey: cannot remove the primary key")
	}
	k.keys = append(k.keys[:i], k.keys[i+1:]...)
	k.aead = append(k.aead[:i], k.aead[i+1:]...)
	return nil
}

// Keys returns copies of the keys, primary first.
func (k *Keyring) Keys() [][]byte {
	k.mu.RLock()
	defer k.mu.RUnlock()
	out := make([][]byte, len(k.keys))
	for i, key := range k.keys {
		out[i] = append([]byte(nil), key...)
	}
	return out
}

// Replace makes the keyring hold exactly keys, keys[0] primary, in one step
// (what a reload of a key file does). keys must be non-empty, valid and
// distinct; on error the keyring is unchanged.
func (k *Keyring) Replace(keys [][]byte) error {
	if len(keys) == 0 {
		return errors.New("wire: Replace: no key")
	}
	fresh, err := NewKeyring(keys[0], keys[1:]...)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys, k.aead = fresh.keys, fresh.aead
	return nil
}

// Len returns the number of keys.
func (k *Keyring) Len() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.keys)
}

// ParseKey decodes a key written as hex (32, 48 or 64 hex digits, surrounding
// white space ignored), the format of fdswim's --key and key files.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	key, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("wire: key is not hex: %w", err)
	}
	if _, err := newAEAD(key); err != nil {
		return nil, err
	}
	return key, nil
}
