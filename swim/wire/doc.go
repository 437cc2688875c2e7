// Package wire is the on-the-wire format of fdkit's SWIM: the binary
// encoding of protocol messages (ping, ack, nack, ping-req) with their
// piggybacked membership updates, and the security envelope that
// authenticates and encrypts every packet.
//
// # Packet layout
//
// Every UDP datagram is an envelope:
//
//	plain:      0x01 | payload
//	encrypted:  0x02 | nonce (12 bytes) | AES-GCM(timestamp | payload) with its 16-byte tag
//	labelled:   0x03 | label length (1 byte) | label | plain, encrypted or bound envelope
//	bound:      0x04 | nonce (12 bytes) | AES-GCM(timestamp | payload) with its 16-byte tag,
//	            the receiver's ID authenticated with the header and not sent
//
// A bound packet opens only at the member whose ID it was sealed with
// (CodecConfig.LocalID), so its payload need not name its receiver. It
// is the ack to a sealed probe ping that asks for it (packet tag 8), and
// names neither member: its receiver knows whom it pinged with that
// sequence number (Codec.DecodeDatagram).
//
// A cluster label (Security.Label, memberlist's Label) keeps groups that
// share a network apart: a member refuses a packet whose label differs
// from its own, or that has none when it has one (ErrLabel). When sealed,
// the label header is authenticated with the envelope byte. While
// encryption is turned on in a running group, a member with a keyring may
// send plain packets and accept both (Security.SetSendPlain,
// Security.SetAcceptPlain).
//
// The envelope byte is authenticated as additional data, so a packet cannot
// be downgraded from encrypted to plain or have its header changed without
// failing authentication. Encryption uses AES-GCM from the standard library
// (crypto/aes, crypto/cipher) with a fresh random nonce per packet and keys
// of 16, 24 or 32 bytes (AES-128, -192, -256). A Keyring holds several keys
// for rotation: packets are sealed with the primary key and opened by trying
// every key, so a cluster rotates by (1) installing the new key everywhere,
// (2) making it primary everywhere, (3) removing the old key. No key
// identifier is sent, so a packet reveals nothing about which key sealed it.
// Nonces are random, so NIST SP 800-38D §8.3 limits one key to 2^32 sealed
// packets in the whole cluster (beyond that a repeated nonce, which would
// expose the authentication key, becomes more likely than 2^-32): rotate
// before then. At 2 sealed packets per member per second (the order of the
// steady-state rates in docs/experiments.md), a 1,000-member cluster reaches
// it in 25 days (2^32 / 2,000 per second).
// Sealed packets are protected against replay: the sealed payload starts
// with the sealer's timestamp, and a Codec accepts each sender's timestamps
// once, within a sliding window, never from before its own start, and
// within a clock-skew bound (see ReplayConfig and docs/algorithms.md,
// “SWIM: replay protection for sealed packets”). Plain packets have no
// such protection.
// Plain packets are accepted only by a Security configured with Plain, the
// explicit opt-out; an encrypted member drops them.
//
// The payload is the message encoding described in encode.go: a version
// byte, a message type, the message fields as unsigned varints and
// length-prefixed strings, then the piggybacked updates. Decoding never
// panics: malformed, oversized, truncated or unknown-version input returns
// an error wrapping one of the sentinel errors below.
package wire
