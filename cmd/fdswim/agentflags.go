package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/internal/flagcheck"
	"github.com/fdkit/fdkit/spec"
	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
	"github.com/spf13/pflag"
)

type agentFlags struct {
	id, bind, advertise, httpAddr, keyFile, mode, logLevel string
	identityFile, streamBind, metaFile                     string
	meta                                                   []string // --meta key=value pairs
	wireVersion                                            int
	noStream, noStreamPing                                 bool
	streamTimeout                                          time.Duration
	maxStreamConns                                         int
	join, keys                                             []string
	plain                                                  bool
	probeInterval, probeTimeout, joinTimeout, leaveTimeout time.Duration
	pushPull, gossipInterval                               time.Duration
	pushPullSet                                            bool // --push-pull given (it then overrides --preset's)
	maxPacket, gossipFanout                                int
	deadReclaim                                            time.Duration
	suspicion                                              string       // per-peer detector spec ("" = swim's default)
	preset                                                 *swim.Config // --preset's settings, nil for none
	presetName                                             string       // --preset's value
	// intervalFrom and timeoutFrom say where --probe-interval's and
	// --probe-timeout's values came from when the flags were not given
	// (fromPreset, fromDefault); "" when given.
	intervalFrom, timeoutFrom string
	envelope                  envelopeFlags
}

// parseAgentFlags parses the arguments of `fdswim agent`. It returns nil
// and no error when they ask for help (the usage is printed).
func parseAgentFlags(args []string, stderr io.Writer) (*agentFlags, error) {
	f := new(agentFlags)
	fs := pflag.NewFlagSet("fdswim agent", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, agentUsage)
		fs.PrintDefaults()
	}
	preset := f.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, nil
		}
		return nil, err
	}
	// An empty value given on purpose (--join "$SEED" with SEED unset) is
	// refused: the agent would start a group of its own, or run without
	// the identity, keys or metadata asked for.
	for _, name := range []string{"join", "identity-file", "key-file", "meta-file"} {
		if fl := fs.Lookup(name); fl.Changed && (fl.Value.String() == "" || fl.Value.String() == "[]") {
			return nil, fmt.Errorf("--%s: empty value (omit the flag to do without it)", name)
		}
	}
	if !fs.Changed("probe-interval") {
		f.intervalFrom = fromDefault
	}
	if !fs.Changed("probe-timeout") {
		f.timeoutFrom = fromDefault
	}
	if *preset != "" {
		p, ok := swimPreset(*preset)
		if !ok {
			return nil, fmt.Errorf("--preset %q: want one of %s", *preset, strings.Join(swimPresetNames(), ", "))
		}
		f.preset, f.presetName = &p, *preset
		if !fs.Changed("probe-interval") {
			f.probeInterval, f.intervalFrom = p.ProbeInterval, fromPreset
		}
		if !fs.Changed("probe-timeout") {
			f.probeTimeout, f.timeoutFrom = p.ProbeTimeout, fromPreset
		}
		if !fs.Changed("mode") {
			f.mode = "lifeguard"
		}
	}
	if f.suspicion != "" && (f.mode == "lifeguard" || f.mode == "swim") {
		from := ""
		if !fs.Changed("mode") {
			from = fmt.Sprintf(" (set by --preset %s)", *preset)
		}
		return nil, fmt.Errorf("--suspicion chooses the per-peer detector of --mode detector; --mode %s%s has none: give --mode detector, or drop --suspicion", f.mode, from)
	}
	if fs.Changed("id") && f.id == "" {
		return nil, errors.New("--id is empty: give a member ID, or leave --id out to use the advertised address")
	}
	f.pushPullSet = fs.Changed("push-pull")
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return f, nil
}

