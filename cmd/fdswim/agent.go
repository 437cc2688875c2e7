package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/fdkit/fdkit/internal/flagcheck"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"
	"golang.org/x/net/netutil"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/spec"
	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
	"github.com/fdkit/fdkit/swim/agent/promswim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

const agentUsage = `usage: fdswim agent [flags]

Runs one SWIM member over UDP until interrupted (SIGINT, SIGTERM), then
leaves the group gracefully. A TCP listener on the same port (--stream-bind
to move it, --no-stream to turn it off) carries the stream path: a TCP ping
when a probe's UDP ping times out, before suspecting, and views larger than
one datagram; it is sealed like the datagrams. Its output on stdout is log/slog text lines,
each with a timestamp (time=RFC 3339) and level; membership changes are:

  time=<t> level=INFO msg=event kind=<join|suspect|alive|dead|leave> id=<member> addr=<ip:port> incarnation=<n> from=<id> [meta=<metadata>]
  time=<t> level=INFO msg=event kind=update id=<member> addr=<ip:port> incarnation=<n> from=<id> meta=<metadata>
  time=<t> level=INFO msg=event kind=conflict id=<member> addr=<claimant ip:port> incarnation=0 from=<id> held=<ip:port kept>
  time=<t> level=INFO msg=event kind=stream-only id=<member> addr=<ip:port> incarnation=<n> from=<self>

(stream-only: the member answered only over TCP, its UDP probes failed; at
most one per member per minute, with a warning on stderr; update: the
member changed its metadata; meta= is shown on join, alive and update
events of members that have metadata)

and the others msg=agent (identity), msg=http, msg=joined, msg="keys
reloaded", msg="metadata reloaded", msg=stopped. Warnings and errors
(authentication failures, at most one line per 10 s; failed join attempts;
failed key and metadata reloads) go to stderr at --log-level.

Metadata: --meta key=value (repeatable) gives this member up to 512 bytes of
metadata, shown by every member in its events and in /members. It is sent
as the pairs in URL query form, sorted by key (zone=eu-1&role=db becomes
role=db&zone=eu-1), so any key or value can be given; keys are not empty
and not repeated. /members shows each member's metadata as sent ("meta")
and, when it parses as such pairs, as an object ("meta_pairs").

--meta-file F gives the same pairs in a file, one key=value per line (the
first '=' separates them; spaces around keys and values are dropped; blank
lines and lines starting with # are skipped), instead of --meta. SIGHUP
re-reads it: new metadata raises this member's incarnation and is
disseminated (the others print an update event), and stdout shows

  time=<t> level=INFO msg="metadata reloaded" meta_file=<F> bytes=<n> changed=<true|false>

A file that cannot be read or is not a regular file (a pipe, a device; a
symbolic link to a file is followed), a line without '=', an empty or
repeated key, more than 512 bytes once encoded, or metadata under
--wire-version 1 stops the agent at start (exit status 2, the message names the file and line);
on SIGHUP it is logged at ERROR on stderr and the metadata stays as it was.

Wire format: --wire-version 1 writes the format of fdkit before extension
fields (no metadata, no application data), for a group that still has
members reading only that format; every format is read whatever it says.

Packets are encrypted with AES-GCM: give the key with --key or --key-file
(hex, 32, 48 or 64 digits; several keys for rotation, the first seals), or
run unencrypted with --plain. With --key-file alone, SIGHUP reloads the file,
so keys rotate without a restart (with --key too it does not: the keys of
--key would be dropped). One SIGHUP reloads both the key file and the
--meta-file; with neither to reload, and during the leave, SIGHUP is
ignored.

--label L gives the group a cluster label (at most 255 bytes, memberlist's
Label): every packet and TCP frame carries it, packets with another label
or none are dropped and counted (fdswim_label_mismatches_total), so groups
sharing a network and a key stay apart. Every member needs the same label.

Turning encryption on in a running group takes three rolling restarts:
each member with --key (or --key-file) --accept-plain --send-plain (it
sends plain and reads both, so plain members still read it); then each
with --key --accept-plain (it seals and still reads plain); then, once
fdswim_plain_accepted_total stops growing on every member, each with --key
alone. --send-plain needs --accept-plain. With --http, the agent serves:

  /members   the view as JSON (state, incarnation, suspicion level, metadata
             and wire-format range per peer)
  /metrics   Prometheus metrics (fdswim_peer_suspicion_level and others)
  /healthz   200 while running

without authentication: keep --http on a loopback address (a warning is
printed otherwise). Idle connections are closed after 30 s, a client has 30 s
to read a response, and at most 64 connections are served at once.

Flags:
`

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
	envelope                                               envelopeFlags
}

func init() {
	subcommands["agent"] = subcommand{run: runAgent,
		help: "run one SWIM member over UDP (AES-GCM), print membership changes, serve /members and /metrics"}
}

