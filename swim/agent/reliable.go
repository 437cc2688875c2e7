package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// Application messages outside the protocol's packets: SendReliable, a
// message of any size up to Config.MaxReliableSize over a stream, and
// SendToAddress, a datagram to any address (memberlist's SendReliable
// and SendToAddress). A reliable message is a run of MsgUser frames on
// one stream, each with its place in the message (swim.Part), answered by
// one MsgAck frame once the receiver has it whole.

// DefaultMaxReliableSize is Config.MaxReliableSize's default: 1 MiB.
const DefaultMaxReliableSize = 1 << 20

// ErrNoStream is returned by SendReliable on an agent without the stream
// path (Config.DisableStream).
var ErrNoStream = errors.New("agent: the stream path is off (DisableStream): no reliable messages")

// ErrReliableBusy is wrapped, with the context's error and naming the
// address, in the error of SendReliable and SendReliableToAddress when
// the message waited for its address's turn (as many reliable messages
// to the same address, ip:port, were in flight as one address may have:
// 4, streamOutPerAddr, a quarter of the 16 sent at once) and its
// context ended before its stream was connected: while it waited for the
// turn, for one of the 16 slots after it, or for its dial, even when the
// turn came at the moment the context ended. Nothing of the message was
// sent. A message whose stream was connected fails, when its context
// ends, with the context's error alone, however long it waited before.
// errors.Is tells it from a context that ended during the send itself or
// while waiting only for one of the 16 slots (the context's error
// alone). Without the bound, a receiver that accepts streams and never
// acknowledges (or acknowledges slowly) held every slot, and sends to
// every other address waited for their contexts (issue 27, session 23).
var ErrReliableBusy = errors.New("waited for one of the 4 reliable messages being sent to this address, the most one address may have")

// SendReliable sends data (1 byte to Config.MaxReliableSize) to the member
// id over a stream (TCP), in frames of at most MaxPacketSize, and returns
// once the receiver has it whole and has acknowledged it, or with the
// error that stopped it (memberlist's SendReliable, which returns once the
// bytes are written). The receiver delivers it on its Receive channels as
// one swim.Message; its acknowledgement says that its agent has the
// message whole, not that a subscriber took it (a full Receive channel
// drops it there, counted in Stats.MessagesDropped, unless
// Config.BlockingMessages). At most 16 reliable messages are sent at
// once (streamOutMax); more wait for their turn, within ctx. At most 4 of
// them go to one address (ip:port) at once: a fifth to that address waits
// for one of those to end, within ctx, without taking one of the 16
// meanwhile, so one slow or hostile receiver holds at most 4 of the 16
// and messages to other addresses go on. The stream's life is bounded
// by ctx and by Config.StreamTimeout (default 10 s), from the dial to the
// acknowledgement. When ctx ends first (its deadline passed or it was
// cancelled), the error wraps ctx.Err() (errors.Is with
// context.DeadlineExceeded or context.Canceled), whatever else failed at
// that moment (the stream's read deadline, the stream closed on the
// cancellation); it wraps ErrReliableBusy too when the message waited
// for its address's turn and was not sent (ErrReliableBusy). When
// StreamTimeout ends it first, the error names it and its value (such as
// "no acknowledgement within StreamTimeout 10s") and wraps
// os.ErrDeadlineExceeded, never a context's error. Errors:
// swim.ErrMessageSize, ErrToSelf (id is this member's),
// swim.ErrUnknownMember (id not alive or suspect here), ErrReliableBusy,
// ErrNoStream, ErrNeedsFormat2, ErrStopped, the dial's or the stream's,
// StreamTimeout's, or the context's.
func (a *Agent) SendReliable(ctx context.Context, id swim.ID, data []byte) error {
	if id == a.self.ID {
		return ErrToSelf
	}
	var to swim.Node
	if err := a.call(ctx, "SendReliable", func() {
		if p, ok := a.m.Member(id, a.now()); ok && id != a.self.ID && (p.State == swim.StateAlive || p.State == swim.StateSuspect) {
			to = p.Node
		}
	}); err != nil {
		return err
	}
	if to.ID == "" {
		return fmt.Errorf("agent: %w: %q", swim.ErrUnknownMember, id)
	}
	ap, err := netip.ParseAddrPort(to.Addr)
	if err != nil {
		return fmt.Errorf("agent: member %q at %q: %w", id, to.Addr, err)
	}
	return a.sendReliable(ctx, ap, to, data)
}