// register defines the flags of `fdswim agent` on fs, writing into f, and
// returns --preset's value.
func (f *agentFlags) register(fs *pflag.FlagSet) *string {
	fs.StringVar(&f.id, "id", "", "member ID, kept across restarts (default: the advertised address)")
	fs.StringVar(&f.bind, "bind", "127.0.0.1:7946", "UDP address to listen on (ip:port)")
	fs.StringVar(&f.advertise, "advertise", "", "address other members send to (default: the bound address)")
	fs.StringSliceVar(&f.join, "join", nil, "host:port of a member to join through, host an IP address or a name resolved at each attempt (repeatable or comma-separated); attempts repeat with a growing wait until --join-timeout")
	fs.StringSliceVar(&f.keys, "key", nil, "AES key in hex (repeatable; the first seals, all open)")
	fs.StringVar(&f.keyFile, "key-file", "", "file with hex AES keys, one per line (first seals); # comments allowed")
	fs.BoolVar(&f.plain, "plain", false, "send unencrypted, unauthenticated packets (explicit opt-out)")
	f.envelope.register(fs)
	fs.StringVar(&f.identityFile, "identity-file", "", "file holding this member's Ed25519 signing key (created, mode 0600, when missing): signs its own Alive and leave updates so that no other key holder can raise or forge them; keep it across restarts; every member of the group must use one (empty: unsigned updates)")
	fs.StringArrayVar(&f.meta, "meta", nil, "this member's metadata as key=value (repeatable; sent as sorted URL query pairs, at most 512 bytes in all; shown by every member)")
	fs.StringVar(&f.metaFile, "meta-file", "", "file of this member's metadata, one key=value per line (blank lines and # comments allowed), encoded as --meta's; SIGHUP re-reads it and disseminates the change (excludes --meta)")
	flagcheck.Var(fs, &f.wireVersion, "wire-version", "", int(wire.Version), int(wire.MinVersion), int(wire.Version), "a wire format, 1 or 2", "wire format written: 2 (default) or 1 for a group that still has members reading only format 1 (no metadata, no application data); every format is read")
	fs.StringVar(&f.httpAddr, "http", "", "serve /members, /metrics and /healthz on this address (ip:port; empty: off)")
	fs.StringVar(&f.mode, "mode", "detector", "protocol mode: detector (SWIM + Lifeguard + per-peer detectors), lifeguard, swim")
	flagcheck.Var(fs, &f.probeInterval, "probe-interval", "", time.Second, 1, time.Hour, "a positive duration up to 1h", "base protocol period")
	flagcheck.Var(fs, &f.probeTimeout, "probe-timeout", "", 500*time.Millisecond, 1, time.Hour, "a positive duration up to 1h", "base direct probe timeout")
	flagcheck.Var(fs, &f.joinTimeout, "join-timeout", "", 10*time.Second, 0, math.MaxInt64, "a duration ≥ 0 (0: keep trying)", "deadline for --join: retry with backoff (0.5 s doubling to 8 s) until a member answers or this long has passed (0: keep trying until interrupted)")
	flagcheck.Var(fs, &f.leaveTimeout, "leave-timeout", "", 2*time.Second, 0, time.Hour, "a duration from 0 to 1h", "how long to keep gossiping the leave on shutdown")
	flagcheck.Var(fs, &f.maxPacket, "max-packet-size", "", wire.DefaultMaxPacketSize, 128, 65507, "a size in bytes from 128 to 65507 (the largest UDP payload)", "largest datagram in bytes, envelope included")
	flagcheck.Var(fs, &f.gossipFanout, "gossip-fanout", "", swim.DefaultGossipFanout, 0, 1024, "a count from 0 (off) to 1024", "eager dissemination: random members a new accusation, refutation or leave is pushed to at once (detector and lifeguard modes; 0 turns it off)")
	flagcheck.Var(fs, &f.gossipInterval, "gossip-interval", "", swim.DefaultGossipInterval, 0, time.Minute, "a duration from 0 (off) to 1m",
		"pace of the drain loop: while updates wait to be disseminated, every interval they go in one gossip packet to each of --gossip-fanout random members (declarations every second round; memberlist's GossipInterval); 0 leaves them to ride on pings and acks only")
	flagcheck.Var(fs, &f.pushPull, "push-pull", "", swim.DefaultPushPullInterval, 0, 24*time.Hour, "a duration from 0 (off) to 24h",
		"base interval of anti-entropy: a digest of the view is sent to one random member, and whole views are exchanged when the digests differ; scaled by ceil(n/32) for n members; at least --probe-interval, or 30s when that is longer (0 turns it off; with --preset, the preset's unless given)")
	flagcheck.Var(fs, &f.deadReclaim, "dead-reclaim-time", "", 0, 0, swim.DefaultDeadRetention, "a duration from 0 to 15m",
		"how long a member must have been dead or left before a node on another address may take over its ID (a member restarted on a new address or port), from 0 (as soon as it is declared dead) to 15m (not before the dead entry is forgotten, 15 min after); a live member's ID is never taken (swim.Config.DeadReclaimTime)")
	fs.StringVar(&f.streamBind, "stream-bind", "", "TCP address of the stream listener (ip:port; default: --bind's address and port, on TCP, where the other members dial: change it only behind a port mapping)")
	fs.BoolVar(&f.noStream, "no-stream", false, "turn the stream path off: no TCP listener, no TCP fallback pings (a member whose UDP is lost is then suspected), views sent as datagrams only")
	fs.BoolVar(&f.noStreamPing, "no-stream-ping", false, "keep the stream path but send no TCP fallback pings (memberlist's DisableTcpPings); pings from others are still answered")
	flagcheck.Var(fs, &f.streamTimeout, "stream-timeout", "", transport.DefaultStreamTimeout, time.Millisecond, time.Hour, "a duration from 1ms to 1h", "whole life of one TCP stream, dial included; a slower peer is cut")
	flagcheck.Var(fs, &f.maxStreamConns, "max-stream-conns", "", transport.DefaultStreamMaxConns, 1, 65536, "a count from 1 to 65536", "inbound TCP streams served at once (a quarter of them from one IP address); a new one beyond takes the slot of one stalled on its peer (from an address holding more than two and over a quarter of its share first, then one from an address that is no live member's, then one without a whole frame, then the one idle longest since its last byte), else it is closed at once (fdswim_streams_evicted_total, fdswim_streams_refused_total)")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn, error")
	fs.StringVar(&f.suspicion, "suspicion", "", "detector mode: the per-peer detector that suspicion comes from, in the textual form of docs/detectors.md, e.g. 'phi-normal(threshold=8, window=100)' or 'phi-akka(threshold=10, pause=3s)' (default: swim.DefaultPeerDetectorFor(--probe-interval), φ normal model with a window of 32, a σ floor of a tenth of the period and a pause of three periods)")
	return fs.String("preset", "", "start from a system's documented probe and suspicion settings: "+strings.Join(swimPresetNames(), ", ")+" (mode lifeguard unless --mode is given; --probe-interval and --probe-timeout override)")
}