// runAgent is the `fdswim agent` subcommand: args are the arguments after
// "agent". It returns when ctx is cancelled (main cancels it on SIGINT and
// SIGTERM), after leaving gracefully, or on error.
func runAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f agentFlags
	fs := pflag.NewFlagSet("fdswim agent", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, agentUsage)
		fs.PrintDefaults()
	}
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
	flagcheck.Var(fs, &f.maxStreamConns, "max-stream-conns", "", transport.DefaultStreamMaxConns, 1, 65536, "a count from 1 to 65536", "inbound TCP streams served at once; a new one beyond takes the slot of the oldest that has sent no frame yet (fdswim_streams_evicted_total), else it is closed at once (fdswim_streams_refused_total)")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn, error")
	fs.StringVar(&f.suspicion, "suspicion", "", "detector mode: the per-peer detector that suspicion comes from, in the textual form of docs/detectors.md, e.g. 'phi-normal(threshold=8, window=100)' or 'phi-akka(threshold=10, pause=3s)' (default: swim.DefaultPeerDetectorFor(--probe-interval), φ normal model with a window of 32, a σ floor of a tenth of the period and a pause of three periods)")
	preset := fs.String("preset", "", "start from a system's documented probe and suspicion settings: "+strings.Join(swimPresetNames(), ", ")+" (mode lifeguard unless --mode is given; --probe-interval and --probe-timeout override)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	if *preset != "" {
		p, ok := swimPreset(*preset)
		if !ok {
			return fmt.Errorf("--preset %q: want one of %s", *preset, strings.Join(swimPresetNames(), ", "))
		}
		f.preset = &p
		if !fs.Changed("probe-interval") {
			f.probeInterval = p.ProbeInterval
		}
		if !fs.Changed("probe-timeout") {
			f.probeTimeout = p.ProbeTimeout
		}
		if !fs.Changed("mode") {
			f.mode = "lifeguard"
		}
	}
	f.pushPullSet = fs.Changed("push-pull")
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg, err := f.config(stderr)
	if err != nil {
		return err
	}
	joinTo, err := parseJoin(f.join)
	if err != nil {
		return err
	}
	var httpLn net.Listener
	if f.httpAddr != "" {
		// Before the member starts, so that a bad --http never joins a
		// member to the group only to leave it again.
		if httpLn, err = net.Listen("tcp", f.httpAddr); err != nil {
			return fmt.Errorf("--http: %w", err)
		}
		defer httpLn.Close()
		if !isLoopback(httpLn.Addr()) {
			fmt.Fprintf(stderr, "fdswim agent: warning: --http %s listens on %s, not a loopback address: "+
				"/members and /metrics are served without authentication to anyone who can reach it; "+
				"bind 127.0.0.1 or put an authenticating proxy in front\n", f.httpAddr, httpLn.Addr())
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a, err := agent.Start(ctx, cfg)
	if err != nil {
		return err
	}
	if w := advertiseWarning(f.bind, f.advertise, transport.IsLocal); w != "" {
		cfg.Logger.Warn(w)
	}
	out := slog.New(slog.NewTextHandler(stdout, nil))
	events, _ := a.Subscribe(1024)
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for e := range events {
			attrs := []any{"kind", e.Kind.String(), "id", string(e.Node.ID), "addr", e.Node.Addr, "incarnation", uint64(e.Incarnation), "from", string(e.From)}
			if e.Kind == swim.EventConflict {
				attrs = append(attrs, "held", e.Held.Addr)
			}
			if e.Meta != "" || e.Kind == swim.EventUpdate {
				attrs = append(attrs, "meta", e.Meta)
			}
			out.Info("event", attrs...)
		}
	}()
	hup := &hupReload{keyring: a.Keyring(), metaFile: f.metaFile, meta: cfg.Protocol.Meta, wireVersion: cfg.WireVersion,
		setMeta: a.SetMeta, out: out, diag: cfg.Logger}
	if f.keyFile != "" {
		if len(f.keys) == 0 {
			hup.keyFile = f.keyFile
		} else {
			hup.keysFixed = true
		}
	}
	defer reloadOnHUP(ctx, hup)()
	out.Info("agent", "id", string(a.Self().ID), "addr", a.Self().Addr, "encrypted", !cfg.Plain, "mode", cfg.Protocol.Mode.String())
	if httpLn != nil {
		stop, err := serveHTTP(httpLn, a)
		if err != nil {
			cancel()
			<-a.Done()
			return err
		}
		defer stop()
		out.Info("http", "addr", httpLn.Addr().String())
	}
	if len(joinTo) > 0 {
		self, _ := netip.ParseAddrPort(a.Self().Addr) // checked by agent.Start
		lookup := func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
		if err := joinWithRetry(ctx, cfg.Logger, a.Join, lookup, joinTo, self.Addr(), f.joinTimeout); err != nil {
			if ctx.Err() == nil {
				cancel()
				<-a.Done()
				<-printed
				return err
			}
		} else {
			out.Info("joined", "via", joinList(joinTo))
		}
	}
	<-a.Done()
	<-printed
	out.Info("stopped")
	return a.Err()
}

