package agent

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"syscall"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// The stream path (TCP) of an agent (docs/algorithms.md, “SWIM: stream
// fallback probe”): a listener on the UDP port's number (memberlist's
// layout), the stream fallback pings the state machine asks for
// (swim.Ready.StreamProbes), and views larger than one datagram sent over
// a stream instead of a burst of datagrams. Every frame is one packet
// sealed by the agent's wire.Codec, as a datagram is: same keyring, same
// replay check. An inbound stream carries either one ping (applied by the
// state machine, answered on the same stream with an ack that carries this
// member's Alive: swim.Member.AnswerStreamPing), or a view: syncs, maybe
// ended by one join (push-pull's pull), handed to the state machine as if
// they had come as datagrams, the join answered on the same stream when
// its sender is not verified at the address it claims, or the join
// carries a token (swim.Member.AnswerStreamJoin; the dialler reads the
// answer: readAnswer), or a reliable message (reliable.go). Anything else ends
// it.

// streamOutMax bounds the streams this agent dials at once for stream
// pings (beyond it a ping is skipped), and, each apart, those for views
// (beyond it a view goes as datagrams) and reliable messages
// (SendReliable waits for one): streamslots.go.
const streamOutMax = 16

// streamResult is what a dialling goroutine hands back to the agent's
// goroutine: a stream ping's answer, or the packets of a view whose
// stream failed (to be sent as datagrams).
type streamResult struct {
	probe *swim.StreamProbe
	ack   *swim.Packet // the target's ack, nil when the ping failed
	// connected: a ping without an ack got through the dial, so something
	// listens at the target's address (it closed the stream, answered
	// what this agent cannot read, or never answered): not reported as
	// failed, which the detector gate takes as "nothing listens there".
	connected bool
	fallback  []swim.Packet
}

// streamIn is a packet that arrived on an inbound stream, for the agent's
// goroutine, or the authentication error of a refused one.
type streamIn struct {
	pkt     *swim.Packet
	from    netip.AddrPort
	authErr error // a frame that failed authentication, or (wire.ErrLabel) of another cluster: to log
	// reply, for a stream ping, receives the ack to write back (nil: no
	// answer).
	reply chan *swim.Packet
	// answer, for a join from the IP address its sender claims, receives
	// the packets to write back on the stream (swim.Member.AnswerStreamJoin).
	answer chan []swim.Packet
	// msg is a reliable message received whole (reliable.go).
	msg *swim.Message
	// joinToken, for a packet read back on a stream this agent dialled to
	// resend its join to a seed (readAnswer), is that join's token: the
	// packet is stepped by swim.Member.StepJoinStreamAnswer.
	joinToken uint64
}

// listenBoth opens the UDP socket and the stream listener on the same
// port number. With port 0 the kernel chooses the TCP port first and UDP
// takes the same number, retried a few times when it is taken.
func listenBoth(bind string, src netip.Addr, maxPacket int, scfg transport.StreamConfig, handle func(*transport.Conn)) (*transport.UDP, *transport.StreamListener, error) {
	ap, err := netip.ParseAddrPort(bind)
	if err != nil {
		return nil, nil, &ConfigError{Field: "Bind", Value: bind, Err: fmt.Errorf("want ip:port: %w", err)}
	}
	var lastErr error
	for range 16 {
		scfg.Bind = ap.String()
		ucfg := transport.Config{Bind: ap.String(), MaxPacketSize: maxPacket, Source: src}
		sl, err := transport.ListenStream(scfg, handle)
		if err != nil {
			if inUse(err) {
				// Say whether UDP's port is taken too (another member
				// there, usually): the port to change is then Bind's,
				// not the stream listener's alone (usr28 F4).
				u, uerr := transport.Listen(ucfg)
				if uerr == nil {
					_ = u.Close()
					return nil, nil, &ConfigError{Field: "StreamBind", Value: bind, From: "Bind", Or: []string{"DisableStream"},
						Err: fmt.Errorf("stream listener: the TCP port %d is in use (the UDP port is free): %w", ap.Port(), err)}
				}
				if inUse(uerr) {
					return nil, nil, &ConfigError{Field: "Bind", Value: bind,
						Err: fmt.Errorf("the port %d is in use, both UDP and TCP (another member running there?): use another port: %w", ap.Port(), uerr)}
				}
			}
			return nil, nil, &ConfigError{Field: "StreamBind", Value: bind, From: "Bind", Err: fmt.Errorf("stream listener: %w", err), Or: []string{"DisableStream"}}
		}
		ucfg.Bind = netip.AddrPortFrom(ap.Addr(), sl.LocalAddr().Port()).String()
		u, err := transport.Listen(ucfg)
		if err == nil {
			return u, sl, nil
		}
		_ = sl.Close()
		lastErr = err
		if ap.Port() != 0 {
			if inUse(err) {
				lastErr = fmt.Errorf("the UDP port %d is in use (the TCP port is free): use another port: %w", ap.Port(), err)
			}
			break
		}
	}
	return nil, nil, &ConfigError{Field: "Bind", Value: bind, Err: lastErr}
}

