package agent

import (
	"cmp"
	"context"
	"errors"
	"net/netip"
	"slices"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// now is the state machine's clock: time since Start on the monotonic clock.
// The same reading of the wall clock is kept for the broadcast numbering
// ceiling (swim.Config.BroadcastSeqCeiling), so that the core, which reads
// no clock, is given what the agent read.
func (a *Agent) now() time.Duration {
	t := time.Now()
	a.clock.wallNs.Store(a.wallAt(t))
	return t.Sub(a.clock.start)
}

// wallAt is t's wall clock reading in Unix nanoseconds (plus the test
// skew, Config.wallSkew).
func (a *Agent) wallAt(t time.Time) int64 {
	ns := t.UnixNano()
	if a.cfg.wallSkew != nil {
		ns += int64(a.cfg.wallSkew())
	}
	return ns
}

func (a *Agent) run(ctx context.Context) {
	a.cb.goroutine.Store(goroutineID())
	defer close(a.life.stopped)
	defer func() {
		close(a.life.quit)
		a.release()
		a.sub.mu.Lock()
		closeAll(a.sub.events)
		closeAll(a.sub.messages)
		a.sub.closed = true
		a.sub.mu.Unlock()
	}()
	tick := time.NewTimer(0)
	defer tick.Stop()
	var leaveDeadline <-chan time.Time
	startLeave := func() {
		if leaveDeadline != nil {
			return
		}
		if err := a.m.Leave(a.now()); err != nil {
			a.log.Debug("leave", "err", err)
		}
		leaveDeadline = time.After(a.leaveTimeout)
	}
	done := ctx.Done()
	leaving := a.life.leaving
	packets := a.tr.Packets()
	for {
		// A due tick goes before queued packets, so that after this process
		// was stopped or starved the state machine sees the late tick (its
		// local-pause guard) before the backlog.
		select {
		case due := <-tick.C:
			a.hostTick(due)
			a.endJoins()
			a.m.Tick(a.now())
			a.flush()
			if a.m.Left() {
				return
			}
			a.schedule(tick, leaveDeadline != nil)
			continue
		default:
		}
		select {
		case <-done:
			done = nil
			startLeave()
		case <-leaving:
			leaving = nil
			startLeave()
		case <-leaveDeadline:
			return
		case <-a.life.halt:
			return
		case due := <-tick.C:
			a.hostTick(due)
			a.endJoins()
			a.m.Tick(a.now())
		case p, ok := <-packets:
			if !ok {
				a.life.err = errors.New("agent: transport closed")
				return
			}
			a.receive(p)
		case f := <-a.life.reqs:
			f()
		case in := <-a.stream.in:
			a.receiveStream(in)
		case r := <-a.stream.results:
			a.streamResult(r)
		}
		a.flush()
		if a.m.Left() {
			return
		}
		a.schedule(tick, leaveDeadline != nil)
	}
}

// schedule sets the timer to the state machine's next deadline, but at
// least every TickInterval (every leavePoll while leaving).
func (a *Agent) schedule(t *time.Timer, leaving bool) {
	wait := a.cfg.TickInterval
	if leaving {
		wait = min(wait, leavePoll)
	}
	if at, ok := a.m.NextDeadline(); ok {
		wait = min(wait, max(0, at-a.now()))
	}
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	t.Reset(wait)
}

func (a *Agent) receive(p transport.Packet) {
	a.ctr.recv.Add(1)
	a.ctr.recvBytes.Add(uint64(len(p.Data)))
	pkt, err := a.codec.DecodeDatagram(p.Data, a.m.AckSender)
	if err != nil {
		// A *wire.DecodeError about the payload comes after the envelope was
		// opened (authenticated, in encrypted mode). Everything else, an
		// oversized datagram included, never got past the envelope: an
		// unknown envelope byte, a short packet, a wrong key, the wrong mode.
		var de *wire.DecodeError
		if errors.Is(err, wire.ErrReplay) {
			a.ctr.replayed.Add(1)
		} else if errors.Is(err, wire.ErrLabel) {
			a.ctr.labelMismatch.Add(1) // another group's packet
			a.warnLabel(p.From, err)
		} else if errors.Is(err, wire.ErrUnknownKind) {
			a.ctr.unknownKind.Add(1) // a later version's message: not an error
		} else if errors.As(err, &de) && !errors.Is(err, wire.ErrOversize) {
			a.ctr.decodeErr.Add(1)
		} else {
			a.ctr.authFail.Add(1)
			a.authLog.from = p.From
			a.warnAuth(p.From, err)
			return
		}
		a.log.Debug("dropped packet", "from", p.From, "err", err)
		return
	}
	pkt.WireLen = len(p.Data) // what its sender paid, in the budgets of unvouched senders
	if pkt.Kind == swim.MsgJoin && !joinFromClaimed(pkt.From.Addr, p.From, true) {
		a.ctr.rejected.Add(1)
		a.log.Debug("join refused: it did not come from the address it claims", "from", p.From, "claimed", pkt.From.Addr)
		return
	}
	if pkt.Kind == swim.MsgAck && pkt.From.ID == "" {
		// An ack without its sender's ID that none of this member's probe
		// pings matches (DecodeDatagram filled in the others' sender, the
		// member the ping with its number went to, whose address the
		// source is checked against below, as a named sender's is): the
		// state machine refuses and counts it (swim.Stats.AcksUnmatched).
		a.ctr.rejected.Add(1)
		a.log.Debug("rejected packet", "from", p.From, "err", a.m.Step(a.now(), pkt))
		return
	}
	if pkt.From.Addr == "" && (pkt.Kind == swim.MsgAck || pkt.Kind == swim.MsgNack) && p.From.IsValid() && a.m.State(pkt.From.ID) == 0 {
		// Wire format 2 leaves the sender's address out of acks and
		// nacks; the state machine uses the one it holds, and needs the
		// datagram's source only for a sender it does not know (whom it
		// asks for its view). Only those: a message of SendToAddress
		// leaves the address out so that no view is asked of its sender.
		pkt.From.Addr = netip.AddrPortFrom(p.From.Addr().Unmap(), p.From.Port()).String()
	}
	claimed, port := pkt.From.Addr, true
	if claimed == "" && p.From.IsValid() {
		// An ack or nack of a known member: from the host it is held at
		// (the same IP address; a NAT may remap the port).
		if ps, ok := a.m.Member(pkt.From.ID, a.now()); ok {
			claimed, port = ps.Node.Addr, false
		}
	}
	step := a.m.Step
	if p.From.IsValid() && !joinFromClaimed(claimed, p.From, port) {
		// Not from the address its sender claims, or (an ack or nack)
		// not from the host it is held at: the sender does not speak for
		// itself (a forger's self-announced ghosts), and an ack answers
		// no probe and verifies no member (acks forged from another host
		// to keep a crashed member alive or to verify ghosts announced
		// there; swim: onAck).
		step = a.m.StepFromOtherSource
	}
	if err := step(a.now(), pkt); err != nil {
		a.ctr.rejected.Add(1)
		a.log.Debug("rejected packet", "from", p.From, "err", err)
	}
}

// joinFromClaimed reports whether a join that arrived from src may be
// answered at the address it claims: the same IP address and, for a
// datagram (port true), the same port; a stream comes from an ephemeral
// port, so only its address is compared. A join is answered with the
// whole view sent to the claimed address, so without this check one small
// forged join (a key holder's, or anyone's in plain mode) reflects up to
// hundreds of times its size at any address (memberlist answers a join on
// the connection it came on, which has the same effect). src invalid
// (a test transport that does not say) is not checked.
func joinFromClaimed(claimed string, src netip.AddrPort, port bool) bool {
	if !src.IsValid() {
		return true
	}
	c, err := netip.ParseAddrPort(claimed)
	if err != nil {
		return false
	}
	if c.Addr().Unmap() != src.Addr().Unmap() {
		return false
	}
	return !port || c.Port() == src.Port()
}

// warnAuth logs a datagram or stream frame that failed authentication at
// Warn level, at most once per authLogEvery; the others are counted into
// the next warning (a flood of forged packets must not flood the log).
// Stats.AuthFailures and Stats.StreamAuthFailures count them all; the
// line's total is their sum.
func (a *Agent) warnAuth(from netip.AddrPort, err error) {
	a.warnRated(&a.authLog, "dropped a packet that failed authentication (wrong key, tampering, or not sealed as this group's packets are)",
		from, err, a.ctr.authFail.Load()+a.sctr.streamAuth.Load())
}

// warnLabel logs a datagram or stream frame of another cluster (its label
// is not this member's: ErrLabel) at Warn level, at most once per
// authLogEvery, as warnAuth does (usr29 F4: the member dropping them said
// nothing, where memberlist logs each). Stats.LabelMismatches counts them
// all.
func (a *Agent) warnLabel(from netip.AddrPort, err error) {
	a.warnRated(&a.labelLog, "dropped a packet of another cluster (its cluster label is not this member's --label / Config.Label)",
		from, err, a.ctr.labelMismatch.Load())
}

// warnRated logs msg at Warn level unless l logged one less than
// authLogEvery ago, and counts the ones it does not log into the next.
func (a *Agent) warnRated(l *authLog, msg string, from netip.AddrPort, err error, total uint64) {
	now := a.now()
	if l.ok && now-l.at < authLogEvery {
		l.quiet++
		return
	}
	a.log.Warn(msg, "from", from, "err", err, "unlogged_since_last", l.quiet, "total", total)
	l.at, l.ok, l.quiet = now, true, 0
}

// flush sends what the state machine produced and publishes its events,
// after those of the calls served while the agent last waited for a
// subscriber (sendServed).
func (a *Agent) flush() {
	if st := a.m.Stats(); st != a.pub.last {
		a.pub.last = st
		a.pub.mu.Lock()
		a.pub.stats = st
		a.pub.mu.Unlock()
	}
	a.lhm.Store(int32(a.m.LocalHealthMultiplier()))
	rd := a.m.Ready()
	events := rd.Events
	a.sendPackets(rd.Packets)
	for _, sp := range rd.StreamProbes {
		a.startStreamProbe(sp)
	}
	if sv := a.served; len(sv.msgs)+len(sv.states)+len(sv.events) > 0 {
		a.served = servedOut{}
		a.deliver(sv.msgs, sv.states, false)
		a.publish(sv.events)
	}
	a.deliver(rd.Messages, rd.RemoteStates, false)
	a.publish(events)
}

// servedOut holds what the calls served while the agent waited for a
// subscriber produced besides packets, for the next flush.
type servedOut struct {
	msgs   []swim.Message
	states []swim.RemoteState
	events []swim.Event
}

// sendServed sends the packets of a call served while the agent waits for
// a subscriber (block) and keeps the rest for the next flush: without it a
// producer calling SendTo beside a reader that does not keep up piled its
// datagrams in the state machine, unsent and unbounded, for as long as
// the wait lasted (atk27 F7). Agent goroutine.
func (a *Agent) sendServed() {
	rd := a.m.Ready()
	a.sendPackets(rd.Packets)
	for _, sp := range rd.StreamProbes {
		a.startStreamProbe(sp)
	}
	a.served.msgs = append(a.served.msgs, rd.Messages...)
	a.served.states = append(a.served.states, rd.RemoteStates...)
	a.served.events = append(a.served.events, rd.Events...)
}

// sendPackets sends packets: views to one member in a run over a stream,
// joins to seeds over streams where they go so (joinOverStream), the rest
// as datagrams.
func (a *Agent) sendPackets(pks []swim.Packet) {
	var seedJoins []int // joins resent to seeds over a stream: sendSeedJoins
	var seedTo []netip.AddrPort
	for i := 0; i < len(pks); {
		if n := a.viewRunLen(pks[i:]); n > 0 {
			if to, err := netip.ParseAddrPort(pks[i].To.Addr); err == nil {
				a.sctr.streamSyncs.Add(1)
				a.sendViewStream(to, pks[i:i+n], false)
				i += n
				continue
			}
		}
		if a.joinOverStream(&pks[i]) {
			if to, err := netip.ParseAddrPort(pks[i].To.Addr); err == nil {
				seedJoins = append(seedJoins, i)
				seedTo = append(seedTo, to)
				i++
				continue
			}
		}
		a.sendDatagrams(pks[i : i+1])
		i++
	}
	a.sendSeedJoins(pks, seedJoins, seedTo)
}

// joinOverStream reports whether p, a packet to send, is a join to a seed
// (the state machine leaves a seed's ID empty) that this Join already
// sent there as a datagram: a resend, which goes over a stream. A seed
// challenges a join datagram (swim's join challenges) and answers one on
// a stream at once, on that stream (writeView reads it), so a joiner
// whose inbound datagrams are lost, or whose challenge or its ack was
// lost, joins one ProbeInterval later; a stream that fails sends the
// join as a datagram. Agent goroutine.
func (a *Agent) joinOverStream(p *swim.Packet) bool {
	if p.Kind != swim.MsgJoin || p.To.ID != "" || p.From.ID != a.self.ID {
		return false
	}
	if a.stream.listener == nil || a.join.seeds == nil || !a.join.seeds[p.To.Addr] {
		if a.join.seeds != nil {
			a.join.seeds[p.To.Addr] = true
		}
		return false
	}
	return true
}

// sendSeedJoins sends the joins pkts[at[i]] to the seeds to[i] over
// streams (sendViewStream), those to the seeds that have had the fewest
// join streams first, in their order among equals: each takes a slot
// while there is one, or takes over a slot from a seed that has had more
// (takeJoinSlot), so seeds that come first but stall, or refuse streams,
// do not take every slot at each resend. Agent goroutine.
func (a *Agent) sendSeedJoins(pkts []swim.Packet, at []int, to []netip.AddrPort) {
	if len(at) == 0 {
		return
	}
	turns := a.joinTurnsOf(to)
	order := make([]int, len(at))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(turns[x], turns[y]) })
	for _, k := range order {
		a.sctr.streamJoins.Add(1)
		a.sendViewStream(to[k], pkts[at[k]:at[k]+1], true)
	}
}

