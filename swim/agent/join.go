package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// Join asks the members at addrs to admit this member and waits until
// one of them answers with its view, merged into this member's (a view
// transfer, memberlist's push-pull state sync), or ctx is done. With a
// Protocol.MergeFilter only a view the filter accepted completes the
// Join: a refused view does not, nor does a member made known by its
// ping or by gossip, whose Alive no MergeFilter sees (memberlist's alive
// messages likewise reach its AliveDelegate, not its MergeDelegate), so
// a Join refused that way ends with its context and a *JoinError naming
// the filter's error. The first view to answer completes the Join; the
// other addresses' answers are merged as they come (memberlist's Join
// syncs with each address in turn and returns how many succeeded). A
// view answers from one of the addresses joined through, or, once views
// from other members have come for three protocol periods (a seed that
// advertises another address than the one dialled), from any member,
// unless the MergeFilter refused a view from an address joined through
// (swim.Member.Joining). A member already in a group that calls Join
// again (a rejoin after a partition) waits likewise for a seed's view; a
// seed that holds it alive takes that join as an anti-entropy pull, which
// it answers within its budget of pulls per sender and protocol period
// (swim.Config.PullsPerSender), so Joins repeated within a period may
// each wait for a resend, up to a ProbeInterval.
// Each address is ip:port, [ipv6]:port or host:port; a host name is resolved
// (Config.Resolve; by default the system resolver, A and AAAA records)
// and the join is sent to every address it names in the family of this
// member's advertised address (a name with none there, or a literal
// address of the other family, fails naming both families: ResolveAddrs), as memberlist
// joins every address a name resolves to. The join goes to each as a
// datagram, which a seed answers with a challenge ping and, once this
// member acks it, its view (swim's join challenges); a join unanswered
// after a ProbeInterval is resent over a stream (TCP), which a seed
// answers at once on that stream, so a member whose inbound datagrams are
// lost still joins (Stats.StreamJoins, Stats.StreamJoinAnswers). Those
// streams have 4 slots of their own, one per seed at once, and a seed
// that accepts a join's stream and does not answer gives its slot up,
// after half a ProbeInterval, to a seed that has had fewer streams
// (Stats.StreamJoinsYielded; streamJoinMax): the address at index k of
// addrs (from 0) gets its first stream at the latest at the ⌊k/4⌋+1-th
// resend, about (⌊k/4⌋+1)·ProbeInterval after Join, however many of the
// addresses before it stall, refuse streams or drop datagrams. A name that does not resolve
// fails the Join only when no address resolved at all; the others are
// logged. Join fails at once when a member refuses the join because
// another node holds this member's ID (swim.EventConflict), with a
// *ConflictError, and when every address is this member's own (nothing
// else to ask). Join may be called again, for example to rejoin after a
// partition.
//
// While Join waits, the joins unanswered are resent every ProbeInterval,
// to its addresses and to those of the other Join calls still waiting.
// When ctx ends first, Join returns its *JoinError and the resends to its
// addresses stop (swim.Member.SetJoinSeeds; all of them, StopJoin, when
// no other call waits), as memberlist's Join tries each address once and
// returns: nothing keeps knocking at addresses where no member runs. A
// view that answers later is still merged. To keep trying, call Join
// again (fdswim agent --join does, with a backoff, until --join-timeout),
// or give a ctx without a deadline. A view that cannot echo the join's
// token (a seed writing wire format 1, or any seed when this member
// writes it, WireVersion 1) answers at once, and Join returns; the
// joins are then still resent for up to three ProbeIntervals, until a
// view echoing the token comes, so that a view spoofed from a seed's
// address does not leave the joiner without its seed's answer
// (swim.Member.Join).
func (a *Agent) Join(ctx context.Context, addrs ...string) error {
	if len(addrs) == 0 {
		return errors.New("agent: Join needs at least one address")
	}
	if a.inCallback() {
		return callbackErr("Join")
	}
	addrs, err := a.resolve(ctx, addrs)
	if err != nil {
		return err
	}
	if addrs = slices.DeleteFunc(addrs, func(s string) bool { return s == a.self.Addr }); len(addrs) == 0 {
		// The state machine sends no join to itself: nothing would answer.
		return fmt.Errorf("agent: join: every address is this member's own address %s", a.self.Addr)
	}
	// The wait is driven by the agent's goroutine: it closes joined in
	// flush, right after the packet that brought the answer is processed,
	// so Join returns without polling delay.
	var jerr error
	var call uint64
	joined := make(chan struct{})
	auth0, label0, dial0, dec0 := a.ctr.authFail.Load(), a.ctr.labelMismatch.Load(), a.sctr.streamDialErr.Load(), a.ctr.decodeErr.Load()
	if err := a.call(ctx, "Join", func() {
		a.conflict.Store(nil) // a refusal of an earlier Join is not this one's
		a.join.mergeRefusal = nil
		a.join.seeds = make(map[string]bool, len(addrs)) // flush: joinOverStream
		a.join.calls++
		call = a.join.calls
		union := joinUnion(a.join.waiting, addrs)
		if jerr = a.m.Join(a.now(), union); jerr != nil {
			return
		}
		a.pruneJoinTurns(union)
		if a.joined() {
			close(joined)
			return
		}
		a.join.waiters[joined] = struct{}{}
		a.join.waiting[call] = addrs
	}); err != nil {
		return err
	}
	if jerr != nil {
		return fmt.Errorf("agent: %w", jerr)
	}
	select {
	case <-joined:
	case <-a.life.stopped:
		return ErrStopped
	case <-ctx.Done():
		// Forget the waiter and say what the join heard meanwhile, best
		// effort: a stopped agent has no waiters to keep, and one blocked
		// on a subscriber (BlockingDelivery) answers nothing, so the wait
		// is bounded (a waiter left behind is closed, unread, on joining).
		je := &JoinError{Addrs: addrs, Err: ctx.Err(), self: a.self.Addr, LabelMismatches: a.ctr.labelMismatch.Load() - label0,
			AuthFailures: a.ctr.authFail.Load() - auth0, StreamDialErrors: a.sctr.streamDialErr.Load() - dial0,
			DecodeErrors: a.ctr.decodeErr.Load() - dec0}
		// The call's end is handed over without waiting (endJoins runs
		// before the agent's next tick, which is when resends go), the
		// report only within joinReportWait.
		a.join.endedMu.Lock()
		a.join.ended = append(a.join.ended, endedJoin{call: call, waiter: joined})
		a.join.endedMu.Unlock()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), joinReportWait)
		defer cancel()
		_ = a.call(rctx, "Join", func() {
			a.endJoins()
			if r, ok := a.m.JoinRefusal(); ok {
				je.Refusal = &r
			}
			je.MergeRefusal = a.join.mergeRefusal
			if je.AuthFailures > 0 {
				je.AuthFrom = a.authLog.from
			}
		})
		return je
	}
	if c := a.conflict.Load(); c != nil {
		return &ConflictError{ID: a.self.ID, Holder: *c}
	}
	return nil
}