// inUse reports whether err is a socket's address already in use.
func inUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }

// streamConfig is the listener's and dialler's configuration.
func (a *Agent) streamConfig() transport.StreamConfig {
	return transport.StreamConfig{
		Bind: a.cfg.StreamBind, MaxFrame: a.codec.MaxPacketSize(), MaxBytes: a.cfg.MaxStreamBytes,
		MaxConns: a.cfg.MaxStreamConns, MaxConnsPerSource: a.cfg.MaxStreamConnsPerSource,
		Timeout: a.cfg.StreamTimeout, Wrap: a.cfg.StreamWrap,
		Source: a.streamSrc,
	}
}

// serveStream reads an inbound stream's frames until it ends or one is
// refused. Listener goroutine.
func (a *Agent) serveStream(c *transport.Conn) {
	a.sctr.streamsIn.Add(1)
	updates := 0
	for {
		b, err := c.ReadFrame()
		if err != nil {
			a.streamReadError(c, err)
			return
		}
		pkt, ts, err := a.codec.DecodeFrame(b, 0)
		if err != nil {
			a.refusedFrame(c, err)
			return
		}
		switch pkt.Kind {
		case swim.MsgPing:
			// The state machine applies what the ping carries (the
			// prober's suspicion of this member) and returns the ack, with
			// this member's Alive, for this stream only.
			reply := make(chan *swim.Packet, 1)
			if !a.handIn(streamIn{pkt: pkt, from: c.RemoteAddr(), reply: reply}) {
				return
			}
			var ack *swim.Packet
			select {
			case ack = <-reply:
			case <-a.life.quit:
				return
			}
			if ack == nil {
				a.sctr.streamGarbage.Add(1)
				a.log.Debug("stream ping refused", "from", c.RemoteAddr(), "to", pkt.To.ID)
				return
			}
			out, _, err := a.codec.Encode(ack)
			if err != nil {
				a.ctr.encodeErr.Add(1)
				return
			}
			_ = c.WriteFrame(out)
			return // one ping per stream, as memberlist's
		case swim.MsgSync, swim.MsgJoin:
			updates += len(pkt.Updates)
			if updates > a.cfg.MaxStreamMembers {
				a.sctr.streamOversize.Add(1)
				a.log.Debug("stream view over the member cap", "from", c.RemoteAddr(), "cap", a.cfg.MaxStreamMembers)
				return
			}
			if pkt.Kind == swim.MsgJoin && !joinFromClaimed(pkt.From.Addr, c.RemoteAddr(), false) {
				a.ctr.rejected.Add(1)
				a.log.Debug("stream join refused: it did not come from the address it claims", "from", c.RemoteAddr(), "claimed", pkt.From.Addr)
				return
			}
			if pkt.Kind == swim.MsgJoin {
				a.answerJoin(c, pkt) // a join (push-pull's pull) ends a view stream
				return
			}
			if !a.handIn(streamIn{pkt: pkt, from: c.RemoteAddr()}) {
				return
			}
		case swim.MsgUser:
			if updates == 0 && !pkt.Part.IsZero() {
				a.serveReliable(c, pkt, ts) // SendReliable: reliable.go
				return
			}
			fallthrough
		default:
			a.sctr.streamGarbage.Add(1)
			a.log.Debug("unexpected packet kind on a stream", "from", c.RemoteAddr(), "kind", pkt.Kind)
			return
		}
	}
}

