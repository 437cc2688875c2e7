package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

// joinBackoff is the backoff of --join attempts: the first attempt waits
// first for an answer, each later one twice as long up to max, with ±20 %
// jitter so that members started together do not retry in step.
type joinBackoff struct{ first, max time.Duration }

// defaultJoinBackoff is the backoff of fdswim agent --join.
func defaultJoinBackoff() joinBackoff {
	return joinBackoff{first: 500 * time.Millisecond, max: 8 * time.Second}
}

// joinTarget is one --join entry: a host (IP literal or name) and a port.
type joinTarget struct{ host, port string }

func (t joinTarget) String() string { return net.JoinHostPort(t.host, t.port) }

// parseJoin splits the --join entries into hosts and ports; a host may be
// an IP address or a name resolved at every attempt, at most maxHostName
// bytes. Its errors echo at most echoMax bytes of an entry.
func parseJoin(entries []string) ([]joinTarget, error) {
	var out []joinTarget
	for _, e := range entries {
		host, port, err := net.SplitHostPort(e)
		var ae *net.AddrError
		if errors.As(err, &ae) {
			err = errors.New(ae.Err) // its Addr is the whole entry: echoed once, clipped
		}
		switch {
		case err != nil:
		case host == "":
			err = errors.New("missing host")
		case len(host) > maxHostName:
			err = fmt.Errorf("the host is %d bytes, at most %d (a DNS name)", len(host), maxHostName)
		default:
			if n, perr := strconv.ParseUint(port, 10, 16); perr != nil || n == 0 {
				err = fmt.Errorf("port %s is not a number from 1 to 65535", quoteArg(port))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("--join %s: want host:port or ip:port: %v", quoteArg(e), err)
		}
		out = append(out, joinTarget{host, port})
	}
	return out, nil
}

// maxHostName is the longest host name --join takes: 253 bytes, the
// longest DNS name in text (RFC 1035, 2.3.4: 255 bytes on the wire).
const maxHostName = 253

// echoMax bounds what an error or a log line echoes of a value given on
// the command line (quoteArg).
const echoMax = 256

// quoteArg quotes s for an error message, cut to its first echoMax bytes (at
// a character boundary) with its length noted when longer.
func quoteArg(s string) string {
	if len(s) <= echoMax {
		return fmt.Sprintf("%q", s)
	}
	cut := echoMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes in all)", s[:cut], len(s))
}

// resolveJoin turns the targets into ip:port addresses as agent.Join
// does (agent.ResolveAddrs): names resolve to every address of self's
// family; one with none of that family fails, as a name that does not
// resolve, and so does a literal address of the other family. It fails
// only when no target
// gave an address; the error lists each failure.
func resolveJoin(ctx context.Context, lookup func(context.Context, string) ([]netip.Addr, error), targets []joinTarget, self netip.Addr) ([]string, error) {
	addrs := make([]string, len(targets))
	for i, t := range targets {
		addrs[i] = t.String()
	}
	return agent.ResolveAddrs(ctx, lookup, addrs, self)
}

// joinWithRetry resolves the targets and joins through them, again with a
// growing wait (b.first doubling to b.max) until a member
// answers, ctx ends or the deadline (--join-timeout; 0: none) passes. join
// is agent.Join; it returns when a member answered or its context ended.
// A refusal for an ID conflict (*agent.ConflictError) is retried too: the
// live holder may be this member's own crashed process, not yet declared
// dead, whose ID it reclaims once it is.
func joinWithRetry(ctx context.Context, log *slog.Logger, join func(context.Context, ...string) error,
	lookup func(context.Context, string) ([]netip.Addr, error), targets []joinTarget, self netip.Addr, deadline time.Duration, b joinBackoff) error {
	if deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, deadline)
		defer cancel()
	}
	wait := b.first
	var heard joinHeard
	for attempt := 1; ; attempt++ {
		// An attempt lasts its wait: the lookup and the wait for an answer
		// share it, so a hanging resolver does not stall the retries.
		jitter := time.Duration(float64(wait) * (0.8 + 0.4*rand.Float64()))
		actx, cancel := context.WithTimeout(ctx, jitter)
		addrs, err := resolveJoin(actx, lookup, targets, self)
		if err == nil {
			err = join(actx, addrs...)
			if err == nil {
				cancel()
				return nil
			}
		}
		heard.add(err)
		var ce *agent.ConflictError
		conflict := errors.As(err, &ce)
		if conflict || isLookupErr(err) {
			// A refusal, or a resolver's cached "no such host", comes at
			// once: the attempt still lasts its wait (no busy loop of
			// lookups and warnings).
			<-actx.Done()
		}
		cancel()
		if ctx.Err() != nil {
			if conflict {
				return heldFor(ctx, ce, deadline, attempt)
			}
			return giveUp(ctx, targets, self, deadline, attempt, err, heard)
		}
		if !conflict && !errors.Is(err, context.DeadlineExceeded) && !isLookupErr(err) {
			return err // stopped: retrying does not help
		}
		if conflict {
			// The holder may be this member's previous process, crashed
			// and not yet declared dead: once it is, this member reclaims
			// its ID (swim.Config.DeadReclaimTime). Wait for that.
			log.Warn("join refused: the ID is held by a live member at another address; retrying until it is declared dead (this member restarted on a new address) or --join-timeout",
				"holder", ce.Holder.Addr, "attempt", attempt)
		} else {
			log.Warn("join attempt failed; retrying", "join", joinList(targets), "attempt", attempt, "err", err)
		}
		wait = min(2*wait, b.max)
	}
}