// config checks the flags and turns them into the agent's configuration,
// reading the metadata and key files. Last, once everything else is
// valid, it loads the identity file, creating it when it is missing.
func (f *agentFlags) config(stderr io.Writer) (agent.Config, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return agent.Config{}, fmt.Errorf("--log-level: %w", err)
	}
	if ap, err := netip.ParseAddrPort(f.advertise); err == nil && (ap.Addr().IsUnspecified() || ap.Port() == 0) {
		// The agent's own check names its Config field, not the flag.
		return agent.Config{}, fmt.Errorf("--advertise %s: want the ip:port the other members send to, not a wildcard address or port 0 (those bind; --bind takes them)", f.advertise)
	}
	// The agent's and the protocol's own checks name their Config fields;
	// these name the flags.
	for _, a := range []struct{ flag, addr string }{{"--bind", f.bind}, {"--advertise", f.advertise}, {"--stream-bind", f.streamBind}} {
		if _, err := netip.ParseAddrPort(a.addr); a.addr != "" && err != nil {
			return agent.Config{}, fmt.Errorf("%s %q: want ip:port (an IP address, not a host name): %w", a.flag, a.addr, err)
		}
	}
	if f.probeTimeout > f.probeInterval {
		return agent.Config{}, f.probeTimeoutError()
	}
	cfg := agent.Config{
		ID: swim.ID(f.id), Bind: f.bind, Advertise: f.advertise, Plain: f.plain,
		MaxPacketSize: f.maxPacket, LeaveTimeout: new(f.leaveTimeout), WireVersion: byte(f.wireVersion),
		DisableStream: f.noStream, DisableStreamProbes: f.noStreamPing, StreamBind: f.streamBind, StreamTimeout: f.streamTimeout, MaxStreamConns: f.maxStreamConns,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		Protocol: swim.Config{ProbeInterval: f.probeInterval, ProbeTimeout: f.probeTimeout, GossipFanout: new(f.gossipFanout),
			GossipInterval: new(f.gossipInterval), DeadReclaimTime: new(f.deadReclaim)},
	}
	var err error
	if cfg.Protocol.Meta, err = f.metadata(cfg.WireVersion); err != nil {
		return cfg, err
	}
	switch {
	case f.noStream && f.streamBind != "":
		return cfg, errors.New("--stream-bind names a TCP listener but --no-stream turns the stream path off; give one of them")
	case f.gossipFanout < 0:
		return cfg, fmt.Errorf("--gossip-fanout %d is negative (0 turns eager dissemination off)", f.gossipFanout)
	}
	if err := f.protocol(&cfg.Protocol); err != nil {
		return cfg, err
	}
	if cfg.Keys, err = f.readKeys(); err != nil {
		return cfg, err
	}
	if err := f.envelope.apply(&cfg); err != nil {
		return cfg, err
	}
	if f.identityFile != "" {
		k, created, err := loadIdentity(f.identityFile)
		if err != nil {
			return cfg, err
		}
		if created {
			cfg.Logger.Warn("created a new identity key (expected on a first start only)", "file", f.identityFile)
		}
		cfg.Protocol.SigningKey = k
	}
	return cfg, nil
}

