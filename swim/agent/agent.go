// Package agent runs one SWIM member on a real network: it owns a UDP
// transport and, on the same port number, a TCP stream listener (the
// stream fallback ping before suspecting, views larger than one datagram,
// reliable messages; Config.DisableStream turns it off), seals and opens
// packets with the wire package (keys, cluster label, turning encryption
// on while running: Config.AcceptPlain), and drives the pure swim state
// machine with ticks from the monotonic clock. It is the library API for
// Go services: Start, Join (ip:port or host names), Leave, Shutdown (stop
// without leaving), Members (with state, suspicion level, metadata and
// wire-format range), LocalHealthMultiplier, Subscribe for membership
// events, SetMeta for this member's metadata, Broadcast, SendTo,
// SendToAddress, SendReliable and Receive for application messages,
// Config.LocalState and Config.MergeRemoteState for application state
// exchanged with anti-entropy, the state machine's filters and ping
// callbacks in Config.Protocol (MergeFilter, AliveFilter, AckPayload,
// PingComplete), and Stats; package promswim exports them to Prometheus.
// docs/coming-from-memberlist.md maps memberlist's API onto it.
//
// One goroutine owns the state machine; every public method talks to it
// through a channel, so an Agent is safe for concurrent use. The
// application's callbacks run on that goroutine: from them Members reads
// the view at once, and the methods that would wait for the goroutine
// return ErrInCallback instead of waiting for themselves. Time given to
// the state machine is the time elapsed since Start, read from Go's
// monotonic clock (time.Since), so wall-clock steps do not disturb it.
package agent

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/lateness"
	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// Defaults.
const (
	DefaultTickInterval = time.Second
	DefaultLeaveTimeout = 2 * time.Second
	DefaultEventBuffer  = 256
	// MaxBroadcastLead is how far above this agent's clock (Unix
	// nanoseconds) a received broadcast's number may be: the clock skew
	// allowed between members, as the replay check of sealed packets
	// allows (swim.Config.BroadcastSeqCeiling).
	MaxBroadcastLead = 30 * time.Second
)

// Member is one entry of the membership view: the state machine's view
// entry (state, incarnation, per-peer suspicion level from the peer's
// detector, φ by default; instants are offsets from the agent's start) and
// whether it is this member.
type Member struct {
	swim.PeerStatus
	Self bool
}

// leavePoll is the longest the agent waits between two ticks while
// leaving: the state machine finishes leaving at the first tick after its
// leave announcement has been sent (swim.Member.Left), which is not a
// deadline it reports.
const leavePoll = 50 * time.Millisecond

// authLogEvery is the least time between two warnings of dropped packets
// of one kind (failed authentication, another cluster's); the warning
// counts those dropped in between.
const authLogEvery = 10 * time.Second

// minPayload is the smallest packet payload the swim state machine accepts
// (swim.Config.MaxPacketSize).
const minPayload = 256

// ErrStopped is returned by calls on an agent that has stopped.
var ErrStopped = errors.New("agent: stopped")

// ErrSelfTooLarge is returned by Start, wrapped with the sizes, when this
// member's ID, advertised address, metadata and, when signing, proof do
// not fit a packet of MaxPacketSize that must carry them: its join, or its
// Alive in a view transfer to a member with an ID and address as long as
// its own. A Protocol.AckPayload is not checked here: one that would make
// an ack too large is left out of it when sent
// (Stats.Protocol.AckPayloadsTooLarge).
var ErrSelfTooLarge = errors.New("agent: this member's ID, address and metadata do not fit the packets it must send")

// Agent runs one member. Create it with Start. Its fields are grouped by
// concern; the comment of each group says which goroutine owns it.
type Agent struct {
	cfg Config
	// leaveTimeout is Config.LeaveTimeout resolved (DefaultLeaveTimeout
	// when nil).
	leaveTimeout time.Duration
	log          *slog.Logger
	tr           transport.Transport
	codec        *wire.Codec
	keys         *wire.Keyring
	sec          *wire.Security
	// plainMu makes SetSendPlain and SetAcceptPlain check and change the
	// pair of switches at once (ErrPlainStage).
	plainMu sync.Mutex
	self    swim.Node
	// selfAddr is self.Addr parsed (checkSelf made sure it parses).
	selfAddr netip.AddrPort
	src      netip.Addr // the address datagrams leave from (sendSource); invalid: the kernel's choice
	// streamSrc is the address dialled streams leave from (streamSource);
	// invalid: the kernel's choice.
	streamSrc netip.Addr
	m         *swim.Member
	lhm       atomic.Int32              // the state machine's local health multiplier, published by flush
	conflict  atomic.Pointer[swim.Node] // another node claiming this member's ID

	clock   agentClock
	life    lifecycle
	sub     subscribers
	join    joinState
	stream  streamPath
	ctr     packetCounters
	sctr    streamCounters
	pub     publishedStats
	authLog authLog
	// labelLog rate-limits the warning of another cluster's packets.
	labelLog authLog
	cb       callbackState
	served   servedOut // sendServed's, for the next flush
}