// heldFor is the error of a join refused for an ID conflict until the
// deadline: the holder stayed alive all along, so it is not this member's
// own crashed process (that would have been declared dead and its ID
// reclaimed) unless --join-timeout is shorter than the others take to
// declare it.
func heldFor(ctx context.Context, held *agent.ConflictError, deadline time.Duration, attempts int) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ctx.Err()
	}
	return fmt.Errorf("join refused: ID %q is held by the live member at %s for all of --join-timeout %v (attempts: %d): "+
		"start this member with another ID, or, if that is this member's previous process, give a --join-timeout longer than "+
		"the others take to declare it dead (plus their --dead-reclaim-time)", held.ID, held.Holder.Addr, deadline, attempts)
}

func isLookupErr(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de)
}

// joinHeard is what the attempts of a join heard (agent.JoinError): the
// latest refusal for a dead or left holder of the ID, and the datagrams
// that failed authentication, with the last one's source.
type joinHeard struct {
	refusal  *swim.JoinRefusal
	auth     uint64
	authFrom netip.AddrPort
	decode   uint64 // datagrams that opened and did not decode
}

func (h *joinHeard) add(err error) {
	var je *agent.JoinError
	if !errors.As(err, &je) {
		return
	}
	if je.Refusal != nil {
		h.refusal = je.Refusal
	}
	if je.AuthFailures > 0 {
		h.auth += je.AuthFailures
		h.authFrom = je.AuthFrom
	}
	h.decode += je.DecodeErrors
}

// giveUp is the error of a join that no member admitted in time. A member
// that refused it for a dead or left holder of this member's ID is named
// with the flags that decide it (--dead-reclaim-time on the members,
// --identity-file, --id). Otherwise, besides the usual causes (nobody
// there, another key, one side --plain) it names the address cause:
// members answer only a join that comes from the address it advertises
// (self), so an agent whose packets leave from another address (bound to
// 0.0.0.0 on a host with several addresses, behind NAT) is never answered
// (docs/live.md, "joins come from the advertised address"). Datagrams
// that failed authentication during the join are counted, with the last
// one's source: a sign of another key or of one side --plain.
func giveUp(ctx context.Context, targets []joinTarget, self netip.Addr, deadline time.Duration, attempts int, last error, heard joinHeard) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ctx.Err()
	}
	auth := ""
	if heard.auth > 0 {
		auth = fmt.Sprintf("; %d datagrams that failed authentication arrived during the join, the last from %v: "+
			"the members may use another key (--key-file) or none (--plain)", heard.auth, heard.authFrom)
	}
	if heard.decode > 0 {
		auth += fmt.Sprintf("; %d datagrams arrived during the join that did not decode: a member of another fdkit version? "+
			"(docs/coming-from-memberlist.md, Versions)", heard.decode)
	}
	if r := heard.refusal; r != nil {
		how := "dead"
		if r.Left {
			how = "left"
		}
		return fmt.Errorf("--join %s: join refused within --join-timeout %v (attempts: %d): the member at %s holds ID %q as %s at %s "+
			"(incarnation %d): members give a dead or left member's ID to a new address only once it has been down for their --dead-reclaim-time "+
			"and, when they sign updates, only to the --identity-file key bound to the ID (until the entry is forgotten): "+
			"wait and retry, lower --dead-reclaim-time on the members, start this member with its previous --identity-file, "+
			"or with another --id%s",
			joinList(targets), deadline, attempts, r.By.Addr, r.Held.ID, how, r.Held.Addr, r.Incarnation, auth)
	}
	why := "no member answered"
	if heard.decode > 0 {
		why = "no member admitted it"
	}
	if isLookupErr(last) {
		why = fmt.Sprintf("no address found (%v)", last)
	}
	return fmt.Errorf("--join %s: %s within --join-timeout %v (attempts: %d; is a member running there, with the same key, or --plain on both, and the same --label? "+
		"Do its packets reach the members from %s, the address it advertises? A member answers only a join sent from that address: "+
		"behind NAT set --advertise to the public address, on a host with several addresses --bind the advertised one)%s",
		joinList(targets), why, deadline, attempts, self, auth)
}

// joinList returns the join targets for a log line or an error: the
// first joinListShown of them, and how many more (a --join list of
// thousands of addresses made one log line of 80 KB: usr30).
func joinList(targets []joinTarget) string {
	n := min(len(targets), joinListShown)
	s := make([]string, n)
	for i, t := range targets[:n] {
		s[i] = t.String()
	}
	out := strings.Join(s, ",")
	if more := len(targets) - n; more > 0 {
		out += fmt.Sprintf(" and %d more", more)
	}
	return out
}

// joinListShown is how many join targets joinList names.
const joinListShown = 8
