package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// SetMeta replaces this member's metadata (at most swim.MaxMetaLen = 512
// bytes) and disseminates it with an incarnation bump (swim.Member.SetMeta);
// the other members report it with swim.EventUpdate and show it in
// Members. Errors: swim.ErrMetaTooLarge, swim.ErrLeft, ErrNeedsFormat2
// (non-empty metadata on an agent writing wire format 1), ErrStopped, or
// the context's.
func (a *Agent) SetMeta(ctx context.Context, meta []byte) error {
	if len(meta) > swim.MaxMetaLen {
		return fmt.Errorf("agent: %w: %d bytes", swim.ErrMetaTooLarge, len(meta))
	}
	if a.codec.Version() < 2 && len(meta) > 0 {
		return ErrNeedsFormat2
	}
	var err error
	if derr := a.call(ctx, "SetMeta", func() { err = a.m.SetMeta(meta) }); derr != nil {
		return derr
	}
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

// Keyring returns the live keyring (nil in plain mode). Rotate keys at run
// time through it: AddKey the new key on every member, then UseKey it on
// every member, then RemoveKey the old one; packets sealed with any key in
// the ring are accepted meanwhile.
func (a *Agent) Keyring() *wire.Keyring { return a.keys }

// ErrNoKeys is returned by SetAcceptPlain and SetSendPlain on an agent
// started Plain, without a keyring.
var ErrNoKeys = errors.New("agent: no keyring: start the agent with Keys (and AcceptPlain, SendPlain) to turn encryption on while running")

// ErrPlainStage is returned by SetSendPlain and SetAcceptPlain for the
// one combination no stage uses: sending plain while refusing plain. Two
// members in it cannot read each other, so a group put there all at once
// falls apart. Turning encryption on ends SendPlain before AcceptPlain;
// turning it off starts AcceptPlain before SendPlain.
var ErrPlainStage = errors.New("agent: sending plain while refusing plain packets: members in that stage cannot read each other")

// SetSendPlain switches sealing off (true) or on (false) at once, for
// every later datagram and stream frame: the second stage of turning
// encryption on in a running group (Config.AcceptPlain; memberlist's
// GossipVerifyOutgoing). ErrNoKeys on a plain agent; ErrPlainStage for
// true while plain packets are refused (call SetAcceptPlain(true) first).
func (a *Agent) SetSendPlain(on bool) error {
	if a.keys == nil {
		return ErrNoKeys
	}
	a.plainMu.Lock()
	defer a.plainMu.Unlock()
	if on && !a.sec.AcceptPlain() {
		return fmt.Errorf("%w: call SetAcceptPlain(true) on every member first", ErrPlainStage)
	}
	a.sec.SetSendPlain(on)
	return nil
}

// SetAcceptPlain switches accepting plain packets on or off at once: off
// is the last stage of turning encryption on (Config.AcceptPlain;
// memberlist's GossipVerifyIncoming). ErrNoKeys on a plain agent;
// ErrPlainStage for false while this member sends plain (call
// SetSendPlain(false) on every member first).
func (a *Agent) SetAcceptPlain(on bool) error {
	if a.keys == nil {
		return ErrNoKeys
	}
	a.plainMu.Lock()
	defer a.plainMu.Unlock()
	if !on && a.sec.SendPlain() {
		return fmt.Errorf("%w: call SetSendPlain(false) on every member first", ErrPlainStage)
	}
	a.sec.SetAcceptPlain(on)
	return nil
}

// Self returns this member's ID and advertised address.
func (a *Agent) Self() swim.Node { return a.self }

// Members returns the membership view: this member first, then every other
// member known, dead and left ones included until they are reaped
// (swim.Config.DeadRetention), sorted by ID.
// It returns nil once the agent has stopped.
func (a *Agent) Members() []Member {
	ms, _ := a.MembersContext(context.Background())
	return ms
}

// MembersContext is Members with a context bounding the wait. Both may
// be called from the agent's callbacks (ErrInCallback), as memberlist's
// delegates may call its Members: there they read the view at once, as it
// is at that point of the packet or tick the agent is processing.
func (a *Agent) MembersContext(ctx context.Context) ([]Member, error) {
	if a.inCallback() {
		return a.members(), nil
	}
	var ms []Member
	err := a.call(ctx, "Members", func() { ms = a.members() })
	return ms, err
}

func (a *Agent) members() []Member {
	ps := a.m.Members(a.now())
	out := make([]Member, len(ps))
	for i, p := range ps {
		out[i] = Member{PeerStatus: p, Self: i == 0}
	}
	slices.SortStableFunc(out[1:], func(x, y Member) int { return strings.Compare(string(x.Node.ID), string(y.Node.ID)) })
	return out
}
