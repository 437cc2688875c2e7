package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/netutil"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
	"github.com/fdkit/fdkit/swim/agent/promswim"
	"github.com/fdkit/fdkit/swim/transport"
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
--key would be dropped). One SIGHUP reloads the key file, the --meta-file
and the --encryption-stage-file; with none to reload, and during the
leave, SIGHUP is ignored.

--label L gives the group a cluster label (at most 255 bytes of printable
UTF-8, memberlist's Label): every packet and TCP frame carries it, packets
with another label or none are dropped and counted
(fdswim_label_mismatches_total), so groups sharing a network and a key stay
apart. Every member needs the same label.

Turning encryption on in a running group takes one rolling restart with
--encryption-stage-file F: restart each member with --key (or --key-file)
--encryption-stage-file F, F holding the line send-plain (it sends plain
and reads both, so plain members still read it); once every member runs
with the key, write accept-plain in F and send SIGHUP to each member (it
seals and still reads plain); once fdswim_plain_accepted_total stops
growing on every member, write sealed in F and send SIGHUP to each. stdout
shows msg="encryption stage reloaded" stage=<name>; a bad file is logged at
ERROR and the stage stays; a move of two steps at once is applied and
logged at WARN (a member two steps away refuses this one's packets or
sends what it refuses). Without the file it takes three rolling
restarts: with --accept-plain --send-plain, then --accept-plain alone, then
neither. --send-plain needs --accept-plain. With --http, the agent serves:

  /members   the view as JSON (state, incarnation, suspicion level, metadata
             and wire-format range per peer)
  /metrics   Prometheus metrics (fdswim_peer_suspicion_level and others)
  /healthz   200 while running

without authentication: keep --http on a loopback address (a warning is
printed otherwise). Idle connections are closed after 30 s, a client has 30 s
to read a response, and at most 64 connections are served at once.

Flags:
`

func init() {
	subcommands["agent"] = subcommand{run: runAgent,
		help: "run one SWIM member over UDP (AES-GCM), print membership changes, serve /members and /metrics"}
}

// runAgent is the `fdswim agent` subcommand: args are the arguments after
// "agent". It returns when ctx is cancelled (main cancels it on SIGINT and
// SIGTERM), after leaving gracefully, or on error. Everything the flags
// name is checked before the member starts; once it runs, one deferred
// cleanup stops it and waits for its last events whichever way the run
// ends.
func runAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runAgentEnv(ctx, args, stdout, stderr, agentEnv{http: defaultHTTPLimits, join: defaultJoinBackoff()})
}

// agentEnv holds what runAgent fixes and tests vary: the --http server's
// limits and the backoff of --join attempts.
type agentEnv struct {
	http httpLimits
	join joinBackoff
}

// runAgentEnv is runAgent with env.
func runAgentEnv(ctx context.Context, args []string, stdout, stderr io.Writer, env agentEnv) error {
	f, err := parseAgentFlags(args, stderr)
	if f == nil || err != nil {
		return err
	}
	cfg, err := f.config(stderr)
	if err != nil {
		return err
	}
	joinTo, err := parseJoin(f.join)
	if err != nil {
		return err
	}
	// Before the member starts, so that a bad --http never joins a member
	// to the group only to leave it again.
	httpLn, err := listenHTTP(f.httpAddr, stderr)
	if err != nil {
		return err
	}
	if httpLn != nil {
		defer httpLn.Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a, err := agent.Start(ctx, cfg)
	if errors.Is(err, agent.ErrSelfTooLarge) {
		return fmt.Errorf("--id, --advertise and --meta (or --meta-file) too large for --max-packet-size %d: %w", f.maxPacket, err)
	}
	if err != nil {
		return startError(err)
	}
	out := slog.New(slog.NewTextHandler(stdout, nil))
	printed := printEvents(a, out)
	defer func() {
		cancel()
		<-a.Done()
		<-printed
	}()
	if w := advertiseWarning(f.bind, f.advertise, transport.IsLocal); w != "" {
		cfg.Logger.Warn(w)
	}
	defer reloadOnHUP(ctx, f.reloader(a, cfg, out))()
	out.Info("agent", "id", string(a.Self().ID), "addr", a.Self().Addr, "encrypted", !cfg.Plain, "mode", cfg.Protocol.Mode.String())
	if httpLn != nil {
		stop, err := serveHTTP(httpLn, a, env.http)
		if err != nil {
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
		err := joinWithRetry(ctx, cfg.Logger, a.Join, lookup, joinTo, self.Addr(), f.joinTimeout, env.join)
		switch {
		case err == nil:
			out.Info("joined", "via", joinList(joinTo))
		case ctx.Err() == nil:
			return err
		}
	}
	<-a.Done()
	<-printed
	out.Info("stopped")
	return a.Err()
}

// listenHTTP opens --http's listener (nil when addr is empty), with a
// warning on stderr when it is not on a loopback address.
func listenHTTP(addr string, stderr io.Writer) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	if !isLoopback(ln.Addr()) {
		fmt.Fprintf(stderr, "fdswim agent: warning: --http %s listens on %s, not a loopback address: "+
			"/members and /metrics are served without authentication to anyone who can reach it; "+
			"bind 127.0.0.1 or put an authenticating proxy in front\n", addr, ln.Addr())
	}
	return ln, nil
}

// printEvents writes the agent's membership events to out, one line
// each, until the agent stops; the channel returned is closed then.
func printEvents(a *agent.Agent, out *slog.Logger) <-chan struct{} {
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
	return printed
}

// reloader is what SIGHUP reloads: the key file when the keys come from
// --key-file alone, and the --meta-file.
func (f *agentFlags) reloader(a *agent.Agent, cfg agent.Config, out *slog.Logger) *hupReload {
	hup := &hupReload{keyring: a.Keyring(), metaFile: f.metaFile, meta: cfg.Protocol.Meta, wireVersion: cfg.WireVersion,
		setMeta: a.SetMeta, out: out, diag: cfg.Logger}
	if f.envelope.stageFile != "" {
		hup.stageFile = f.envelope.stageFile
		hup.setStage = func(st encryptionStage) error { return setStage(a, st) }
		for _, st := range encryptionStages {
			if st.acceptPlain == cfg.AcceptPlain && st.sendPlain == cfg.SendPlain {
				hup.stage = st
			}
		}
	}
	if f.keyFile != "" {
		if len(f.keys) == 0 {
			hup.keyFile = f.keyFile
		} else {
			hup.keysFixed = true
		}
	}
	return hup
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

// httpLimits bound the --http server: a client gets readHeader to send
// its request headers, and write from then on to read the whole response
// (a client that stops reading is cut off instead of holding a goroutine
// and the response buffers; 30 s is above Prometheus's default scrape
// timeout of 10 s, and a scrape or /members answer takes milliseconds to
// write to a reader that keeps up); an idle keep-alive connection is
// closed after idle (without it, idle connections stay open for as long
// as clients keep them, thousands of them); and at most maxConns
// connections are open at once, further ones wait in the kernel's accept
// queue until one closes (netutil.LimitListener).
type httpLimits struct {
	readHeader, write, idle time.Duration
	maxConns                int
}

// defaultHTTPLimits are the limits of fdswim agent --http.
var defaultHTTPLimits = httpLimits{readHeader: 5 * time.Second, write: 30 * time.Second, idle: 30 * time.Second, maxConns: 64}

// isLoopback reports whether a listener's address is a loopback one
// (127.0.0.0/8, ::1); an unspecified address (0.0.0.0, ::) is not.
func isLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// serveHTTP serves /members, /metrics and /healthz on ln within lim until
// the function it returns is called.
func serveHTTP(ln net.Listener, a *agent.Agent, lim httpLimits) (func(), error) {
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
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: lim.readHeader, WriteTimeout: lim.write,
		IdleTimeout: lim.idle, MaxHeaderBytes: 16 << 10}
	limited := netutil.LimitListener(ln, lim.maxConns)
	go func() { _ = srv.Serve(limited) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