// viewRunLen is viewRun when the stream path is on, else 0.
func (a *Agent) viewRunLen(pkts []swim.Packet) int {
	if a.stream.listener == nil {
		return 0
	}
	return viewRun(pkts)
}

// sendDatagrams seals and sends packets as datagrams. Agent goroutine.
func (a *Agent) sendDatagrams(pkts []swim.Packet) {
	for i := range pkts {
		p := &pkts[i]
		to, err := netip.ParseAddrPort(p.To.Addr)
		if err != nil {
			a.ctr.sendErr.Add(1)
			a.log.Debug("bad destination address", "to", p.To, "err", err)
			continue
		}
		b, n, err := a.codec.Encode(p)
		if err != nil {
			a.ctr.encodeErr.Add(1)
			a.log.Warn("encode failed", "kind", p.Kind, "err", err)
			continue
		}
		if n < len(p.Updates) {
			a.log.Debug("updates cut to fit the packet", "kept", n, "of", len(p.Updates))
		}
		if err := a.tr.Send(to, b); err != nil {
			a.ctr.sendErr.Add(1)
			a.log.Debug("send failed", "to", to, "err", err)
			continue
		}
		a.ctr.sent.Add(1)
		a.ctr.sentBytes.Add(uint64(len(b)))
	}
}

