package swim

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("swim: invalid config")

// MinPushPullInterval is the shortest PushPullInterval other than 0 (off)
// that a member with the given ProbeInterval accepts: one protocol
// period, or DefaultPushPullInterval when the period is longer (so that
// the default stays valid whatever the period). A shorter interval makes
// every Tick due an exchange that announces the next one as soon: the
// member spins.
func MinPushPullInterval(probeInterval time.Duration) time.Duration {
	return min(probeInterval, DefaultPushPullInterval)
}

// normalize applies the defaults to c and checks it; the error names the
// first field found wrong.
func (c *Config) normalize() error {
	for _, step := range []func() error{c.checkIdentity, c.normalizeTimes, c.normalizeSizes, c.normalizeLimits} {
		if err := step(); err != nil {
			return err
		}
	}
	if c.PeerDetector == nil {
		c.PeerDetector = DefaultPeerDetectorFor(c.ProbeInterval)
	}
	if c.RTTEstimator == nil {
		k := c.RTTDeviations
		c.RTTEstimator = func() (RTTEstimator, error) { return newJacobsonRTT(k) }
	}
	return c.checkTimers()
}

// configError is an error wrapping ErrConfig.
func configError(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, a...)...)
}

// optDuration sets *p to a pointer to its value, or to def when nil, and
// checks that it is not negative.
func optDuration(name string, p **time.Duration, def time.Duration) error {
	v := detector.OrDefault(*p, def)
	if v < 0 {
		return configError("%s %v is negative", name, v)
	}
	*p = &v
	return nil
}

// optInt is optDuration for a count.
func optInt(name string, p **int, def int) error {
	v := detector.OrDefault(*p, def)
	if v < 0 {
		return configError("%s %d is negative", name, v)
	}
	*p = &v
	return nil
}

// checkIdentity checks the member's node, mode and signing key.
func (c *Config) checkIdentity() error {
	if c.Self.ID == "" {
		return configError("Self.ID is empty")
	}
	if c.Self.Addr == "" {
		return configError("Self.Addr is empty: the other members send to it, and refuse updates naming a member without an address")
	}
	if len(c.Self.ID) > MaxIDLen {
		return configError("Self.ID of %d bytes, longer than %d (MaxIDLen)", len(c.Self.ID), MaxIDLen)
	}
	if len(c.Self.Addr) > MaxAddrLen {
		return configError("Self.Addr of %d bytes, longer than %d (MaxAddrLen)", len(c.Self.Addr), MaxAddrLen)
	}
	if c.ValidAddr != nil {
		if err := c.ValidAddr(c.Self.Addr); err != nil {
			return configError("Self.Addr %q: %v", c.Self.Addr, err)
		}
	}
	if c.Mode > ModeSWIM {
		return configError("unknown Mode %d", c.Mode)
	}
	if n := len(c.RingKey); n != 0 && (n < 16 || n > 64) {
		return configError("RingKey is %d bytes, want 16 to 64 (a secret shared by the group)", n)
	}
	if c.SigningKey != nil && len(c.SigningKey) != ed25519.PrivateKeySize {
		return configError("SigningKey is %d bytes, want %d (an ed25519.PrivateKey)", len(c.SigningKey), ed25519.PrivateKeySize)
	}
	return nil
}

// normalizeTimes applies the defaults of the durations and checks them.
func (c *Config) normalizeTimes() error {
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"ProbeInterval", &c.ProbeInterval, DefaultProbeInterval},
		{"ProbeTimeout", &c.ProbeTimeout, DefaultProbeTimeout},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
		if *d.v < 0 {
			return configError("%s %v is negative", d.name, *d.v)
		}
	}
	if c.ProbeTimeout > c.ProbeInterval {
		return configError("ProbeTimeout %v exceeds ProbeInterval %v", c.ProbeTimeout, c.ProbeInterval)
	}
	for _, d := range []struct {
		name string
		p    **time.Duration
		def  time.Duration
	}{
		{"ReconnectInterval", &c.ReconnectInterval, DefaultReconnectInterval},
		{"PushPullInterval", &c.PushPullInterval, DefaultPushPullInterval},
		{"GossipInterval", &c.GossipInterval, DefaultGossipInterval},
		{"PauseGuard", &c.PauseGuard, c.ProbeTimeout},
		{"MinProbeTimeout", &c.MinProbeTimeout, c.ProbeTimeout / 5},
		{"DeadRetention", &c.DeadRetention, DefaultDeadRetention},
		{"DeadReclaimTime", &c.DeadReclaimTime, 0},
	} {
		if err := optDuration(d.name, d.p, d.def); err != nil {
			return err
		}
	}
	if pp, floor := *c.PushPullInterval, MinPushPullInterval(c.ProbeInterval); pp > 0 && pp < floor {
		return configError("PushPullInterval %v is shorter than %v: want 0 (off) or at least one protocol period (ProbeInterval %v), or %v when that is longer",
			pp, floor, c.ProbeInterval, DefaultPushPullInterval)
	}
	if c.MaxProbeTimeout == 0 {
		c.MaxProbeTimeout = c.ProbeTimeout
	}
	if c.MaxProbeTimeout < *c.MinProbeTimeout || c.MaxProbeTimeout > c.ProbeInterval {
		return configError("need 0 <= MinProbeTimeout (%v) <= MaxProbeTimeout (%v) <= ProbeInterval (%v)",
			*c.MinProbeTimeout, c.MaxProbeTimeout, c.ProbeInterval)
	}
	if c.RTTDeviations == 0 {
		c.RTTDeviations = DefaultRTTDeviations
	}
	if !(c.RTTDeviations > 0) {
		return configError("RTTDeviations %v is not positive", c.RTTDeviations)
	}
	return nil
}

