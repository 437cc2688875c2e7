package swim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The text form of packets, updates and events in the scenarios of
// testdata/scenarios (see scenario_test.go). A packet is one line:
//
//	a->b ping seq=3 suspect(c#0,a) alive(f#1)
//
// sender, receiver (an ID, ID@addr when the address is not ID:7946, or
// @addr when the ID is not known), the message kind, its body and the
// piggybacked updates. An update is kind(node#incarnation[,from][,extra...])
// with from omitted for an Alive raised by the member itself; extras are
// meta=..., vMIN-MAX (the wire formats advertised) and signed (signed=K
// in step input: signed with testKey(K) rather than the node's ID's key). Step input
// uses the same form, so a scenario can replay what it printed.

// fmtNode prints n as its ID, ID@addr when the address is not the
// scenario default ID:7946, or @addr without an ID.
// A long ID of one repeated byte c is printed N*c, as metadata.
func fmtNode(n Node) string {
	switch {
	case n.ID == "":
		return "@" + n.Addr
	case n.Addr == string(n.ID)+":7946":
		return fmtMeta(string(n.ID))
	}
	return fmtMeta(string(n.ID)) + "@" + n.Addr
}

func parseNode(s string) Node {
	id, addr, ok := strings.Cut(s, "@")
	if long, err := parseMeta(id); err == nil {
		id = long
	}
	if ok {
		return Node{ID: ID(id), Addr: addr}
	}
	return node(id)
}

// parseNodes reads a list of nodes; an item m00..m19 stands for m00, m01,
// ..., m19 (a common prefix and a range of equally wide numbers).
func parseNodes(items []string) []Node {
	var ns []Node
	for _, it := range items {
		lo, hi, ok := strings.Cut(it, "..")
		i := len(lo)
		for i > 0 && lo[i-1] >= '0' && lo[i-1] <= '9' {
			i--
		}
		a, errA := strconv.Atoi(lo[i:])
		b, errB := strconv.Atoi(strings.TrimPrefix(hi, lo[:i]))
		if !ok || errA != nil || errB != nil {
			ns = append(ns, parseNode(it))
			continue
		}
		for k := a; k <= b; k++ {
			ns = append(ns, node(fmt.Sprintf("%s%0*d", lo[:i], len(lo)-i, k)))
		}
	}
	return ns
}

// fmtMeta prints short metadata as is and long or odd metadata by length
// (N*c when it repeats one byte c).
func fmtMeta(m string) string {
	if len(m) <= 16 && !strings.ContainsAny(m, " ,()*\n") {
		return m
	}
	if len(m) > 0 && strings.Count(m, m[:1]) == len(m) {
		return fmt.Sprintf("%d*%s", len(m), m[:1])
	}
	return fmt.Sprintf("<%d bytes>", len(m))
}

func parseMeta(s string) (string, error) {
	if n, c, ok := strings.Cut(s, "*"); ok {
		k, err := strconv.Atoi(n)
		if err != nil {
			return "", fmt.Errorf("meta %q: %v", s, err)
		}
		return strings.Repeat(c, k), nil
	}
	return s, nil
}

func fmtUpdate(u Update) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(%s#%d", u.Kind, fmtNode(u.Node), u.Incarnation)
	if u.Kind != UpdateAlive || u.From != u.Node.ID {
		fmt.Fprintf(&b, ",%s", u.From)
	}
	if u.Meta != "" {
		fmt.Fprintf(&b, ",meta=%s", fmtMeta(u.Meta))
	}
	if !u.Versions.IsZero() {
		fmt.Fprintf(&b, ",v%d-%d", u.Versions.Min, u.Versions.Max)
	}
	if u.Proof != "" {
		b.WriteString(",signed")
	}
	b.WriteString(")")
	return b.String()
}

var updateKinds = map[string]UpdateKind{"alive": UpdateAlive, "suspect": UpdateSuspect, "dead": UpdateDead}