// metadata is this member's metadata, from --meta or --meta-file, checked
// against the wire format written.
func (f *agentFlags) metadata(wireVersion byte) ([]byte, error) {
	meta, err := parseMeta(f.meta)
	if err != nil {
		return nil, err
	}
	if len(meta) > 0 && wireVersion < 2 {
		return nil, errors.New("--meta needs wire format 2: --wire-version 1 writes no metadata")
	}
	if f.metaFile == "" {
		return meta, nil
	}
	// Usage errors (exit status 2), as a bad file on SIGHUP is an error
	// that leaves the running member as it was.
	if len(f.meta) > 0 {
		return nil, usageError{errors.New("--meta and --meta-file both give this member's metadata: give one of them")}
	}
	if meta, err = readMetaFile(f.metaFile); err != nil {
		return nil, usageError{err}
	}
	if err := metaFitsWire(f.metaFile, meta, wireVersion); err != nil {
		return nil, usageError{err}
	}
	return meta, nil
}

// protocol sets the state machine's settings that come from --preset,
// --push-pull, --suspicion and --mode, and checks the durations.
func (f *agentFlags) protocol(pc *swim.Config) error {
	if p := f.preset; p != nil {
		pc.IndirectChecks, pc.RetransmitMult = p.IndirectChecks, p.RetransmitMult
		pc.SuspicionMult, pc.SuspicionMaxTimeoutMult = p.SuspicionMult, p.SuspicionMaxTimeoutMult
		pc.MaxLocalHealthMultiplier, pc.PushPullInterval = p.MaxLocalHealthMultiplier, p.PushPullInterval
	}
	if f.preset == nil || f.pushPullSet {
		// swim.Config's floor, said with the flags' names.
		if floor := swim.MinPushPullInterval(f.probeInterval); f.pushPull > 0 && f.pushPull < floor {
			return fmt.Errorf("--push-pull %v: want 0 (off) or at least one protocol period (--probe-interval %v), or %v when that is longer",
				f.pushPull, f.probeInterval, swim.DefaultPushPullInterval)
		}
		pc.PushPullInterval = new(f.pushPull)
	}
	if f.suspicion != "" {
		s, err := spec.Parse(f.suspicion)
		if err != nil {
			return fmt.Errorf("--suspicion: %w", err)
		}
		if _, err := s.New(); err != nil {
			return fmt.Errorf("--suspicion: %w", err)
		}
		pc.PeerDetector = func() (detector.Detector, error) { return s.New() }
	}
	for name, d := range map[string]time.Duration{"--probe-interval": f.probeInterval, "--probe-timeout": f.probeTimeout,
		"--join-timeout": f.joinTimeout, "--leave-timeout": f.leaveTimeout} {
		if d < 0 {
			return fmt.Errorf("%s %v is negative", name, d)
		}
	}
	switch f.mode {
	case "detector":
		pc.Mode = swim.ModeDetector
	case "lifeguard":
		pc.Mode = swim.ModeLifeguard
	case "swim":
		pc.Mode = swim.ModeSWIM
	default:
		return fmt.Errorf("--mode %q: want detector, lifeguard or swim", f.mode)
	}
	return nil
}