// answerJoin hands the join pkt, which came on c from the IP address its
// sender claims, to the agent's goroutine and writes its answer back on c
// (swim.Member.AnswerStreamJoin): a stream proves the sender's host, not
// the port it claims, so the view goes back where the join came from, not
// to the claimed port, another tenant's on a shared host (issue 27,
// user40 F1). A joiner verified at its claimed address is answered there
// and gets nothing on c. Listener goroutine.
func (a *Agent) answerJoin(c *transport.Conn, pkt *swim.Packet) {
	answer := make(chan []swim.Packet, 1)
	if !a.handIn(streamIn{pkt: pkt, from: c.RemoteAddr(), answer: answer}) {
		return
	}
	var pkts []swim.Packet
	select {
	case pkts = <-answer:
	case <-a.life.quit:
		return
	}
	if len(pkts) > 0 && pkts[0].Kind == swim.MsgSync {
		a.sctr.streamSyncs.Add(1)
	}
	_ = a.writeFrames(c, pkts)
}

// streamReadError counts why an inbound stream ended (a clean end is not
// counted).
func (a *Agent) streamReadError(c *transport.Conn, err error) {
	switch {
	case errors.Is(err, transport.ErrFrameTooLarge), errors.Is(err, transport.ErrStreamBudget):
		a.sctr.streamOversize.Add(1)
	case errors.Is(err, transport.ErrFrameEmpty), errors.Is(err, transport.ErrFrameTruncated):
		a.sctr.streamGarbage.Add(1)
	case errors.Is(err, transport.ErrStreamIdle):
		a.sctr.streamAnswersIdle.Add(1)
	case errors.Is(err, os.ErrDeadlineExceeded):
		a.sctr.streamTimeouts.Add(1)
	default:
		return // EOF, reset, closed by Close
	}
	a.log.Debug("refused stream", "from", c.RemoteAddr(), "err", err)
}

// handIn passes an inbound stream's packet to the agent's goroutine; false
// when the agent stopped.
func (a *Agent) handIn(in streamIn) bool {
	select {
	case a.stream.in <- in:
		return true
	case <-a.life.quit:
		return false
	}
}

// receiveStream steps a packet that came on a stream. Agent goroutine.
func (a *Agent) receiveStream(in streamIn) {
	if in.authErr != nil {
		if errors.Is(in.authErr, wire.ErrLabel) {
			a.warnLabel(in.from, fmt.Errorf("stream: %w", in.authErr))
		} else {
			a.warnAuth(in.from, fmt.Errorf("stream: %w", in.authErr))
		}
		return
	}
	if in.msg != nil {
		a.stream.inBytes.Add(-int64(len(in.msg.Data)))
		a.ctr.reliableRecv.Add(1)
		a.deliver([]swim.Message{*in.msg}, nil, true)
		return
	}
	if in.answer != nil {
		pkts, err := a.m.AnswerStreamJoin(a.now(), in.pkt)
		if err != nil {
			a.ctr.rejected.Add(1)
			a.log.Debug("rejected stream join", "from", in.from, "err", err)
		}
		in.answer <- pkts
		return
	}
	if in.reply != nil {
		// A ping from another IP address than its sender claims does not
		// speak for its sender (a forger's ghosts, one a stream).
		answer := a.m.AnswerStreamPing
		if in.from.IsValid() && !joinFromClaimed(in.pkt.From.Addr, in.from, false) {
			answer = a.m.AnswerStreamPingFromOtherSource
		}
		ack, err := answer(a.now(), in.pkt)
		if err != nil {
			a.log.Debug("refused stream ping", "from", in.from, "err", err)
			in.reply <- nil
			return
		}
		in.reply <- &ack
		return
	}
	// A view on a stream from the IP address its sender claims proves the
	// host, not the claimed port (the stream's is ephemeral): it verifies
	// no one, and a held unverified sender draws the usual challenge at
	// its claimed address (swim.Member.StepSourceChecked). A view from
	// another IP address than its sender claims is not its sender
	// speaking for itself (a forger's self-announced ghosts, one a frame).
	// Joins come with answer set (answerJoin).
	// An answer read back on a stream dialled to resend a join to a seed
	// (readAnswer, which keeps only frames from the address dialled)
	// speaks for that join's token.
	step := a.m.StepSourceChecked
	switch {
	case in.from.IsValid() && !joinFromClaimed(in.pkt.From.Addr, in.from, false):
		step = a.m.StepFromOtherSource
	case in.joinToken != 0 && joinFromClaimed(in.pkt.From.Addr, in.from, true):
		step = func(now time.Duration, pkt *swim.Packet) error {
			return a.m.StepJoinStreamAnswer(now, in.joinToken, pkt)
		}
	}
	if err := step(a.now(), in.pkt); err != nil {
		a.ctr.rejected.Add(1)
		a.log.Debug("rejected packet", "from", in.from, "err", err)
	}
}

