package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/fdkit/fdkit/swim"
)

// Params are the protocol parameters given to both libraries. The defaults
// are memberlist's DefaultLANConfig, which are also swim's defaults.
type Params struct {
	ProbeInterval time.Duration
	ProbeTimeout  time.Duration
	Key           []byte // nil: both run unencrypted
	// AllSeeds makes every member join through every earlier member,
	// memberlist's worst case (one TCP state exchange per address, in
	// turn); by default every member joins through member 0 only, as
	// memberlist's users join through one seed or one DNS name.
	AllSeeds bool
	// NameLen is the length in bytes of every member's name (both
	// libraries carry names in their probes; see README.md, “Bytes and
	// names”): 3 (the default) gives m00, m01...; more gives m00- followed
	// by hex digits of a SHA-256 of the member's index, cut to the length.
	NameLen int
}

// MaxNameLen is the longest -name-len: both libraries take names of up to
// 255 bytes (swim.MaxIDLen).
const MaxNameLen = 255

// memberName returns member i's name, p.NameLen bytes long (3 or less:
// m00, m01..., longer from member 100 on).
func (p Params) memberName(i int) string {
	name := fmt.Sprintf("m%02d", i)
	if p.NameLen <= len(name) {
		return name
	}
	name += "-"
	h := sha256.Sum256([]byte(name))
	for len(name) < p.NameLen {
		name += hex.EncodeToString(h[:])
		h = sha256.Sum256(h[:])
	}
	return name[:p.NameLen]
}

func (p Params) applyML(c *memberlist.Config) {
	c.ProbeInterval = p.ProbeInterval
	c.ProbeTimeout = p.ProbeTimeout
	if p.Key != nil {
		c.SecretKey = p.Key
	}
}

func (p Params) swimConfig(mode swim.Mode) swim.Config {
	return swim.Config{Mode: mode, ProbeInterval: p.ProbeInterval, ProbeTimeout: p.ProbeTimeout}
}