// readKeys returns the keys of --key and --key-file, in that order, and
// checks them against --plain.
func (f *agentFlags) readKeys() ([][]byte, error) {
	var keys [][]byte
	for i, h := range f.keys {
		k, err := wire.ParseKey(h)
		if err != nil {
			return nil, fmt.Errorf("--key #%d: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	if f.keyFile != "" {
		ks, err := readKeyFile(f.keyFile)
		if err != nil {
			return nil, err
		}
		keys = append(keys, ks...)
	}
	switch {
	case f.plain && len(keys) > 0:
		return nil, errors.New("--plain excludes --key and --key-file")
	case !f.plain && len(keys) == 0:
		return nil, errors.New("no key: give --key or --key-file, or --plain to run unencrypted on purpose")
	}
	return keys, nil
}

// swimPreset returns the SWIM preset of that name (package spec).
func swimPreset(name string) (swim.Config, bool) {
	for _, p := range spec.SWIMPresets() {
		if p.Name == name {
			return p.Config, true
		}
	}
	return swim.Config{}, false
}

func swimPresetNames() []string {
	var names []string
	for _, p := range spec.SWIMPresets() {
		names = append(names, p.Name)
	}
	return names
}

// parseMeta turns --meta key=value pairs into the metadata bytes: URL query
// form, sorted by key (url.Values.Encode). Errors name the flag and the
// pair: a pair without '=', an empty or repeated key, more than
// swim.MaxMetaLen bytes in all.
func parseMeta(pairs []string) ([]byte, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	v := url.Values{}
	for _, p := range pairs {
		k, val, ok := strings.Cut(p, "=")
		switch {
		case !ok:
			return nil, fmt.Errorf("--meta %q: want key=value", p)
		case k == "":
			return nil, fmt.Errorf("--meta %q: the key is empty", p)
		case v.Has(k):
			return nil, fmt.Errorf("--meta %q: key %q given twice", p, k)
		}
		v.Set(k, val)
	}
	b := []byte(v.Encode())
	if len(b) > swim.MaxMetaLen {
		return nil, fmt.Errorf("--meta: %d bytes once encoded (%s…), at most %d", len(b), b[:32], swim.MaxMetaLen)
	}
	return b, nil
}