// startStreamProbe runs a stream fallback ping in a goroutine of its own.
// A ping it cannot send (no dialling slot, an address it cannot dial, an
// encoding error) is counted (Stats.StreamPingsSkipped) and not reported
// to the state machine: StreamFailed says that nothing listens at the
// target (the dial refused, reset, or not connected by the deadline),
// which the detector gate takes as evidence of a failure, and a shortage
// here is none. Nor is a ping that connected but got no usable ack (the
// stream closed, garbage, another key): something listens there. Agent
// goroutine.
func (a *Agent) startStreamProbe(sp swim.StreamProbe) {
	to, err := netip.ParseAddrPort(sp.To.Addr)
	if err != nil || !a.stream.pings.take(to) {
		a.sctr.streamSkipped.Add(1)
		a.log.Debug("stream ping not sent: no dialling slot or no address", "to", sp.To.ID, "addr", sp.To.Addr)
		return
	}
	ping := swim.Packet{Kind: swim.MsgPing, From: a.self, To: sp.To, Ping: swim.Ping{Seq: sp.Seq}, Updates: sp.Updates}
	frame, _, err := a.codec.Encode(&ping)
	if err != nil {
		a.stream.pings.release(to)
		a.ctr.encodeErr.Add(1)
		a.sctr.streamSkipped.Add(1)
		return
	}
	deadline := a.clock.start.Add(sp.Deadline)
	a.stream.wg.Add(1)
	go func() {
		defer a.stream.wg.Done()
		defer a.stream.pings.release(to)
		ack, connected := a.streamPing(to, sp, frame, deadline)
		select {
		case a.stream.results <- streamResult{probe: &sp, ack: ack, connected: connected}:
		case <-a.life.quit:
		}
	}()
}

// streamPing dials to, sends the sealed ping and waits for the target's
// ack until deadline; nil when none came, with connected true when the
// dial succeeded (something listens there).
func (a *Agent) streamPing(to netip.AddrPort, sp swim.StreamProbe, frame []byte, deadline time.Time) (ack *swim.Packet, connected bool) {
	ctx, cancel := context.WithDeadline(a.stream.ctx, deadline)
	defer cancel()
	c, done, err := a.dial(ctx, to)
	if err != nil {
		a.log.Debug("stream ping: dial failed", "to", sp.To.ID, "err", err)
		return nil, false
	}
	defer done()
	if err := c.WriteFrame(frame); err != nil {
		return nil, true
	}
	b, err := c.ReadFrame()
	if err != nil {
		a.log.Debug("stream ping: no ack", "to", sp.To.ID, "err", err)
		return nil, true
	}
	ack, err = a.codec.Decode(b)
	if err != nil {
		a.log.Debug("stream ping: bad ack", "to", sp.To.ID, "err", err)
		return nil, true
	}
	if ack.Kind != swim.MsgAck || ack.From.ID != sp.To.ID || ack.Ack.Seq != sp.Seq {
		a.log.Debug("stream ping: not the ack asked for", "to", sp.To.ID, "kind", ack.Kind, "from", ack.From.ID)
		return nil, true
	}
	return ack, true
}