func (f *agentFlags) config(stderr io.Writer) (agent.Config, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return agent.Config{}, fmt.Errorf("--log-level: %w", err)
	}
	if ap, err := netip.ParseAddrPort(f.advertise); err == nil && (ap.Addr().IsUnspecified() || ap.Port() == 0) {
		// The agent's own check names its Config field, not the flag.
		return agent.Config{}, fmt.Errorf("--advertise %s: want the ip:port the other members send to, not a wildcard address or port 0 (those bind; --bind takes them)", f.advertise)
	}
	cfg := agent.Config{
		ID: swim.ID(f.id), Bind: f.bind, Advertise: f.advertise, Plain: f.plain,
		MaxPacketSize: f.maxPacket, LeaveTimeout: new(f.leaveTimeout),
		DisableStream: f.noStream, DisableStreamProbes: f.noStreamPing, StreamBind: f.streamBind, StreamTimeout: f.streamTimeout, MaxStreamConns: f.maxStreamConns,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		Protocol: swim.Config{ProbeInterval: f.probeInterval, ProbeTimeout: f.probeTimeout, GossipFanout: new(f.gossipFanout),
			GossipInterval: new(f.gossipInterval), DeadReclaimTime: new(f.deadReclaim)},
	}
	meta, err := parseMeta(f.meta)
	if err != nil {
		return cfg, err
	}
	cfg.WireVersion = byte(f.wireVersion)
	if len(meta) > 0 && cfg.WireVersion < 2 {
		return cfg, errors.New("--meta needs wire format 2: --wire-version 1 writes no metadata")
	}
	if f.metaFile != "" {
		// Usage errors (exit status 2), as a bad file on SIGHUP is an
		// error that leaves the running member as it was.
		if len(f.meta) > 0 {
			return cfg, usageError{errors.New("--meta and --meta-file both give this member's metadata: give one of them")}
		}
		if meta, err = readMetaFile(f.metaFile); err != nil {
			return cfg, usageError{err}
		}
		if err := metaFitsWire(f.metaFile, meta, cfg.WireVersion); err != nil {
			return cfg, usageError{err}
		}
	}
	cfg.Protocol.Meta = meta
	switch {
	case f.noStream && f.streamBind != "":
		return cfg, errors.New("--stream-bind names a TCP listener but --no-stream turns the stream path off; give one of them")
	case f.gossipFanout < 0:
		return cfg, fmt.Errorf("--gossip-fanout %d is negative (0 turns eager dissemination off)", f.gossipFanout)
	}
	if p := f.preset; p != nil {
		cfg.Protocol.IndirectChecks, cfg.Protocol.RetransmitMult = p.IndirectChecks, p.RetransmitMult
		cfg.Protocol.SuspicionMult, cfg.Protocol.SuspicionMaxTimeoutMult = p.SuspicionMult, p.SuspicionMaxTimeoutMult
		cfg.Protocol.AwarenessMaxMultiplier, cfg.Protocol.PushPullInterval = p.AwarenessMaxMultiplier, p.PushPullInterval
	}
	if f.preset == nil || f.pushPullSet {
		// swim.Config's floor, said with the flags' names.
		if floor := swim.MinPushPullInterval(f.probeInterval); f.pushPull > 0 && f.pushPull < floor {
			return cfg, fmt.Errorf("--push-pull %v: want 0 (off) or at least one protocol period (--probe-interval %v), or %v when that is longer",
				f.pushPull, f.probeInterval, swim.DefaultPushPullInterval)
		}
		cfg.Protocol.PushPullInterval = new(f.pushPull)
	}
	if f.suspicion != "" {
		s, err := spec.Parse(f.suspicion)
		if err != nil {
			return cfg, fmt.Errorf("--suspicion: %w", err)
		}
		if _, err := s.New(); err != nil {
			return cfg, fmt.Errorf("--suspicion: %w", err)
		}
		cfg.Protocol.PeerDetector = func() (detector.Detector, error) { return s.New() }
	}
	for name, d := range map[string]time.Duration{"--probe-interval": f.probeInterval, "--probe-timeout": f.probeTimeout,
		"--join-timeout": f.joinTimeout, "--leave-timeout": f.leaveTimeout} {
		if d < 0 {
			return cfg, fmt.Errorf("%s %v is negative", name, d)
		}
	}
	switch f.mode {
	case "detector":
		cfg.Protocol.Mode = swim.ModeDetector
	case "lifeguard":
		cfg.Protocol.Mode = swim.ModeLifeguard
	case "swim":
		cfg.Protocol.Mode = swim.ModeSWIM
	default:
		return cfg, fmt.Errorf("--mode %q: want detector, lifeguard or swim", f.mode)
	}
	for i, h := range f.keys {
		k, err := wire.ParseKey(h)
		if err != nil {
			return cfg, fmt.Errorf("--key #%d: %w", i+1, err)
		}
		cfg.Keys = append(cfg.Keys, k)
	}
	if f.keyFile != "" {
		ks, err := readKeyFile(f.keyFile)
		if err != nil {
			return cfg, err
		}
		cfg.Keys = append(cfg.Keys, ks...)
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
	switch {
	case f.plain && len(cfg.Keys) > 0:
		return cfg, errors.New("--plain excludes --key and --key-file")
	case !f.plain && len(cfg.Keys) == 0:
		return cfg, errors.New("no key: give --key or --key-file, or --plain to run unencrypted on purpose")
	}
	return cfg, f.envelope.apply(&cfg)
}

