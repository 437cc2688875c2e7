package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/fdkit/fdkit/swim"
)

// Application messages: the agent's side of swim's Broadcast, SendTo and
// LocalState (docs/algorithms.md, “SWIM: application messages”), in the
// roles of memberlist's Delegate: Broadcast and SendTo queue, Receive
// delivers, Config.LocalState and Config.MergeRemoteState exchange the
// application's state with anti-entropy syncs.

// DefaultMessageBuffer is Receive's default channel buffer.
const DefaultMessageBuffer = 256

// DefaultMaxReceiveBytes is Config.MaxReceiveBytes's default: 8 MiB.
const DefaultMaxReceiveBytes = 8 << 20

// ErrNeedsFormat2 is returned by Broadcast, SendTo, SendToAddress,
// SendReliable and SetMeta on an agent that writes wire format 1
// (Config.WireVersion 1), which has no field for application messages or
// metadata, and by Start for such an agent given Protocol.Meta,
// LocalState or Protocol.AckPayload.
var ErrNeedsFormat2 = errors.New("agent: application messages, metadata and state need wire format 2 (WireVersion is 1)")

// ErrToSelf is returned by SendTo and SendReliable for this member's own
// ID, and by SendToAddress for its own address: a member's messages go to
// the others, and the application has its own data at hand (memberlist
// sends them over the network to itself; fdkit's state machine drops a
// packet under its own ID, so the send would be lost).
var ErrToSelf = errors.New("agent: a message to this member itself (skip this member, Self(), when sending to Members())")

// Broadcast queues data (1 to swim.MaxBroadcastLen = 1,024 bytes) for
// delivery to every other member, best effort, piggybacked on the
// protocol's packets; a non-empty key (at most 255 bytes) supersedes this
// member's queued broadcast with the same key (swim.Member.Broadcast).
// Members receive it on their Receive channels; members writing wire
// format 1 receive but do not pass it on. Errors: swim.ErrMessageSize,
// swim.ErrLeft, ErrNeedsFormat2, ErrStopped, or the context's.
func (a *Agent) Broadcast(ctx context.Context, key string, data []byte) error {
	if a.codec.Version() < 2 {
		return ErrNeedsFormat2
	}
	var err error
	if derr := a.call(ctx, "Broadcast", func() { err = a.m.BroadcastAt(a.broadcastClock(), key, data) }); derr != nil {
		return derr
	}
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

// broadcastClock is the number a broadcast made now is given at least
// (swim.Member.BroadcastAt): the wall clock in Unix nanoseconds when the
// agent sets the numbering ceiling, so that its numbers follow the
// receivers' ceilings and pass any forged number below them once the
// clock does; 0 (one above the last) under a ceiling of the
// application's.
func (a *Agent) broadcastClock() uint64 {
	if !a.clock.clockSeq {
		return 0
	}
	a.now() // reads the wall clock
	return uint64(max(a.clock.wallNs.Load(), 0))
}

// SendTo sends data to the member id in one datagram, best effort: no
// acknowledgement, no retry (memberlist's SendBestEffort). data must fit
// one packet with both members' IDs and addresses (about MaxPacketSize
// minus 100 bytes for short IDs). Errors: ErrToSelf (id is this
// member's), swim.ErrUnknownMember (id not alive or suspect here),
// swim.ErrMessageSize, swim.ErrLeft, ErrNeedsFormat2, ErrStopped, or the
// context's.
func (a *Agent) SendTo(ctx context.Context, id swim.ID, data []byte) error {
	if id == a.self.ID {
		return ErrToSelf
	}
	if a.codec.Version() < 2 {
		return ErrNeedsFormat2
	}
	var err error
	if derr := a.call(ctx, "SendTo", func() { err = a.m.SendTo(a.now(), id, data) }); derr != nil {
		return derr
	}
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

// deliver hands received messages to the Receive subscribers and states to
// Config.MergeRemoteState; reliable says that msgs is one reliable
// message (SendReliable), else they came in datagrams. Agent goroutine.
func (a *Agent) deliver(msgs []swim.Message, states []swim.RemoteState, reliable bool) {
	if len(msgs) > 0 {
		var wait func(swim.Message) bool
		if a.cfg.BlockingMessages {
			wait = func(m swim.Message) bool { return blockOn(m, reliable) }
		}
		deliverAll(a, &a.sub.messages, &a.sub.messageSnap, msgs, wait, &a.ctr.msgDrop)
	}
	if a.cfg.MergeRemoteState != nil {
		for _, s := range states {
			a.mergeRemoteState(s)
		}
	}
}

// blockOn reports whether, with Config.BlockingMessages, the agent waits
// for a full Receive channel to take m rather than drop it: for a
// broadcast, a reliable message, and a direct message that a member held
// at its address sent from there (swim.Message.FromHeldAddr). A direct
// message from anyone else (a stranger, or a forger under a member's ID)
// is dropped, so that an outsider's flood cannot throttle the agent
// through a reader slower than the flood (user46 M6).
func blockOn(m swim.Message, reliable bool) bool {
	return reliable || m.Broadcast || m.FromHeldAddr
}