// parseUpdate reads fmtUpdate's form. signed signs the update with
// testKey of the node's address.
func parseUpdate(s string) (Update, error) {
	kind, rest, ok := strings.Cut(strings.TrimSuffix(s, ")"), "(")
	k, known := updateKinds[kind]
	if !ok || !known || !strings.HasSuffix(s, ")") {
		return Update{}, fmt.Errorf("update %q: want kind(node#inc[,from][,meta=..][,vA-B][,signed])", s)
	}
	parts := strings.Split(rest, ",")
	n, inc, ok := strings.Cut(parts[0], "#")
	if !ok {
		return Update{}, fmt.Errorf("update %q: no #incarnation", s)
	}
	i, err := strconv.ParseUint(inc, 10, 64)
	if err != nil {
		return Update{}, fmt.Errorf("update %q: %v", s, err)
	}
	u := Update{Kind: k, Node: parseNode(n), Incarnation: Incarnation(i)}
	u.From = u.Node.ID
	sign := ""
	for j, p := range parts[1:] {
		switch {
		case strings.HasPrefix(p, "meta="):
			if u.Meta, err = parseMeta(p[len("meta="):]); err != nil {
				return Update{}, err
			}
		case p == "signed":
			sign = string(u.Node.ID)
		case strings.HasPrefix(p, "signed="):
			sign = p[len("signed="):]
		case len(p) > 1 && p[0] == 'v' && strings.Contains(p, "-"):
			if _, err := fmt.Sscanf(p, "v%d-%d", &u.Versions.Min, &u.Versions.Max); err != nil {
				return Update{}, fmt.Errorf("update %q: %v", s, err)
			}
		case j == 0:
			u.From = ID(p)
		default:
			return Update{}, fmt.Errorf("update %q: unknown part %q", s, p)
		}
	}
	if sign != "" {
		u.Proof = Sign(testKey(sign), u)
	}
	return u, nil
}

var messageKinds = func() map[string]MessageKind {
	m := map[string]MessageKind{}
	for k := MsgPing; k.String() != "unknown" && k < 64; k++ {
		m[k.String()] = k
	}
	return m
}()

// maxPrintedUpdates is how many of a packet's updates fmtPacket prints;
// it ends a longer list with +N more.
const maxPrintedUpdates = 12

// fmtPacket prints one packet on one line.
func fmtPacket(p *Packet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s->%s %s", fmtNode(p.From), fmtNode(p.To), p.Kind)
	switch p.Kind {
	case MsgPing:
		fmt.Fprintf(&b, " seq=%d", p.Ping.Seq)
	case MsgAck:
		fmt.Fprintf(&b, " seq=%d", p.Ack.Seq)
		if len(p.AckPayload) > 0 {
			fmt.Fprintf(&b, " payload=%q", p.AckPayload)
		}
	case MsgNack:
		fmt.Fprintf(&b, " seq=%d", p.Nack.Seq)
	case MsgPingReq:
		fmt.Fprintf(&b, " seq=%d target=%s", p.PingReq.Seq, fmtNode(p.PingReq.Target))
		if p.PingReq.Nack {
			b.WriteString(" nack")
		}
	}
	if !p.Digest.IsZero() {
		fmt.Fprintf(&b, " digest=%d/%x", p.Digest.Members, p.Digest.Hash)
	}
	if p.JoinToken != 0 {
		b.WriteString(" token") // random: its presence only
	}
	if len(p.User) > 0 {
		fmt.Fprintf(&b, " user=%q", p.User)
	}
	if !p.Part.IsZero() {
		fmt.Fprintf(&b, " part=%d/%d", p.Part.Offset, p.Part.Total)
	}
	if len(p.State) > 0 {
		fmt.Fprintf(&b, " state=%q", p.State)
	}
	for _, br := range p.Broadcasts {
		fmt.Fprintf(&b, " bcast(%s#%d,%q,%q)", br.Origin, br.Seq, br.Key, br.Data)
	}
	for i, u := range p.Updates {
		if i == maxPrintedUpdates {
			fmt.Fprintf(&b, " +%d more", len(p.Updates)-i)
			break
		}
		b.WriteString(" " + fmtUpdate(u))
	}
	return b.String()
}

// echoToken stands, in a parsed packet, for the join token of the member
// that steps it (Packet.JoinToken): a view written "token" echoes it.
const echoToken = 1<<64 - 1

// echoed returns p with echoToken replaced by m's latest join token.
func echoed(m *Member, p Packet) Packet {
	if p.JoinToken == echoToken {
		p.JoinToken = m.join.token
	}
	return p
}