// memberJSON is one entry of /members.
type memberJSON struct {
	ID                string  `json:"id"`
	Addr              string  `json:"addr"`
	State             string  `json:"state"`
	Incarnation       uint64  `json:"incarnation"`
	Level             float64 `json:"suspicion_level"`
	Suspected         bool    `json:"detector_suspects"`
	WarmingUp         bool    `json:"detector_warming_up,omitempty"`
	ProbeTimeoutMilli float64 `json:"probe_timeout_ms"`
	Self              bool    `json:"self,omitempty"`
	// Meta is the member's metadata as sent (bytes, shown as a JSON
	// string: invalid UTF-8 comes out as U+FFFD); MetaPairs the same
	// parsed as URL query pairs (--meta), when it parses.
	Meta      string              `json:"meta,omitempty"`
	MetaPairs map[string][]string `json:"meta_pairs,omitempty"`
	// Versions is the range of wire formats the member reads, [min, max];
	// absent when it advertised none (a member writing format 1). Ints,
	// not bytes: encoding/json writes a []uint8 as a base64 string.
	Versions []int `json:"wire_versions,omitempty"`
}

// Bounds of the --http server: a client gets httpReadHeaderTimeout to
// send its request headers, and httpWriteTimeout from then on to read the
// whole response (a client that stops reading is cut off instead of
// holding a goroutine and the response buffers; 30 s is above Prometheus's
// default scrape timeout of 10 s, and a scrape or /members answer takes
// milliseconds to write to a reader that keeps up); an idle keep-alive
// connection is closed after httpIdleTimeout (without it, idle connections
// stayed open for as long as clients kept them: 3,000 were seen); and at
// most httpMaxConns connections are open at once, further ones wait in the
// kernel's accept queue until one closes (netutil.LimitListener).
// Variables for the tests.
var (
	httpReadHeaderTimeout = 5 * time.Second
	httpWriteTimeout      = 30 * time.Second
	httpIdleTimeout       = 30 * time.Second
	httpMaxConns          = 64
)

// isLoopback reports whether a listener's address is a loopback one
// (127.0.0.0/8, ::1); an unspecified address (0.0.0.0, ::) is not.
func isLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

func serveHTTP(ln net.Listener, a *agent.Agent) (func(), error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(promswim.NewCollector(a)); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/members", func(w http.ResponseWriter, r *http.Request) {
		ms, err := a.MembersContext(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		out := make([]memberJSON, len(ms))
		for i, m := range ms {
			out[i] = memberJSON{ID: string(m.Node.ID), Addr: m.Node.Addr, State: m.State.String(), Incarnation: uint64(m.Incarnation),
				Level: m.Level, Suspected: m.Suspected, WarmingUp: m.WarmingUp && !m.Self, ProbeTimeoutMilli: float64(m.ProbeTimeout) / float64(time.Millisecond), Self: m.Self,
				Meta: m.Meta}
			if v, err := url.ParseQuery(m.Meta); err == nil && m.Meta != "" {
				out[i].MetaPairs = v
			}
			if !m.Versions.IsZero() {
				out[i].Versions = []int{int(m.Versions.Min), int(m.Versions.Max)}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-a.Done():
			http.Error(w, "stopped", http.StatusServiceUnavailable)
		default:
			fmt.Fprintln(w, "ok")
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: httpReadHeaderTimeout, WriteTimeout: httpWriteTimeout,
		IdleTimeout: httpIdleTimeout, MaxHeaderBytes: 16 << 10}
	limited := netutil.LimitListener(ln, httpMaxConns)
	go func() { _ = srv.Serve(limited) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
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