// agentClock is the agent's reading of time: the state machine's clock
// runs from start, and the host's lateness is measured at every tick.
type agentClock struct {
	start  time.Time
	wallNs atomic.Int64 // the wall clock in Unix nanoseconds read with the last now
	// clockSeq: broadcasts are numbered with wallNs at each (the default
	// ceiling, swim.Config.BroadcastSeqCeiling, set by Start).
	clockSeq bool
	late     *lateness.Meter // the host's lateness (hostTick)
	lateRead time.Duration   // when hostTick last read the runtime's histograms
}

// lifecycle holds the channels that run and stop the agent's goroutine.
type lifecycle struct {
	reqs      chan func()
	stopped   chan struct{}
	leaving   chan struct{}
	halt      chan struct{}   // closed by Shutdown: stop without leaving
	ctxDone   <-chan struct{} // Start's context's Done: leave
	quit      chan struct{}   // closed when the agent starts stopping
	haltOnce  sync.Once
	leaveOnce sync.Once
	err       error
}

// subscribers are the channels of Subscribe and Receive, under mu (see
// subscribe.go on its locks).
type subscribers struct {
	mu       sync.Mutex
	events   subscriptions[swim.Event]
	messages subscriptions[swim.Message]
	nextID   int
	closed   bool // set when the agent stops; later subscriptions get a closed channel
	// eventSnap and messageSnap hold deliverAll's copy of events and
	// messages, kept for the next delivery (agent goroutine only, not
	// under mu).
	eventSnap   []*subscription[swim.Event]
	messageSnap []*subscription[swim.Message]
	// waiting is set while the agent waits for a subscriber
	// (BlockingDelivery; block), for tests to see it.
	waiting atomic.Bool
}

// joinState is what Join waits on (agent goroutine only).
type joinState struct {
	// waiters are closed as soon as a view transfer answered the join or
	// this member's ID was refused (joined).
	waiters map[chan struct{}]struct{}
	// seeds are the addresses this Join has sent a join datagram to; the
	// state machine's resends there go over a stream (flush).
	seeds map[string]bool
	// calls counts Join calls, numbering them in waiting.
	calls uint64
	// waiting holds the addresses of each Join call still waiting, by
	// number: the state machine's join goes to their union, and a call
	// that ends unanswered takes only its own away (Join).
	waiting map[uint64][]string
	// mergeRefusal is the last error of Protocol.MergeFilter, for Join's
	// error.
	mergeRefusal error
	// ended holds the Join calls whose context ended, under endedMu:
	// Join hands them to the agent's goroutine without waiting for it,
	// which forgets them before its next tick (endJoins), so that a call
	// that gave up while that goroutine was busy leaves no resends behind.
	endedMu sync.Mutex
	ended   []endedJoin
}

// endedJoin is a Join call whose context ended: its number in
// joinState.waiting and its waiter.
type endedJoin struct {
	call   uint64
	waiter chan struct{}
}

// streamPath is the stream path (stream.go); listener is nil when it is
// off.
type streamPath struct {
	listener *transport.StreamListener
	in       chan streamIn
	// inBytes are the bytes of the reliable messages handed in (in) and
	// not yet taken by the agent's goroutine, at most MaxReceiveBytes
	// (but for one message alone: reserveIn).
	inBytes atomic.Int64
	results chan streamResult
	// The pools of dialled streams (streamslots.go): stream pings',
	// views', reliable messages'.
	pings, views, reliable *slotPool
	// joinTo holds the joins' streams open to seeds by address, joinTurns
	// the streams each seed has had, under outMu (streamjoinslots.go:
	// takeJoinSlot).
	outMu     sync.Mutex
	joinTo    map[netip.AddrPort]*joinStream
	joinTurns map[netip.AddrPort]int
	joinStall time.Duration
	// answerIdle bounds the wait for each frame of a join's answer,
	// answerWhole the whole answer (readAnswer; streamjoinslots.go).
	answerIdle, answerWhole time.Duration
	known                   knownSources // the live members' addresses marked in listener (knownsources.go)
	wg                      sync.WaitGroup
	ctx                     context.Context
	stop                    context.CancelFunc
}

