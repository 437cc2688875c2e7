package agent

import (
	"context"
	"net/netip"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
)

// Views over a stream, outgoing: a view larger than one datagram (and the
// join of a push-pull, or a join resent to a seed) written as frames on a
// dialled stream (sendViewStream, writeView, writeFrames), and the
// answer to a join read on that stream (readAnswer). The listener side is
// stream.go.

// sendViewStream sends a run of packets to one member (a view: MsgSync
// packets, maybe followed by the MsgJoin of a push-pull) over one stream.
// Each packet is sealed just before it is written, so that its timestamp
// is its sending time (the replay check refuses what arrives more than its
// window after sealing). If the stream fails, the packets are handed back
// to be sent as datagrams, sealed again. A join resent to a seed
// (joinOverStream) takes its slot from the joins' (takeJoinSlot), a view
// one of the views' (streamslots.go), apart from the stream pings': a
// member that holds the streams of views open (an exchange's view
// request it never answers) cannot keep this one from pinging others
// over a stream. Without a slot, the packets go as datagrams. Agent
// goroutine.
func (a *Agent) sendViewStream(to netip.AddrPort, pkts []swim.Packet, seedJoin bool) {
	ctx, release := a.stream.ctx, func() { a.stream.views.release(to) }
	if seedJoin {
		js := a.takeJoinSlot(to)
		if js == nil {
			a.sendDatagrams(pkts)
			return
		}
		ctx, release = js.ctx, func() { a.releaseJoinSlot(to, js) }
	} else if !a.stream.views.take(to) {
		a.sendDatagrams(pkts)
		return
	}
	keep := make([]swim.Packet, len(pkts))
	for i := range pkts {
		keep[i] = pkts[i]
		keep[i].Updates = append([]swim.Update(nil), pkts[i].Updates...)
	}
	a.stream.wg.Add(1)
	go func() {
		defer a.stream.wg.Done()
		defer release()
		err := a.writeView(ctx, to, keep, seedJoin)
		if err == nil || a.stream.ctx.Err() == nil && ctx.Err() != nil {
			return // sent, or its slot taken over: the join is resent
		}
		a.log.Debug("view over a stream failed; sending datagrams", "to", to, "err", err)
		a.sctr.streamFallbacks.Add(1)
		select {
		case a.stream.results <- streamResult{fallback: keep}:
		case <-a.life.quit:
		}
	}()
}

// writeView dials to and writes pkts, each sealed as it goes; the stream
// is closed when ctx ends. When the last packet is a join, the answer is
// read back (readAnswer); seedJoin says that join is one resent to a seed
// of this member's Join (sendViewStream), whose answer speaks for the
// join's token.
func (a *Agent) writeView(ctx context.Context, to netip.AddrPort, pkts []swim.Packet, seedJoin bool) error {
	c, done, err := a.dial(ctx, to)
	if err != nil {
		return err
	}
	defer done()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	if err := a.writeFrames(c, pkts); err != nil {
		return err
	}
	if last := &pkts[len(pkts)-1]; last.Kind == swim.MsgJoin {
		var token uint64
		if seedJoin {
			token = last.JoinToken
		}
		a.readAnswer(c, to, token)
	}
	return nil
}

// writeFrames writes pkts on c, each sealed as it goes, counted in
// PacketsSent and BytesSent; a packet that cannot be encoded is counted
// (EncodeErrors) and skipped. It returns the first write error, and
// writes nothing after it.
func (a *Agent) writeFrames(c *transport.Conn, pkts []swim.Packet) error {
	for i := range pkts {
		b, n, err := a.codec.Encode(&pkts[i])
		if err != nil {
			a.ctr.encodeErr.Add(1)
			a.log.Warn("encode failed", "kind", pkts[i].Kind, "err", err)
			continue
		}
		if n < len(pkts[i].Updates) {
			a.log.Debug("updates cut to fit the packet", "kept", n, "of", len(pkts[i].Updates))
		}
		if err := c.WriteFrame(b); err != nil {
			return err
		}
		a.ctr.sent.Add(1)
		a.ctr.sentBytes.Add(uint64(len(b)))
	}
	return nil
}