// SendReliableToAddress is SendReliable to the agent listening at addr
// (ip:port), member of this group or not: the receiver delivers the
// message whoever sends it, if it opens its frames (same key and label).
// An address no agent can be at (0.0.0.0, ::, port 0, a multicast group,
// the broadcast address) is refused at once: agentAddr.
func (a *Agent) SendReliableToAddress(ctx context.Context, addr string, data []byte) error {
	ap, err := agentAddr(addr)
	if err != nil {
		return err
	}
	return a.sendReliable(ctx, ap, swim.Node{Addr: ap.String()}, data)
}

// agentAddr parses the address of an agent that SendToAddress or
// SendReliableToAddress sends to: ip:port, where a member could be
// (memberAddr). 0.0.0.0 would reach this host's own agents unannounced,
// and a multicast or broadcast address every host there.
func agentAddr(addr string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("agent: address %q: want ip:port: %w", addr, err)
	}
	if err := memberAddr(ap.String()); err != nil {
		return netip.AddrPort{}, fmt.Errorf("agent: address %q: %w: want the ip:port of an agent", addr, err)
	}
	return ap, nil
}

func (a *Agent) sendReliable(ctx context.Context, to netip.AddrPort, node swim.Node, data []byte) (err error) {
	switch {
	case a.stream.listener == nil:
		return ErrNoStream
	case a.codec.Version() < 2:
		return ErrNeedsFormat2
	case len(data) == 0 || len(data) > a.cfg.MaxReliableSize:
		return fmt.Errorf("agent: %w: reliable message of %d bytes, want 1 to MaxReliableSize %d", swim.ErrMessageSize, len(data), a.cfg.MaxReliableSize)
	}
	select {
	case <-a.life.stopped:
		return ErrStopped
	default:
	}
	ok, waitedTurn := a.stream.reliable.takeWithin(ctx, to)
	if !ok {
		return unsentErr(to, waitedTurn, ctx.Err(), "waiting for a dialling slot", nil)
	}
	defer a.stream.reliable.release(to)
	if a.stream.ctx.Err() != nil {
		// Stopped while it waited: the slots freed by the streams the
		// stop closed must not dial anew.
		return ErrStopped
	}
	if cerr := ctxEnded(ctx); cerr != nil {
		// Its turn came as the context ended: nothing dialled.
		return unsentErr(to, waitedTurn, cerr, "before dialling", nil)
	}
	defer func() {
		if err != nil && a.stream.ctx.Err() != nil && !errors.Is(err, ErrStopped) {
			err = fmt.Errorf("%w: %w", ErrStopped, err) // its stream closed by the stop
		}
	}()
	sctx, cancel := context.WithTimeout(ctx, a.cfg.StreamTimeout)
	defer cancel()
	c, done, err := a.dial(sctx, to)
	if err != nil {
		if cerr := ctxEnded(ctx); cerr != nil {
			return unsentErr(to, waitedTurn, cerr, "dialling", err)
		}
		if timedOut(sctx, err) {
			return &streamTimeoutError{to: to, what: "not connected", timeout: a.cfg.StreamTimeout, cause: err}
		}
		return fmt.Errorf("agent: reliable message to %s: %w", to, err)
	}
	defer done()
	stop := context.AfterFunc(sctx, func() { _ = c.Close() })
	defer stop()
	pk := swim.Packet{Kind: swim.MsgUser, From: a.self, To: node, Part: swim.Part{Total: uint32(len(data))}}
	room := a.codec.MaxPayload() - pk.Size()
	if frames := (len(data) + room - 1) / max(room, 1); room <= 0 || frames*(a.codec.MaxPacketSize()+transport.FrameHeaderSize) > a.cfg.MaxStreamBytes {
		return fmt.Errorf("agent: %w: reliable message of %d bytes needs more than MaxStreamBytes %d in frames of MaxPacketSize %d",
			swim.ErrMessageSize, len(data), a.cfg.MaxStreamBytes, a.codec.MaxPacketSize())
	}
	for off := 0; off < len(data); off += room {
		pk.User = data[off:min(off+room, len(data))]
		pk.Part.Offset = uint32(off)
		b, _, err := a.codec.Encode(&pk)
		if err != nil {
			a.ctr.encodeErr.Add(1)
			return fmt.Errorf("agent: reliable message: %w", err)
		}
		if err := c.WriteFrame(b); err != nil {
			return a.streamErr(ctx, sctx, to, "not sent", err)
		}
		a.ctr.sent.Add(1)
		a.ctr.sentBytes.Add(uint64(len(b)))
	}
	b, err := c.ReadFrame()
	if err != nil {
		return a.streamErr(ctx, sctx, to, "no acknowledgement", err)
	}
	ack, err := a.codec.Decode(b)
	if err != nil {
		return fmt.Errorf("agent: reliable message to %s: acknowledgement: %w", to, err)
	}
	if ack.Kind != swim.MsgAck || (node.ID != "" && ack.From.ID != node.ID) {
		return fmt.Errorf("agent: reliable message to %s: answered by a %v from %q, want an ack from %q", to, ack.Kind, ack.From.ID, node.ID)
	}
	a.ctr.reliableSent.Add(1)
	return nil
}