// parsePacket reads fmtPacket's form (without broadcasts or parts, which
// scenarios build with commands).
func parsePacket(line string) (Packet, error) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return Packet{}, fmt.Errorf("packet %q: want from->to kind ...", line)
	}
	from, to, ok := strings.Cut(f[0], "->")
	kind, known := messageKinds[f[1]]
	if !ok || !known {
		return Packet{}, fmt.Errorf("packet %q: want from->to kind ...", line)
	}
	p := Packet{Kind: kind, From: parseNode(from), To: parseNode(to)}
	if strings.HasPrefix(to, "@") {
		p.To = Node{Addr: to[1:]}
	}
	for _, tok := range f[2:] {
		key, val, _ := strings.Cut(tok, "=")
		var err error
		switch key {
		case "seq":
			var n uint64
			n, err = strconv.ParseUint(val, 10, 32)
			p.Ping.Seq, p.Ack.Seq, p.Nack.Seq, p.PingReq.Seq = uint32(n), uint32(n), uint32(n), uint32(n)
		case "target":
			p.PingReq.Target = parseNode(val)
		case "nack":
			p.PingReq.Nack = true
		case "payload":
			p.AckPayload = []byte(strings.Trim(val, `"`))
		case "digest":
			_, err = fmt.Sscanf(val, "%d/%x", &p.Digest.Members, &p.Digest.Hash)
		case "token":
			// "token": the receiver's join token (echoToken); token=N: N.
			p.JoinToken = echoToken
			if val != "" {
				p.JoinToken, err = strconv.ParseUint(val, 10, 64)
			}
		case "user":
			p.User = []byte(val)
		case "state":
			p.State = []byte(val)
		default:
			var u Update
			u, err = parseUpdate(tok)
			p.Updates = append(p.Updates, u)
		}
		if err != nil {
			return Packet{}, fmt.Errorf("packet %q: %v", line, err)
		}
	}
	return p, nil
}

func fmtEvent(e Event) string {
	s := fmt.Sprintf("%s %s#%d", e.Kind, fmtNode(e.Node), e.Incarnation)
	if e.From != "" && e.From != e.Node.ID {
		s += " by " + string(e.From)
	}
	if e.Held != (Node{}) {
		s += " held " + fmtNode(e.Held)
	}
	if e.Meta != "" {
		s += " meta=" + fmtMeta(e.Meta)
	}
	return s + " at " + e.At.String()
}

func fmtPeer(p PeerStatus) string {
	s := fmt.Sprintf("%s %s#%d since %v", fmtNode(p.Node), p.State, p.Incarnation, p.Since)
	if p.State == StateSuspect {
		s += fmt.Sprintf(" deadline %v", p.SuspicionDeadline)
	}
	if p.Meta != "" {
		s += " meta=" + fmtMeta(p.Meta)
	}
	if !p.Versions.IsZero() {
		s += fmt.Sprintf(" v%d-%d", p.Versions.Min, p.Versions.Max)
	}
	return s
}

// fmtReady prints everything r holds, one item a line, each line
// prefixed with prefix; with kinds, only the packets of those kinds and,
// if kinds holds "event" or "stream-probe", the events or stream pings.
func fmtReady(b *strings.Builder, prefix string, r Ready, kinds []string) {
	for i := range r.Packets {
		if len(kinds) == 0 || slices.Contains(kinds, r.Packets[i].Kind.String()) {
			fmt.Fprintf(b, "%s%s\n", prefix, fmtPacket(&r.Packets[i]))
		}
	}
	for _, e := range r.Events {
		if len(kinds) == 0 || slices.Contains(kinds, "event") {
			fmt.Fprintf(b, "%sevent %s\n", prefix, fmtEvent(e))
		}
	}
	for _, sp := range r.StreamProbes {
		if len(kinds) > 0 && !slices.Contains(kinds, "stream-probe") {
			continue
		}
		fmt.Fprintf(b, "%sstream-probe %s seq=%d deadline=%v", prefix, fmtNode(sp.To), sp.Seq, sp.Deadline)
		for _, u := range sp.Updates {
			b.WriteString(" " + fmtUpdate(u))
		}
		b.WriteString("\n")
	}
	for _, m := range r.Messages {
		kind := "message"
		if m.Broadcast {
			kind = "broadcast"
		}
		fmt.Fprintf(b, "%s%s from %s key=%q data=%q\n", prefix, kind, m.From, m.Key, m.Data)
	}
	for _, s := range r.RemoteStates {
		fmt.Fprintf(b, "%sremote-state from %s join=%v state=%q\n", prefix, fmtNode(s.From), s.Join, s.State)
	}
}

func parseDuration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	return time.ParseDuration(s)
}
