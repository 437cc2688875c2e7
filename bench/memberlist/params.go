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
	// SingleSeed makes every member join through member 0 only, instead
	// of through every earlier member.
	SingleSeed bool
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
