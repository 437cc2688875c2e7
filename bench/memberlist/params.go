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
	// by hex digits of a SHA-256 of the member's index, cut to the length,
	// or, with NameStyle "host", a host name.
	NameLen int
	// NameStyle is how names longer than 3 bytes are made: "hex" (the
	// default; memberlist's LZW compression finds nothing to shorten in
	// them) or "host": names that share their text, as the host names of
	// one cluster do (ip-10-0-0-7.eu-west-1.compute.internal.node.dc1...),
	// cut to NameLen (at least 14 bytes, so that the member's number is in).
	NameStyle string
}

// hostSuffix extends a host-style name (Params.NameStyle) as far as it
// must go.
const hostSuffix = ".eu-west-1.compute.internal.node.dc1.consul.svc.cluster.local.example.com"

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
	if p.NameStyle == "host" {
		name = fmt.Sprintf("ip-10-0-%d-%d", i/256, i%256)
		for len(name) < p.NameLen {
			name += hostSuffix
		}
		return name[:p.NameLen]
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