// publish hands events to the subscribers and releases waiting joins.
// Agent goroutine.
func (a *Agent) publish(events []swim.Event) {
	if len(events) == 0 {
		a.releaseJoins() // a view from known members raises no event
		return
	}
	a.markSources(events)
	for _, e := range events {
		if e.Kind == swim.EventStreamOnly {
			a.log.Warn("member reachable only over the stream path (TCP): its UDP probes failed, directly and through others; the network may drop UDP to or from it",
				"id", e.Node.ID, "addr", e.Node.Addr, "stream_only_total", a.m.Stats().StreamOnly)
		}
		if e.Kind == swim.EventConflict {
			// Only a holder named by an answer to the Join refuses it
			// (swim.Member.JoinConflict): the same event shape (another
			// node, this member held) also reports a newcomer this member
			// refused as the ID's holder, which must not fail the
			// holder's own Joins, even one waiting when a late join of the
			// newcomer arrives.
			if h, ok := a.m.JoinConflict(); ok && e.Held == a.self && len(a.join.waiters) > 0 {
				a.conflict.Store(&h)
			}
			a.log.Warn("member ID conflict: two nodes claim one ID; the one held is kept and the other refused",
				"id", e.Node.ID, "claimed_by", e.Node.Addr, "held", e.Held.Addr, "self", e.Held == a.self)
		}
	}
	var wait func(swim.Event) bool
	if a.cfg.BlockingDelivery {
		wait = func(swim.Event) bool { return true }
	}
	deliverAll(a, &a.sub.events, &a.sub.eventSnap, events, wait, &a.ctr.evDrop)
	// Waiting joins are released after the events are published, so a
	// subscriber has the join event of the member that answered by the
	// time Join returns.
	a.releaseJoins()
}

