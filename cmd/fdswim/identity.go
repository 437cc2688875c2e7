package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// identityFileMax bounds what loadIdentity reads: a 64-character hex seed,
// a newline and a comment line fit well within it.
const identityFileMax = 4096

// loadIdentity returns the Ed25519 signing key kept in path (--identity-file):
// the key's 32-byte seed in hex on the first line that is not empty or a
// # comment. A missing file is created (mode 0600, never overwriting) with a
// new key from crypto/rand, and created reports it. The key signs this
// member's own Alive and leave updates (swim.Config.SigningKey), so it must
// survive restarts: a member back with another key is refused as a
// conflicting claim of its own ID until the group forgets the old entry.
func loadIdentity(path string) (key ed25519.PrivateKey, created bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		seed := make([]byte, ed25519.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			return nil, false, fmt.Errorf("--identity-file %s: %w", path, err)
		}
		body := "# fdswim agent identity: Ed25519 seed (hex). Keep it across restarts; never share it.\n" + hex.EncodeToString(seed) + "\n"
		w, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, false, fmt.Errorf("--identity-file %s: %w", path, err)
		}
		_, err = w.WriteString(body)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(path)
			return nil, false, fmt.Errorf("--identity-file %s: %w", path, err)
		}
		return ed25519.NewKeyFromSeed(seed), true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("--identity-file %s: %w", path, err)
	}
	defer f.Close()
	buf := make([]byte, identityFileMax+1)
	n, err := f.Read(buf)
	for err == nil && n < len(buf) {
		var m int
		m, err = f.Read(buf[n:])
		n += m
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("--identity-file %s: %w", path, err)
	}
	if n > identityFileMax {
		return nil, false, fmt.Errorf("--identity-file %s: larger than %d bytes, want one hex Ed25519 seed", path, identityFileMax)
	}
	for i, line := range strings.Split(string(buf[:n]), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		seed, err := hex.DecodeString(line)
		if err != nil || len(seed) != ed25519.SeedSize {
			return nil, false, fmt.Errorf("--identity-file %s:%d: want %d hex digits (an Ed25519 seed), got %d characters", path, i+1, 2*ed25519.SeedSize, len(line))
		}
		return ed25519.NewKeyFromSeed(seed), false, nil
	}
	return nil, false, fmt.Errorf("--identity-file %s: no key line (want %d hex digits)", path, 2*ed25519.SeedSize)
}