// normalizeSizes applies the defaults of the multipliers and sizes and
// checks them.
func (c *Config) normalizeSizes() error {
	for _, d := range []struct {
		name string
		v    *int
		def  int
	}{
		{"RetransmitMult", &c.RetransmitMult, DefaultRetransmitMult},
		{"SuspicionMult", &c.SuspicionMult, DefaultSuspicionMult},
		{"SuspicionMaxTimeoutMult", &c.SuspicionMaxTimeoutMult, DefaultSuspicionMaxTimeoutMult},
		{"MaxLocalHealthMultiplier", &c.MaxLocalHealthMultiplier, DefaultMaxLocalHealthMultiplier},
		{"MaxPacketSize", &c.MaxPacketSize, DefaultMaxPacketSize},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
		if *d.v < 0 {
			return configError("%s %d is negative", d.name, *d.v)
		}
	}
	if c.MaxStateSize == 0 {
		c.MaxStateSize = DefaultMaxStateSize
	}
	if c.MaxQueuedBroadcasts == 0 {
		c.MaxQueuedBroadcasts = DefaultMaxQueuedBroadcasts
	}
	if c.MaxStateSize < 0 || c.MaxQueuedBroadcasts < 0 || c.BroadcastBudget < 0 {
		return configError("MaxStateSize %d, MaxQueuedBroadcasts %d and BroadcastBudget %d must not be negative",
			c.MaxStateSize, c.MaxQueuedBroadcasts, c.BroadcastBudget)
	}
	return nil
}

// normalizeLimits applies the defaults of the metadata, versions, view and
// pull bounds and counts, and checks them.
func (c *Config) normalizeLimits() error {
	if len(c.Meta) > MaxMetaLen {
		return fmt.Errorf("%w: %w: %d bytes", ErrConfig, ErrMetaTooLarge, len(c.Meta))
	}
	c.Meta = slices.Clone(c.Meta)
	if c.Versions.IsZero() {
		c.Versions = DefaultVersions
	}
	if c.Versions.Min == 0 || c.Versions.Min > c.Versions.Max {
		return configError("Versions %d..%d, want 1 ≤ Min ≤ Max", c.Versions.Min, c.Versions.Max)
	}
	if c.MaxMembers == 0 {
		c.MaxMembers = DefaultMaxMembers
	}
	if c.PullsPerSender == 0 {
		c.PullsPerSender = DefaultPullsPerSender
	}
	if c.PullsPerPeriod == 0 {
		c.PullsPerPeriod = DefaultPullsPerPeriod
	}
	if c.PullsPerSender < 0 || c.PullsPerPeriod < 0 {
		return configError("PullsPerSender %d and PullsPerPeriod %d must not be negative", c.PullsPerSender, c.PullsPerPeriod)
	}
	if c.MaxMembers < 2 {
		return configError("MaxMembers %d leaves no room for another member", c.MaxMembers)
	}
	for _, d := range []struct {
		name string
		p    **int
		def  int
	}{
		{"IndirectChecks", &c.IndirectChecks, DefaultIndirectChecks},
		{"GossipFanout", &c.GossipFanout, DefaultGossipFanout},
		{"SuspicionConfirmations", &c.SuspicionConfirmations, max(c.SuspicionMult-2, 0)},
	} {
		if err := optInt(d.name, d.p, d.def); err != nil {
			return err
		}
	}
	if c.MaxPacketSize < 256 {
		return configError("MaxPacketSize %d is below 256 bytes", c.MaxPacketSize)
	}
	if c.WireOverhead < 0 || c.WireOverhead >= c.MaxPacketSize {
		return configError("WireOverhead %d: want 0 to %d bytes (below MaxPacketSize)", c.WireOverhead, c.MaxPacketSize-1)
	}
	return nil
}

// settings is the configuration a Member runs with: Config after
// normalize, with its optional fields resolved to plain values, which
// shadow Config's pointers.
type settings struct {
	Config
	MinProbeTimeout        time.Duration
	IndirectChecks         int
	SuspicionConfirmations int
	GossipFanout           int
	GossipInterval         time.Duration
	PauseGuard             time.Duration
	ReconnectInterval      time.Duration
	PushPullInterval       time.Duration
	DeadRetention          time.Duration
	DeadReclaimTime        time.Duration
}

// resolve returns the settings of c, normalized: every optional field set.
func resolve(c Config) settings {
	return settings{Config: c,
		MinProbeTimeout: *c.MinProbeTimeout, IndirectChecks: *c.IndirectChecks,
		SuspicionConfirmations: *c.SuspicionConfirmations, GossipFanout: *c.GossipFanout,
		GossipInterval: *c.GossipInterval, PauseGuard: *c.PauseGuard,
		ReconnectInterval: *c.ReconnectInterval, PushPullInterval: *c.PushPullInterval,
		DeadRetention: *c.DeadRetention, DeadReclaimTime: *c.DeadReclaimTime}
}

// config returns the settings as a Config, with fresh pointers (the caller
// may write through them without touching the member) and meta as its
// metadata.
func (s *settings) config(meta string) Config {
	c := s.Config
	c.MinProbeTimeout, c.PauseGuard = new(s.MinProbeTimeout), new(s.PauseGuard)
	c.ReconnectInterval, c.PushPullInterval = new(s.ReconnectInterval), new(s.PushPullInterval)
	c.IndirectChecks, c.GossipFanout = new(s.IndirectChecks), new(s.GossipFanout)
	c.SuspicionConfirmations, c.GossipInterval = new(s.SuspicionConfirmations), new(s.GossipInterval)
	c.DeadRetention, c.DeadReclaimTime = new(s.DeadRetention), new(s.DeadReclaimTime)
	c.Meta = []byte(meta)
	c.RingKey = slices.Clone(c.RingKey)
	return c
}