// packetCounters are the datagram and message counters of Stats, moved by
// any goroutine.
type packetCounters struct {
	sent, sentBytes, recv, recvBytes                          atomic.Uint64
	authFail, decodeErr, rejected, encodeErr, sendErr, evDrop atomic.Uint64
	replayed, unknownKind, msgDrop, labelMismatch             atomic.Uint64
	reliableSent, reliableRecv, reliableRefused               atomic.Uint64
}

// streamCounters are the stream path's counters of Stats.
type streamCounters struct {
	streamsIn, streamsOut, streamDialErr, streamAuth     atomic.Uint64
	streamReplayed, streamGarbage, streamOversize        atomic.Uint64
	streamTimeouts, streamSyncs, streamFallbacks         atomic.Uint64
	streamSkipped, streamJoins, streamJoinAnswers        atomic.Uint64
	streamAnswersForeign, streamAnswersIdle              atomic.Uint64
	streamsAddrBusy, streamJoinsBusy, streamJoinsYielded atomic.Uint64
}

// publishedStats is the last swim.Stats published for Stats, under mu (a
// copy in place: a pointer swapped in would allocate at every packet that
// moves a counter), and last, its copy read by the agent goroutine only.
type publishedStats struct {
	mu    sync.Mutex
	stats swim.Stats
	last  swim.Stats
}

// authLog rate-limits a warning of dropped packets (agent goroutine only:
// warnRated): when the last was logged, and drops not logged since. The
// agent keeps one for authentication failures (authLog, whose from is the
// source of the last one, for JoinError) and one for other clusters'
// packets (labelLog, which leaves from unset).
type authLog struct {
	at    time.Duration
	ok    bool
	quiet uint64
	from  netip.AddrPort // source of the last datagram that failed authentication
}

// Leave announces a voluntary leave, keeps the member running for
// LeaveTimeout so the announcement spreads, then stops. It returns when the
// agent has stopped or ctx is done.
//
// Called from one of the agent's callbacks, it starts the leave and
// returns ErrInCallback at once: the agent's goroutine, running the
// callback, carries the leave out once the callback returns (Done).
func (a *Agent) Leave(ctx context.Context) error { return a.leaveAs(ctx, "Leave") }