// dial opens a stream to to, closed when the agent stops; done closes it
// (and forgets the close on stop). A dial in progress ends when the agent
// stops too (a SYN that is never answered would otherwise hold the caller
// for the stream timeout after Shutdown).
func (a *Agent) dial(ctx context.Context, to netip.AddrPort) (c *transport.Conn, done func(), err error) {
	dctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(a.stream.ctx, cancel)
	c, err = transport.DialStream(dctx, to, a.streamConfig())
	unhook()
	cancel()
	if err != nil {
		a.sctr.streamDialErr.Add(1)
		return nil, nil, err
	}
	a.sctr.streamsOut.Add(1)
	stop := context.AfterFunc(a.stream.ctx, func() { _ = c.Close() })
	return c, func() { stop(); _ = c.Close() }, nil
}

// streamPingFailed tells the state machine that the stream ping sp got no
// answer. Agent goroutine.
func (a *Agent) streamPingFailed(sp *swim.StreamProbe) {
	if a.cfg.streamFailed != nil {
		a.cfg.streamFailed(sp.To.ID, sp.Seq)
	}
	a.m.StreamFailed(a.now(), sp.To.ID, sp.Seq)
}

// streamResult takes a dialling goroutine's result. Agent goroutine.
func (a *Agent) streamResult(r streamResult) {
	switch {
	case r.probe != nil && r.ack != nil:
		if len(r.ack.Updates) > 0 {
			// The target's own Alive (its refutation, if it had one).
			g := *r.ack
			g.Kind, g.To = swim.MsgGossip, a.self
			if err := a.m.Step(a.now(), &g); err != nil {
				a.ctr.rejected.Add(1)
				a.log.Debug("rejected stream ack updates", "from", r.ack.From.ID, "err", err)
			}
		}
		a.m.StreamAck(a.now(), r.probe.To.ID, r.probe.Seq)
	case r.probe != nil && r.connected:
		// No verdict: the probe ends with its period, as without the
		// stream path.
	case r.probe != nil:
		a.streamPingFailed(r.probe)
	default:
		a.sendDatagrams(r.fallback)
	}
}

// streamDefaults fills and checks the stream path's settings.
func streamDefaults(cfg *Config) error {
	if cfg.StreamTimeout == 0 {
		cfg.StreamTimeout = transport.DefaultStreamTimeout
	}
	if cfg.MaxStreamConns == 0 {
		cfg.MaxStreamConns = transport.DefaultStreamMaxConns
	}
	if cfg.MaxStreamBytes == 0 {
		cfg.MaxStreamBytes = transport.DefaultStreamMaxBytes
	}
	if cfg.MaxStreamConnsPerSource == 0 {
		cfg.MaxStreamConnsPerSource = max(cfg.MaxStreamConns/4, 1)
	}
	switch {
	case cfg.StreamTimeout < 0:
		return fmt.Errorf("agent: StreamTimeout %v is negative", cfg.StreamTimeout)
	case cfg.MaxStreamConns < 0:
		return fmt.Errorf("agent: MaxStreamConns %d is negative", cfg.MaxStreamConns)
	case cfg.MaxStreamConnsPerSource < 1 || cfg.MaxStreamConnsPerSource > cfg.MaxStreamConns:
		return fmt.Errorf("agent: MaxStreamConnsPerSource %d out of range [1, MaxStreamConns %d]", cfg.MaxStreamConnsPerSource, cfg.MaxStreamConns)
	case cfg.MaxStreamBytes < 0:
		return fmt.Errorf("agent: MaxStreamBytes %d is negative", cfg.MaxStreamBytes)
	case cfg.MaxStreamMembers < 0:
		return fmt.Errorf("agent: MaxStreamMembers %d is negative", cfg.MaxStreamMembers)
	case cfg.DisableStream && cfg.StreamBind != "":
		return errors.New("agent: StreamBind is set but DisableStream turns the stream path off")
	}
	return nil
}
