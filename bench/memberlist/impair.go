package main

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Impair is the user-space impairment placed between one member and the
// network, identical for both libraries: it drops a fraction of datagrams in
// each direction (a lossy member), holds everything while paused (a
// SIGSTOP-like pause: the member's sends block, so its protocol goroutines
// stop at their next send, and received datagrams wait as they would in a
// stopped process's socket buffer), and black-holes everything once killed.
// It also counts what the member sends.
type Impair struct {
	mu     sync.Mutex
	resume chan struct{} // nil when running; closed on resume
	loss   float64
	rng    *rand.Rand
	killed atomic.Bool
	silent atomic.Bool // killed by KillSilent or KillDropped
	// dropped: killed by KillDropped (dials to it time out)
	dropped atomic.Bool
	closed  chan struct{} // closed by Close: the member is being stopped
	once    sync.Once
	held    []io.Closer // inbound streams held by a silent kill, closed by Close

	msgs, bytes atomic.Uint64
}

// NewImpair returns a pass-through impairment with its own seeded source.
func NewImpair(seed uint64) *Impair {
	return &Impair{rng: rand.New(rand.NewPCG(seed, 7)), closed: make(chan struct{})}
}

// SetLoss sets the drop probability of every datagram in and out.
func (i *Impair) SetLoss(p float64) {
	i.mu.Lock()
	i.loss = p
	i.mu.Unlock()
}

// Pause holds the member for d, returning immediately.
func (i *Impair) Pause(d time.Duration) {
	i.mu.Lock()
	if i.resume == nil {
		ch := make(chan struct{})
		i.resume = ch
		time.AfterFunc(d, func() {
			i.mu.Lock()
			i.resume = nil
			i.mu.Unlock()
			close(ch)
		})
	}
	i.mu.Unlock()
}

// Kill black-holes the member for good, as if its process died on a host
// that stays up: its datagrams are lost, and a dial to its stream address
// is refused (dialRefused), as the kernel refuses a port nobody listens on.
func (i *Impair) Kill() { i.killed.Store(true) }

// KillSilent black-holes the member for good as a host that went down, a
// partition or a hung process: its datagrams are lost, and a dial to its
// stream address connects (its kernel, or a middlebox, accepted it) and
// is never answered (hold), until the prober gives up.
func (i *Impair) KillSilent() {
	i.silent.Store(true)
	i.killed.Store(true)
}

// KillDropped black-holes the member for good as a host that is down or
// cut off by a firewall that drops: its datagrams are lost, and a dial
// to its stream address gets no answer to its SYN, so that it neither
// connects nor is refused but times out at the dialler's deadline
// (dialDropped). The streams the dialler's side already holds are held
// unanswered, as in KillSilent.
func (i *Impair) KillDropped() {
	i.silent.Store(true)
	i.killed.Store(true)
	i.dropped.Store(true)
}

// Close ends the member's impairment when the member is stopped: the
// streams a silent kill held are closed, and hold returns.
func (i *Impair) Close() {
	i.once.Do(func() {
		close(i.closed)
		i.mu.Lock()
		for _, c := range i.held {
			_ = c.Close()
		}
		i.held = nil
		i.mu.Unlock()
	})
}

// hold keeps an inbound stream of a silently killed member open and
// unanswered until Close.
func (i *Impair) hold(c io.Closer) {
	i.mu.Lock()
	defer i.mu.Unlock()
	select {
	case <-i.closed:
		_ = c.Close()
	default:
		i.held = append(i.held, c)
	}
}

// Killed reports whether Kill was called.
func (i *Impair) Killed() bool { return i.killed.Load() }

// streamAddrs maps a member's stream (TCP) address, host:port, to its
// Impair, so that a dial to a killed member is refused as a dial to a
// dead process is: its listener is still open in this process, and the
// kernel would accept the connection, which the member's side then
// closes (a live process that accepts and hangs up, not a dead one). Both
// libraries' dialling paths ask it (fd.go, ml.go).
var streamAddrs sync.Map // string → *Impair

func registerStream(addr string, imp *Impair) { streamAddrs.Store(addr, imp) }
func unregisterStream(addr string)            { streamAddrs.Delete(addr) }

// errRefused is a dial to a killed member.
var errRefused = errors.New("connection refused: the member was killed")

// dialRefused returns errRefused when addr is the stream address of a
// member killed by Kill (not KillSilent: that dial connects, see hold).
func dialRefused(addr string) error {
	if v, ok := streamAddrs.Load(addr); ok && v.(*Impair).Killed() && !v.(*Impair).silent.Load() {
		return errRefused
	}
	return nil
}

// droppedAddrs holds the stream addresses whose SYNs are dropped, set
// by markDropped in a member process of a -procs run (whose streamAddrs
// holds only itself).
var droppedAddrs sync.Map // string → struct{}

// markDropped makes every later dial to addr time out (dialDropped).
func markDropped(addr string) { droppedAddrs.Store(addr, struct{}{}) }

// dialDropped reports whether a dial to addr gets no answer to its SYN:
// addr is a member killed by KillDropped, or marked by markDropped.
func dialDropped(addr string) bool {
	if _, ok := droppedAddrs.Load(addr); ok {
		return true
	}
	v, ok := streamAddrs.Load(addr)
	return ok && v.(*Impair).dropped.Load()
}

// errSYNDropped is the dialler's error when its SYNs got no answer by its
// deadline: a net.Error whose Timeout is true, as the kernel's
// connect() timeout is.
var errSYNDropped error = &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}

// awaitDropped plays a dropped SYN on an outbound connection that was
// made already (fdkit's StreamWrap sees a connection only once it is
// connected): it waits until conn's deadline (the dial's) by reading
// from the dead member, which never answers, closes conn and returns
// errSYNDropped.
func awaitDropped(conn net.Conn) error {
	_, _ = conn.Read(make([]byte, 1))
	_ = conn.Close()
	return errSYNDropped
}

// wait blocks while the member is paused.
func (i *Impair) wait() {
	i.mu.Lock()
	ch := i.resume
	i.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// drop decides the fate of one datagram.
func (i *Impair) drop() bool {
	if i.killed.Load() {
		return true
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.loss > 0 && i.rng.Float64() < i.loss
}

// sent counts one outgoing message of n bytes.
func (i *Impair) sent(n int) {
	i.msgs.Add(1)
	i.bytes.Add(uint64(n))
}

// Counts returns messages and bytes sent so far.
func (i *Impair) Counts() (msgs, bytes uint64) { return i.msgs.Load(), i.bytes.Load() }