// leaveAs is Leave, naming method in ErrInCallback.
func (a *Agent) leaveAs(ctx context.Context, method string) error {
	a.life.leaveOnce.Do(func() { close(a.life.leaving) })
	if a.inCallback() {
		return callbackErr(method)
	}
	select {
	case <-a.life.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown stops the agent at once without announcing a leave, as a
// crash would: the other members find it unresponsive, suspect it and
// declare it dead (memberlist's Shutdown without Leave). It returns when
// the agent has stopped; calling it after Leave or on a stopped agent
// does no harm. Use it when the member should count as failed (a node
// being taken away whose work others must take over), Leave when it
// departs in an orderly way. Called from one of the agent's callbacks, it
// returns ErrInCallback at once and the agent stops when the callback
// returns (Done).
func (a *Agent) Shutdown() error {
	a.life.haltOnce.Do(func() { close(a.life.halt) })
	if a.inCallback() {
		return callbackErr("Shutdown")
	}
	<-a.life.stopped
	return nil
}

// LocalHealthMultiplier returns Lifeguard's local health multiplier, LHM,
// in [0, Protocol.MaxLocalHealthMultiplier−1] (memberlist's
// GetHealthScore): 0 while this member's probes get their acks and nacks
// on time, raised by each sign that this member itself is slow (missed
// nacks, refuting a suspicion of itself, a pause), lowered by each probe
// answered in time. The protocol period and probe timeouts are scaled by
// LHM+1. Always 0 in swim.ModeSWIM. It is the value as of the last packet
// or tick the agent processed (swim.Member.LocalHealthMultiplier).
func (a *Agent) LocalHealthMultiplier() int { return int(a.lhm.Load()) }

// Close leaves gracefully and waits for the agent to stop (Leave; from a
// callback it does not wait and returns ErrInCallback).
func (a *Agent) Close() error { return a.leaveAs(context.Background(), "Close") }

// Done is closed when the agent has stopped.
func (a *Agent) Done() <-chan struct{} { return a.life.stopped }

// Err returns why the agent stopped on its own (nil after Leave or
// cancellation).
func (a *Agent) Err() error {
	select {
	case <-a.life.stopped:
		return a.life.err
	default:
		return nil
	}
}

// sendSource is the address a member bound to a wildcard address (0.0.0.0,
// ::) sends from: its advertised IP when that is an address of this host,
// so that the members see its packets come from the address it claims
// (they answer a join only then: joinFromClaimed). Without it the kernel
// picks the address of the route, on a host with several addresses often
// another one. Invalid, the kernel's choice, when Bind names an address
// (the socket sends from it) or the advertised IP is not local (behind
// NAT: the translated address is what the members see).
func sendSource(bind, advertise string) netip.Addr {
	b, err1 := netip.ParseAddrPort(bind)
	ad, err2 := netip.ParseAddrPort(advertise)
	if err1 != nil || err2 != nil || !b.Addr().IsUnspecified() || !transport.IsLocal(ad.Addr()) {
		return netip.Addr{}
	}
	if b.Addr().Is4() && !ad.Addr().Unmap().Is4() {
		return netip.Addr{} // an IPv4 socket cannot send from an IPv6 address
	}
	return ad.Addr().Unmap()
}

// streamSource is the address streams are dialled from: the bound IP
// address when bind names one, as the UDP socket bound there sends from
// it, so that the members see this member's streams come from the address
// they hold it at (the stream listener ranks a member's streams after
// unknown sources' for eviction, and a join over a stream is answered
// only from the address it claims: joinFromClaimed); else src, the
// wildcard socket's choice (sendSource). Without it the kernel picks the
// address of the route, on a host with several addresses often another
// one.
func streamSource(bind string, src netip.Addr) netip.Addr {
	if b, err := netip.ParseAddrPort(bind); err == nil && !b.Addr().IsUnspecified() {
		return b.Addr().Unmap()
	}
	return src
}

// checkSelf refuses an identity the other members could not use: an
// advertised address that is not ip:port, names no host (0.0.0.0, ::,
// port 0), which the others would send to themselves or nowhere, then
// suspect and declare this member dead, or is longer than
// swim.MaxAddrLen; an ID longer than swim.MaxIDLen or that the wire
// format refuses. The error names Advertise or ID (ConfigError, From
// left to the caller).
func checkSelf(n swim.Node) *ConfigError {
	if err := memberAddr(n.Addr); err != nil {
		return &ConfigError{Field: "Advertise", Value: n.Addr, Err: fmt.Errorf("%w: not an address the other members can send to", err)}
	}
	if len(n.Addr) > swim.MaxAddrLen {
		return &ConfigError{Field: "Advertise", Value: n.Addr, Err: fmt.Errorf("longer than %d bytes (swim.MaxAddrLen)", swim.MaxAddrLen)}
	}
	if len(n.ID) > swim.MaxIDLen {
		return &ConfigError{Field: "ID", Value: string(n.ID), Err: fmt.Errorf("longer than %d bytes (swim.MaxIDLen)", swim.MaxIDLen)}
	}
	if err := wire.CheckName(string(n.ID)); err != nil {
		return &ConfigError{Field: "ID", Value: string(n.ID), Err: err}
	}
	return nil
}

// memberAddr checks an address a member may be reached at
// (swim.Config.ValidAddr): a unicast ip:port, so not a host name (the agent
// sends to addresses as they are, without resolving them), 0.0.0.0, ::,
// port 0 (nowhere), a multicast group or the broadcast address
// 255.255.255.255 (whose hosts would all receive the probes of the member
// moved there: Go allows broadcast on IPv4 UDP sockets), in any spelling
// (IPv4-mapped IPv6 ones too).
func memberAddr(addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	ip := ap.Addr().Unmap() // ::ffff:0.0.0.0 is 0.0.0.0 to the socket
	switch {
	case err != nil:
		return fmt.Errorf("want ip:port: %w", err)
	case ip.IsUnspecified() || ap.Port() == 0:
		return errors.New("names no host or port")
	case ip.IsMulticast():
		return errors.New("a multicast address")
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return errors.New("the broadcast address")
	}
	return nil
}

// machineRand is the state machine's random source: seed, mixed with a
// hash of the member's ID (FNV-1a), so that agents given the same
// Config.Seed (fixed for reproducibility in every process of a service)
// do not draw the same phase for their first probe, which would put them
// back on one common probe grid, nor the same sequence of targets.
func machineRand(seed uint64, id swim.ID) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(id)) // never fails
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15^h.Sum64()))
}

// stateRand is the state machine's random source at Start: machineRand
// of a Config.Seed, and without one (0) a ChaCha8 keyed from crypto/rand.
// Its numbers are also the nonces of the pings whose acks verify members
// (swim's proof of receipt, receipt.go), which must not be predictable
// from the member's ID and the time it started, as a seed taken from the
// clock made them.
func stateRand(seed uint64, id swim.ID) *rand.Rand {
	if seed != 0 {
		return machineRand(seed, id)
	}
	return cryptoRand()
}

// cryptoRand is a ChaCha8 keyed from crypto/rand.
func cryptoRand() *rand.Rand {
	var key [32]byte
	crand.Read(key[:]) // never fails (crypto/rand)
	return rand.New(rand.NewChaCha8(key))
}
