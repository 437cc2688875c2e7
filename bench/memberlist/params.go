package main

import (
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