// releaseJoins closes the waiters of Join once it can return (joined).
// A join refused for an ID conflict is still pending in the state
// machine: its resends stop (StopJoin), as those of a Join whose context
// ended do, since every waiting Join returns the *ConflictError; the next
// Join starts them again. Agent goroutine.
func (a *Agent) releaseJoins() {
	if len(a.join.waiters) > 0 && a.joined() {
		for ch := range a.join.waiters {
			close(ch)
			delete(a.join.waiters, ch)
		}
		clear(a.join.waiting)
		if a.m.Joining() {
			a.m.StopJoin()
			a.pruneJoinTurns(nil)
		}
	}
}

// joined reports whether a Join can return: a view transfer answered the
// join (swim.Member.Joining), or another node holds this member's ID.
// Agent goroutine only.
func (a *Agent) joined() bool {
	return a.conflict.Load() != nil || !a.m.Joining()
}

// do runs f on the agent's goroutine and waits for it (call).
func (a *Agent) do(ctx context.Context, f func()) error { return a.call(ctx, "", f) }

// call runs f on the agent's goroutine and waits for it; method names the
// caller for ErrInCallback, returned at once when the caller is one of the
// application's callbacks, which the agent's goroutine is running
// (callbacks.go). It stops waiting when Shutdown is called: a call made
// while the agent goroutine is stuck (in a callback that blocks) must not
// keep Shutdown's caller waiting for it. A context already ended when
// call starts runs nothing and returns its error (the select below picks
// at random among ready cases, so it would hand f over about half the
// time); once f is handed over it runs whatever ctx does.
func (a *Agent) call(ctx context.Context, method string, f func()) error {
	if a.inCallback() {
		return callbackErr(method)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan struct{})
	select {
	case a.life.reqs <- func() { f(); close(done) }:
	case <-a.life.stopped:
		return ErrStopped
	case <-a.life.halt:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-a.life.stopped:
		return ErrStopped
	}
}