// ctxEnded returns ctx's error once it has ended or its deadline has
// passed, else nil. A stream's deadline is its context's (transport's
// DialStream) and can cut it before the context's own timer has fired:
// past its deadline, ctxEnded waits for ctx to end (a second at most,
// then context.DeadlineExceeded), so that the caller's own timeout is
// told as such whichever came first.
func ctxEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); !ok || time.Now().Before(d) {
		return nil
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return context.DeadlineExceeded
	}
}

// timedOut says whether err, on the stream whose context is sctx, came
// from the stream's deadline (or sctx's end, which closes it).
func timedOut(sctx context.Context, err error) bool {
	var ne net.Error
	return sctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// unsentErr is the error of a reliable message whose context ended (cerr)
// before its stream was connected, at stage ("waiting for a dialling
// slot", "before dialling", "dialling"): it wraps ErrReliableBusy too
// when the message waited for its address's turn (waitedTurn). cause,
// the error of the dial the end cut, is named, not wrapped: a dial's
// timeout says context.DeadlineExceeded even when it was StreamTimeout's.
func unsentErr(to netip.AddrPort, waitedTurn bool, cerr error, stage string, cause error) error {
	if waitedTurn {
		var after string
		if cause != nil {
			after = fmt.Sprintf(" (%s: %v)", stage, cause)
		}
		return fmt.Errorf("agent: reliable message to %s: %w: %w%s", to, ErrReliableBusy, cerr, after)
	}
	if cause != nil {
		return fmt.Errorf("agent: reliable message to %s: %s: %w (%v)", to, stage, cerr, cause)
	}
	return fmt.Errorf("agent: reliable message to %s: %s: %w", to, stage, cerr)
}

// streamErr is the error of a reliable message whose connected stream
// failed with err at a stage ("not sent", "no acknowledgement"): the
// caller's context's error when ctx has ended (ctxEnded), err named; a
// streamTimeoutError when the stream's StreamTimeout ended it (sctx);
// else err.
func (a *Agent) streamErr(ctx, sctx context.Context, to netip.AddrPort, stage string, err error) error {
	if cerr := ctxEnded(ctx); cerr != nil {
		return fmt.Errorf("agent: reliable message to %s: %s: %w (%v)", to, stage, cerr, err)
	}
	if timedOut(sctx, err) {
		return &streamTimeoutError{to: to, what: stage, timeout: a.cfg.StreamTimeout, cause: err}
	}
	return fmt.Errorf("agent: reliable message to %s: %s: %w", to, stage, err)
}

// streamTimeoutError is the error of a reliable message whose stream
// Config.StreamTimeout ended before the caller's context did: it names
// the stage and StreamTimeout's value and wraps os.ErrDeadlineExceeded,
// not the stream's own error (a dial's timeout says
// context.DeadlineExceeded, which the caller's context is not).
type streamTimeoutError struct {
	to      netip.AddrPort
	what    string // "not connected", "not sent", "no acknowledgement"
	timeout time.Duration
	cause   error
}

func (e *streamTimeoutError) Error() string {
	return fmt.Sprintf("agent: reliable message to %s: %s within StreamTimeout %v (%v)", e.to, e.what, e.timeout, e.cause)
}

func (e *streamTimeoutError) Unwrap() error { return os.ErrDeadlineExceeded }

// serveReliable reads the rest of a reliable message whose first frame is
// first, hands it to the agent's goroutine and acknowledges it. The
// message is refused (the stream cut, nothing delivered) when it claims
// more than MaxReliableSize bytes or a frame is out of place: another
// sender, another total, a gap or an overlap. ts is the first frame's
// sealed timestamp: the frames after it are checked as a chain
// (wire.Codec.DecodeFrame), not against the sender's replay window, which
// its other streams and datagrams move on meanwhile. Memory grows with the bytes
// received, not the total claimed. Listener goroutine.
func (a *Agent) serveReliable(c *transport.Conn, first *swim.Packet, ts int64) {
	total := int(first.Part.Total)
	if total > a.cfg.MaxReliableSize {
		a.sctr.streamOversize.Add(1)
		a.log.Debug("reliable message over MaxReliableSize", "from", c.RemoteAddr(), "bytes", total, "limit", a.cfg.MaxReliableSize)
		return
	}
	buf := make([]byte, 0, min(total, 64<<10))
	for pkt := first; ; {
		if pkt.Kind != swim.MsgUser || pkt.From.ID != first.From.ID || int(pkt.Part.Total) != total ||
			int(pkt.Part.Offset) != len(buf) || len(pkt.User) > total-len(buf) {
			a.sctr.streamGarbage.Add(1)
			a.log.Debug("reliable message frame out of place", "from", c.RemoteAddr(), "kind", pkt.Kind,
				"offset", pkt.Part.Offset, "want", len(buf), "total", pkt.Part.Total)
			return
		}
		buf = append(buf, pkt.User...)
		if len(buf) == total {
			break
		}
		b, err := c.ReadFrame()
		if err != nil {
			a.streamReadError(c, err)
			return
		}
		if pkt, ts, err = a.codec.DecodeFrame(b, ts); err != nil {
			a.refusedFrame(c, err)
			return
		}
	}
	if !a.reserveIn(len(buf)) && !(a.cfg.BlockingMessages && a.awaitRoom(len(buf))) {
		a.ctr.reliableRefused.Add(1)
		a.log.Debug("reliable message refused: those waiting for the agent hold MaxReceiveBytes", "from", c.RemoteAddr(), "bytes", len(buf))
		return
	}
	if !a.handIn(streamIn{msg: &swim.Message{From: first.From.ID, Data: buf}, from: c.RemoteAddr()}) {
		a.stream.inBytes.Add(-int64(len(buf)))
		return
	}
	ack, _, err := a.codec.Encode(&swim.Packet{Kind: swim.MsgAck, From: a.self, To: first.From})
	if err != nil {
		a.ctr.encodeErr.Add(1)
		return
	}
	_ = c.WriteFrame(ack)
}

// reserveIn counts n bytes of a reliable message about to be handed in
// against MaxReceiveBytes: false, counting nothing, when the messages
// handed in and not yet taken would pass it (a message larger than the
// bound goes alone). receiveStream gives the bytes back. Without it an
// agent waiting for a reader (BlockingMessages) acknowledged and held
// about 64 queued and MaxStreamConns pending messages of up to
// MaxReliableSize each, 16 times MaxReceiveBytes at the defaults (atk27
// F14). Listener goroutine.
func (a *Agent) reserveIn(n int) bool {
	for {
		cur := a.stream.inBytes.Load()
		if cur > 0 && cur+int64(n) > int64(a.cfg.MaxReceiveBytes) {
			return false
		}
		if a.stream.inBytes.CompareAndSwap(cur, cur+int64(n)) {
			return true
		}
	}
}

// awaitRoom waits, for an agent that waits for its reader
// (Config.BlockingMessages), until the reliable messages handed in and not
// yet taken leave room for n bytes (reserveIn, which it does), at most
// handInWait (StreamTimeout if shorter) or until the agent stops. The
// agent takes a message handed in at its loop's next turn, so one refused
// only because the message before it was not taken yet failed its
// sender's SendReliable though the reader kept up: one in 15 runs of
// TestReceiveBytesBlocking under load. A reader that does not keep up
// still gets the message refused, handInWait later (atk27 F14's bound:
// TestHandInBytesBounded). Listener goroutine.
func (a *Agent) awaitRoom(n int) bool {
	poll := time.NewTicker(2 * time.Millisecond)
	defer poll.Stop()
	deadline := time.NewTimer(min(handInWait, a.cfg.StreamTimeout))
	defer deadline.Stop()
	for {
		select {
		case <-poll.C:
			if a.reserveIn(n) {
				return true
			}
		case <-deadline.C:
			return false
		case <-a.life.quit:
			return false
		}
	}
}

// handInWait bounds how long a reliable message received whole waits for
// room among those handed in and not yet taken (awaitRoom): longer than a
// turn of the agent's loop on a loaded machine, short beside a sender's
// StreamTimeout.
const handInWait = 500 * time.Millisecond

// refusedFrame counts an inbound stream frame the codec refused.
// Listener goroutine.
func (a *Agent) refusedFrame(c *transport.Conn, err error) {
	var de *wire.DecodeError
	switch {
	case errors.Is(err, wire.ErrReplay):
		a.sctr.streamReplayed.Add(1)
	case errors.Is(err, wire.ErrUnknownKind):
		a.ctr.unknownKind.Add(1) // a later version's message, as on UDP: not an error
	case errors.Is(err, wire.ErrLabel):
		a.ctr.labelMismatch.Add(1)
		a.handIn(streamIn{from: c.RemoteAddr(), authErr: err})
	case errors.As(err, &de):
		a.sctr.streamGarbage.Add(1)
	default:
		a.sctr.streamAuth.Add(1)
		a.handIn(streamIn{from: c.RemoteAddr(), authErr: err})
	}
	a.log.Debug("refused stream frame", "from", c.RemoteAddr(), "err", err)
}

// SendToAddress sends data in one datagram to the agent at addr (ip:port),
// member of this group or not, best effort (memberlist's SendToAddress):
// the receiver delivers it on its Receive channels if it opens the packet
// (same key and label). The packet does not carry this member's address,
// so a receiver that does not know it does not ask it for its view: no
// membership is exchanged. data must fit one packet (about MaxPacketSize
// minus 60 bytes). An address no agent can be at (0.0.0.0, ::, port 0,
// a multicast group, the broadcast address) is refused at once, and so is
// this member's own address (ErrToSelf). Errors: swim.ErrMessageSize,
// ErrNeedsFormat2, ErrStopped, the send's, or the context's.
func (a *Agent) SendToAddress(ctx context.Context, addr string, data []byte) error {
	ap, err := agentAddr(addr)
	if err != nil {
		return err
	}
	if slotKey(ap) == slotKey(a.selfAddr) {
		return fmt.Errorf("%w: %s", ErrToSelf, ap)
	}
	if a.codec.Version() < 2 {
		return ErrNeedsFormat2
	}
	pk := swim.Packet{Kind: swim.MsgUser, From: swim.Node{ID: a.self.ID}, To: swim.Node{Addr: ap.String()}, User: data}
	if n := pk.Size(); len(data) == 0 || n > a.codec.MaxPayload() {
		return fmt.Errorf("agent: %w: message of %d bytes needs %d in a packet, want 1 byte and at most %d",
			swim.ErrMessageSize, len(data), n, a.codec.MaxPayload())
	}
	var serr error
	if err := a.call(ctx, "SendToAddress", func() {
		b, _, err := a.codec.Encode(&pk)
		if err != nil {
			a.ctr.encodeErr.Add(1)
			serr = fmt.Errorf("agent: %w", err)
			return
		}
		if err := a.tr.Send(ap, b); err != nil {
			a.ctr.sendErr.Add(1)
			serr = fmt.Errorf("agent: send to %s: %w", ap, err)
			return
		}
		a.ctr.sent.Add(1)
		a.ctr.sentBytes.Add(uint64(len(b)))
	}); err != nil {
		return err
	}
	return serr
}

// reliableDefaults fills and checks Config.MaxReceiveBytes (not negative,
// default 8 MiB) and Config.MaxReliableSize: a message of
// that size, cut into frames of this member's packet size addressed to
// the longest ID and address, must fit one stream's MaxStreamBytes, else
// it could never be sent nor received whole. The default is 1 MiB, or
// what fits when that is less. Nothing is checked without the stream path.
func reliableDefaults(cfg *Config, codec *wire.Codec, self swim.Node) error {
	if cfg.MaxReliableSize < 0 {
		return fmt.Errorf("agent: MaxReliableSize %d is negative", cfg.MaxReliableSize)
	}
	switch {
	case cfg.MaxReceiveBytes < 0:
		return fmt.Errorf("agent: MaxReceiveBytes %d is negative", cfg.MaxReceiveBytes)
	case cfg.MaxReceiveBytes == 0:
		cfg.MaxReceiveBytes = DefaultMaxReceiveBytes
	}
	if cfg.DisableStream {
		return nil
	}
	pk := swim.Packet{Kind: swim.MsgUser, From: self, To: longestNode, Part: swim.Part{Total: 1}}
	fit := 0
	if room := codec.MaxPayload() - pk.Size(); room > 0 {
		fit = cfg.MaxStreamBytes / (codec.MaxPacketSize() + transport.FrameHeaderSize) * room
	}
	switch {
	case cfg.MaxReliableSize == 0:
		cfg.MaxReliableSize = min(DefaultMaxReliableSize, fit)
	case cfg.MaxReliableSize > fit:
		return fmt.Errorf("agent: MaxReliableSize %d does not fit MaxStreamBytes %d: in frames of MaxPacketSize %d one stream carries at most %d bytes of message",
			cfg.MaxReliableSize, cfg.MaxStreamBytes, codec.MaxPacketSize(), fit)
	}
	return nil
}

// longestNode is a destination with the longest ID and address a frame
// can carry.
var longestNode = swim.Node{ID: swim.ID(strings.Repeat("x", 255)), Addr: "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"}