// readAnswer reads what the member at to writes back on c after a join
// (swim.Member.AnswerStreamJoin: its view, to a joiner it has not
// verified) until it closes c, and hands each packet to the agent's
// goroutine as if it had come on an inbound stream from to. Only views
// and view requests are taken, up to MaxStreamMembers updates, within
// the stream's deadline: the first frame of the member dialled within
// answerIdle of the join, each next one within answerIdle of the last,
// and all of them within answerWhole of the join (Stats.StreamAnswersIdle).
// A member answers at once, and one that sends nothing, or only frames
// dropped here, held the stream and its dialling slot for the whole
// StreamTimeout, while the join was resent over a new stream every
// ProbeInterval (issue 27, F4 and user43 F1); a member that predates
// answers on the stream closes c after reading the join. The stream speaks
// only for the member dialled: a frame whose sender claims another address
// than to, or another ID than the first frame's, is dropped and counted
// (Stats.StreamAnswersForeign), and does not restart the idle wait, for
// the agent would take a join from such a sender as that member speaking
// from its own host and answer it at its claimed address, another port of
// the seed's host (issue 27, user42 F1), and would admit each such sender
// as its own word past the unverified quota (user42 F2). What ends the
// reading is counted as on an inbound stream (serveStream); the join is
// resent. token, when not 0, is that of the join written on c, a join
// resent to a seed: the views read back answer it as the seed's own
// answer (swim.Member.StepJoinStreamAnswer), which a view from a seed
// writing wire format 1 could not otherwise be, lacking a field for the
// token. Dialling goroutine.
func (a *Agent) readAnswer(c *transport.Conn, to netip.AddrPort, token uint64) {
	updates, view, foreign := 0, false, 0
	var speaker swim.ID
	named := false
	start := time.Now()
	whole := start.Add(a.stream.answerWhole)
	idle := start.Add(a.stream.answerIdle) // restarted by progress only
	for {
		wait := min(time.Until(idle), time.Until(whole))
		if wait <= 0 {
			// ReadFrameWithin takes 0 for no idle limit: the limit is up.
			a.sctr.streamAnswersIdle.Add(1)
			a.log.Debug("answer to a join: no progress within the idle limit, or the whole answer over its limit", "from", to, "after", time.Since(start))
			return
		}
		b, err := c.ReadFrameWithin(wait)
		if err != nil {
			a.streamReadError(c, err)
			return
		}
		pkt, _, err := a.codec.DecodeFrame(b, 0)
		if err != nil {
			a.refusedFrame(c, err)
			return
		}
		if pkt.Kind != swim.MsgSync && pkt.Kind != swim.MsgJoin {
			a.sctr.streamGarbage.Add(1)
			a.log.Debug("unexpected answer to a join on its stream", "from", to, "kind", pkt.Kind)
			return
		}
		if updates += len(pkt.Updates); updates > a.cfg.MaxStreamMembers {
			a.sctr.streamOversize.Add(1)
			a.log.Debug("answer to a join over the member cap", "from", to, "cap", a.cfg.MaxStreamMembers)
			return
		}
		if !joinFromClaimed(pkt.From.Addr, to, true) || named && pkt.From.ID != speaker {
			a.sctr.streamAnswersForeign.Add(1)
			if foreign++; foreign == 1 {
				a.log.Debug("dropped answer frames not from the member dialled", "to", to, "from", pkt.From.ID, "addr", pkt.From.Addr)
			}
			continue
		}
		speaker, named = pkt.From.ID, true
		if pkt.Kind == swim.MsgSync && !view {
			view = true
			a.sctr.streamJoinAnswers.Add(1)
		}
		if !a.handIn(streamIn{pkt: pkt, from: to, joinToken: token}) {
			return
		}
		idle = time.Now().Add(a.stream.answerIdle)
	}
}

// viewRun returns how many packets from pkts[0] form a view for one
// member worth a stream: at least two MsgSync packets to one address (a
// view larger than one datagram), and the MsgJoin to the same address
// that may follow them (push-pull's pull); 0 when pkts[0] starts none.
func viewRun(pkts []swim.Packet) int {
	if pkts[0].Kind != swim.MsgSync {
		return 0
	}
	to := pkts[0].To.Addr
	n := 1
	for n < len(pkts) && pkts[n].Kind == swim.MsgSync && pkts[n].To.Addr == to {
		n++
	}
	if n < 2 {
		return 0
	}
	if n < len(pkts) && pkts[n].Kind == swim.MsgJoin && pkts[n].To.Addr == to {
		n++
	}
	return n
}