// endJoins forgets the Join calls whose context ended (joinState.ended):
// their waiters, and their addresses in the state machine's resends,
// which go on only to those of the calls still waiting (all stop, StopJoin,
// when none is). Agent goroutine.
func (a *Agent) endJoins() {
	a.join.endedMu.Lock()
	ended := a.join.ended
	a.join.ended = nil
	a.join.endedMu.Unlock()
	changed := false
	for _, e := range ended {
		delete(a.join.waiters, e.waiter)
		if _, ok := a.join.waiting[e.call]; ok {
			delete(a.join.waiting, e.call)
			changed = true
		}
	}
	if changed {
		union := joinUnion(a.join.waiting, nil)
		a.m.SetJoinSeeds(union)
		a.pruneJoinTurns(union)
	}
}

// joinUnion returns addrs followed by the addresses of the waiting Join
// calls not among them, in the order of the calls, each once.
func joinUnion(waiting map[uint64][]string, addrs []string) []string {
	calls := slices.Sorted(maps.Keys(waiting))
	out := slices.Clone(addrs)
	for _, c := range calls {
		for _, s := range waiting[c] {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// joinReportWait bounds how long a Join whose context ended waits for the
// agent's goroutine to report what the join heard (JoinError).
const joinReportWait = time.Second

// JoinError is Join's error when its context ends before a view answered
// the join (Join). It wraps the context's error (Err) and says what the join
// heard meanwhile:
//   - Refusal: a member answered with this member's ID held dead or left
//     at another address (swim.JoinRefusal). The members hand a dead
//     member's ID to a new address only once it has been dead or left for
//     their swim.Config.DeadReclaimTime, and, with signed self-updates,
//     only to the key bound to the ID until the entry is reaped
//     (swim.Config.DeadRetention). The join may succeed later.
//   - AuthFailures: datagrams that arrived during the join and failed
//     authentication (another key, tampering, or one side plain), the
//     last from AuthFrom. A member with another key never answers a join,
//     and the members that probe this address send what it cannot open.
//   - LabelMismatches: packets of another cluster label (Config.Label).
//   - DecodeErrors: datagrams that opened (authenticated, when sealed)
//     but did not decode: a member of another fdkit version, as a rule
//     (docs/coming-from-memberlist.md, “Versions”).
//
// All empty: nothing answered (no member at the addresses, a key
// mismatch both ways, a join sent from another address than the one
// advertised).
type JoinError struct {
	Addrs        []string
	Err          error
	Refusal      *swim.JoinRefusal
	AuthFailures uint64
	AuthFrom     netip.AddrPort
	// LabelMismatches counts packets of another cluster label (or none)
	// that arrived during the join (Stats.LabelMismatches).
	LabelMismatches uint64
	// self is this member's advertised address: a refusal that holds the
	// ID there is one of its signing key.
	self string
	// MergeRefusal is the last error this member's Protocol.MergeFilter
	// returned during the join, refusing a view that answered it
	// (memberlist's Join returns its MergeDelegate's error). A join
	// refused by the seed's MergeFilter gets no answer, so nothing here.
	MergeRefusal error
	// StreamDialErrors counts the streams (TCP) this member could not dial
	// during the join (refused or timed out; Stats.StreamDialErrors), the
	// join's resends over a stream among them: a seed whose port refuses
	// is no member listening there.
	StreamDialErrors uint64
	// DecodeErrors counts datagrams that arrived during the join, opened
	// and did not decode (Stats.DecodeErrors).
	DecodeErrors uint64
}

func (e *JoinError) Error() string {
	addrs := fmt.Sprint(e.Addrs)
	if len(e.Addrs) > joinErrorAddrs {
		// A join through thousands of addresses made each retry's log
		// line tens of KB (usr30b).
		addrs = fmt.Sprintf("%v and %d more", e.Addrs[:joinErrorAddrs], len(e.Addrs)-joinErrorAddrs)
	}
	msg := fmt.Sprintf("agent: join %s: %v", addrs, e.Err)
	if r := e.Refusal; r != nil {
		how := "dead"
		if r.Left {
			how = "left"
		}
		if r.Held.Addr == e.self {
			msg += fmt.Sprintf("; refused: the member at %s holds ID %q as %s at this member's own address (incarnation %d) "+
				"under another signing key, the one bound to the ID: restart with that key (the identity file this member "+
				"had), or with another ID, or wait until the members forget the entry (their DeadRetention)",
				r.By.Addr, r.Held.ID, how, r.Incarnation)
		} else {
			msg += fmt.Sprintf("; refused: the member at %s holds ID %q as %s at %s (incarnation %d) and keeps it from a new address "+
				"until it has been down for its DeadReclaimTime, or, with signed updates, from any key but the one bound to the ID",
				r.By.Addr, r.Held.ID, how, r.Held.Addr, r.Incarnation)
		}
	}
	if e.AuthFailures > 0 {
		msg += fmt.Sprintf("; %d datagrams that failed authentication arrived meanwhile, the last from %v (another key, or one side plain)",
			e.AuthFailures, e.AuthFrom)
	}
	if e.MergeRefusal != nil {
		msg += fmt.Sprintf("; this member's MergeFilter refused %v", e.MergeRefusal)
	}
	if e.LabelMismatches > 0 {
		msg += fmt.Sprintf("; %d packets with another cluster label arrived meanwhile (Config.Label differs)", e.LabelMismatches)
	}
	if e.StreamDialErrors > 0 {
		msg += fmt.Sprintf("; %d streams (TCP) could not be dialled meanwhile (refused or timed out): is a member listening at the address?", e.StreamDialErrors)
	}
	if e.DecodeErrors > 0 {
		msg += fmt.Sprintf("; %d datagrams arrived meanwhile that did not decode: a member of another fdkit version? (docs/coming-from-memberlist.md, Versions)", e.DecodeErrors)
	}
	if e.Refusal == nil && e.AuthFailures == 0 && e.MergeRefusal == nil && e.LabelMismatches == 0 && e.DecodeErrors == 0 {
		msg += "; no member answered: check the address, the keys (or that both sides are plain) and the cluster label, whose mismatches a member drops unanswered" +
			", and whether the seed's MergeFilter refuses this member (a refused joiner gets no answer)"
	}
	return msg
}

// joinErrorAddrs is how many of a join's addresses its error names.
const joinErrorAddrs = 8

// Unwrap returns the context's error.
func (e *JoinError) Unwrap() error { return e.Err }

// ConflictError is Join's error when a member refuses the join because
// another node, Holder, holds this member's ID alive or suspect. Holder
// may be this member's own previous process, crashed and not yet declared
// dead: once it is, a Join from a new address reclaims the ID
// (swim.Config.DeadReclaimTime), so a caller restarted on a new address
// may retry. The join's resends stop when Join returns it, as with any
// error: nothing is sent until Join is called again. Its text says both
// ways out.
type ConflictError struct {
	ID     swim.ID
	Holder swim.Node
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("agent: join refused: ID %q is already held by the member at %s; start this member with another ID, "+
		"or, if that is this member's own previous process (crashed, not yet declared dead), retry the Join: "+
		"once the members declare it dead (and after their DeadReclaimTime) the ID is reclaimed", e.ID, e.Holder.Addr)
}

// maxResolved bounds the addresses one name may add to a join: a name
// resolving to thousands of records must not make this member send
// thousands of joins.
const maxResolved = 64

// resolve turns join addresses into ip:port seeds (ResolveAddrs with
// Config.Resolve, in the family of the advertised address). It returns
// the context's error when ctx ends first, even if the resolver does not
// heed ctx (it is left to finish on its own goroutine).
func (a *Agent) resolve(ctx context.Context, addrs []string) ([]string, error) {
	type result struct {
		out []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := ResolveAddrs(ctx, a.cfg.Resolve, addrs, a.selfAddr.Addr())
		done <- result{out, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("agent: join %v: resolving: %w", addrs, ctx.Err())
	}
	out, err := r.out, r.err
	if err != nil {
		for _, e := range unjoin(err) {
			a.log.Warn("join address did not resolve", "err", e)
		}
		return nil, fmt.Errorf("agent: %w", err)
	}
	return out, nil
}

// unjoin returns the errors errors.Join joined, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// ResolveAddrs turns join addresses (ip:port, [ipv6]:port or host:port)
// into ip:port addresses, the way Join does: a literal address is kept, a
// host name is resolved with resolve (nil: the system resolver, A and AAAA
// records) into at most 64 addresses, those of family's family (IPv4 or
// IPv6: a member advertised at one is not reached, nor answered, from the
// other; every family when family is the zero Addr); an address named
// twice is kept once. A name with no address of family's family counts as
// a name that does not resolve, with an error naming both families. It
// fails only when no address resolved, joining the error of each name (a
// *net.DNSError from the system resolver stays reachable with errors.As),
// or at once for an address that is not host:port with a port from 1 to
// 65535, a literal IP that no member can be at (0.0.0.0, ::, a multicast
// group, the broadcast address: memberAddr), or a literal IP of the other
// family. A name's records that no member can be at are left out, as a
// name that does not resolve.
func ResolveAddrs(ctx context.Context, resolve func(context.Context, string) ([]netip.Addr, error), addrs []string, family netip.Addr) ([]string, error) {
	if resolve == nil {
		resolve = systemResolve
	}
	var out []string
	var failed []error
	v4 := family.Unmap().Is4()
	for _, s := range addrs {
		if ap, err := netip.ParseAddrPort(s); err == nil {
			a := netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()
			if err := memberAddr(a); err != nil {
				return nil, fmt.Errorf("join address %q: %w: want the address of a member", s, err)
			}
			if family.IsValid() && ap.Addr().Unmap().Is4() != v4 {
				return nil, fmt.Errorf("join address %q: an %s address, and this member is at %s address %s: "+
					"a member of one family neither reaches nor is answered from the other", s, familyName(!v4), familyName(v4), family.Unmap())
			}
			out = append(out, a)
			continue
		}
		host, portStr, err := net.SplitHostPort(s)
		if err != nil {
			return nil, fmt.Errorf("join address %q: want ip:port or host:port: %w", s, err)
		}
		port, err := strconv.ParseUint(portStr, 10, 16)
		if err != nil || port == 0 {
			return nil, fmt.Errorf("join address %q: port %q: want a number from 1 to 65535", s, portStr)
		}
		ips, err := resolve(ctx, host)
		if err == nil && len(ips) == 0 {
			err = errors.New("no address")
		}
		if err != nil {
			failed = append(failed, fmt.Errorf("join address %q: resolving %q: %w", s, host, err))
			continue
		}
		if family.IsValid() {
			same := make([]netip.Addr, 0, len(ips))
			for _, ip := range ips {
				if ip.Unmap().Is4() == v4 {
					same = append(same, ip)
				}
			}
			if len(same) == 0 {
				shown := make([]netip.Addr, 0, 4) // as the sockets see them: a resolver may give IPv4 in IPv6 form
				for _, ip := range ips[:min(len(ips), cap(shown))] {
					shown = append(shown, ip.Unmap())
				}
				failed = append(failed, fmt.Errorf("join address %q: %q resolved only to %s addresses %v, and this member is at %s address %s",
					s, host, familyName(!v4), shown, familyName(v4), family.Unmap()))
				continue
			}
			ips = same
		}
		n := 0
		for _, ip := range ips {
			a := netip.AddrPortFrom(ip.Unmap(), uint16(port)).String()
			if err := memberAddr(a); err != nil {
				failed = append(failed, fmt.Errorf("join address %q: %q resolved to %s: %w", s, host, ip, err))
				continue
			}
			if n++; n > maxResolved {
				break
			}
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, errors.Join(failed...)
	}
	return dedupe(out), nil
}

// familyName names the address family: IPv4 for v4, else IPv6.
func familyName(v4 bool) string {
	if v4 {
		return "IPv4"
	}
	return "IPv6"
}

// dedupe drops repeated addresses, keeping the first of each: a name
// resolving to one address many times, or given with its literal address,
// sends one join there, not one per copy.
func dedupe(addrs []string) []string {
	seen := make(map[string]bool, len(addrs))
	return slices.DeleteFunc(addrs, func(s string) bool {
		if seen[s] {
			return true
		}
		seen[s] = true
		return false
	})
}

// systemResolve is Config.Resolve's default: the system resolver's A and
// AAAA records for host.
func systemResolve(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}
