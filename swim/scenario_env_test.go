package swim

import (
	"cmp"
	"crypto/ed25519"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// scenarioEnv holds the members of one scenario file and drives them
// through Member's public API: Step, Tick, Ready and the accessors.
type scenarioEnv struct {
	t       *testing.T
	members map[string]*Member       // by the name given to add
	names   []string                 // in the order added
	last    map[string][]Packet      // each member's last output with packets
	streams map[string][]StreamProbe // and with stream pings
	maxSize map[string]int           // each member's MaxPacketSize
	calls   []string                 // delegate calls not yet printed
	// ackPayload is each member's AckPayload (add's ack-payload).
	ackPayload map[string]string
	crashed    map[string]bool
	cut        map[[2]string]bool // partitioned pairs of names
}

func newScenarioEnv(t *testing.T) *scenarioEnv {
	return &scenarioEnv{t: t, members: map[string]*Member{}, last: map[string][]Packet{}, streams: map[string][]StreamProbe{}, maxSize: map[string]int{}, ackPayload: map[string]string{},
		crashed: map[string]bool{}, cut: map[[2]string]bool{}}
}

var scenarioModes = map[string]Mode{"swim": ModeSWIM, "lifeguard": ModeLifeguard, "detector": ModeDetector}

// setConfigField sets the field of cfg named key (found by its name at any
// depth of nested structs, so that regrouping Config keeps scenarios
// valid) from val.
func setConfigField(cfg *Config, key, val string) error {
	f, ok := findField(reflect.ValueOf(cfg).Elem(), key)
	if !ok {
		return fmt.Errorf("config has no field %s", key)
	}
	if f.Kind() == reflect.Pointer {
		f.Set(reflect.New(f.Type().Elem()))
		f = f.Elem()
	}
	var err error
	switch {
	case f.Type() == reflect.TypeFor[time.Duration]():
		var d time.Duration
		d, err = parseDuration(val)
		f.SetInt(int64(d))
	case f.Kind() == reflect.Bool:
		var b bool
		b, err = strconv.ParseBool(val)
		f.SetBool(b)
	case f.CanInt():
		var n int64
		n, err = strconv.ParseInt(val, 10, 64)
		f.SetInt(n)
	case f.CanUint():
		var n uint64
		n, err = strconv.ParseUint(val, 10, 64)
		f.SetUint(n)
	case f.CanFloat():
		var x float64
		x, err = strconv.ParseFloat(val, 64)
		f.SetFloat(x)
	case f.Kind() == reflect.String:
		f.SetString(val)
	default:
		return fmt.Errorf("config field %s: type %s not settable from a scenario", key, f.Type())
	}
	if err != nil {
		return fmt.Errorf("config field %s: %v", key, err)
	}
	return nil
}

func findField(v reflect.Value, name string) (reflect.Value, bool) {
	if f := v.FieldByName(name); f.IsValid() && f.CanSet() {
		return f, true
	}
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Struct && v.Type().Field(i).IsExported() {
			if g, ok := findField(f, name); ok {
				return g, true
			}
		}
	}
	return reflect.Value{}, false
}

// add creates a member:
//
//	add NAME [id=ID] [addr=ADDR] [mode=swim|lifeguard|detector] [seed=(A,B)]
//	    [peers=(...)] [challenge] [signed[=K]] [trust=(...)]
//	    [fixed-detector=D] [health=N] [ping-complete] [ack-payload=P]
//	    [merge-filter=M] [alive-filter=M] [Field=value ...]
//
// Defaults: ID NAME at NAME:7946, ModeLifeguard, seed (1,2), SyncProbes,
// no join challenges. peers=(m00..m19) stands for m00, m01, ..., m19.
// signed gives it testKey(K) as SigningKey (K its ID by default), trust
// binds each ID given to testKey(ID)'s public key,
// fixed-detector a FixedPeerDetector(D) per peer, health raises its local
// health multiplier by N (see delegates for the callbacks); Field=value
// sets any Config field by name.
func (e *scenarioEnv) add(td *datadriven.TestData) string {
	name := td.CmdArgs[0].Key
	// ShuffledProbes: the order the scenarios were written in, each
	// naming whom a tick probes; ShuffledProbes=false for the ring.
	cfg := Config{Self: node(name), Mode: ModeLifeguard, SyncProbes: true, ShuffledProbes: true}
	seed := [2]uint64{1, 2}
	var peers []Node
	challenge := false
	for _, a := range td.CmdArgs[1:] {
		switch a.Key {
		case "id":
			cfg.Self.ID = ID(a.Vals[0])
			cfg.Self.Addr = string(cfg.Self.ID) + ":7946"
		case "addr": // after id, whatever the order
		case "mode":
			cfg.Mode = scenarioModes[a.Vals[0]]
		case "seed":
			a.Scan(e.t, 0, &seed[0])
			a.Scan(e.t, 1, &seed[1])
		case "peers":
			peers = parseNodes(a.Vals)
		case "challenge":
			challenge = true
		case "signed", "trust":
		case "fixed-detector":
			d, err := parseDuration(a.SingleVal(e.t))
			if err != nil {
				td.Fatalf(e.t, "%v", err)
			}
			cfg.PeerDetector = FixedPeerDetector(d)
		case "health", "ping-complete", "ack-payload", "merge-filter", "alive-filter":
		default:
			if err := setConfigField(&cfg, a.Key, a.SingleVal(e.t)); err != nil {
				td.Fatalf(e.t, "%v", err)
			}
		}
	}
	if a, ok := td.Arg("addr"); ok {
		cfg.Self.Addr = a.Vals[0]
	}
	if a, ok := td.Arg("signed"); ok {
		cfg.SigningKey = testKey(cmp.Or(strings.Join(a.Vals, ""), string(cfg.Self.ID)))
	}
	e.delegates(td, name, &cfg)
	m, err := New(cfg, rand.New(rand.NewPCG(seed[0], seed[1])))
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	m.join.noChallenge = !challenge
	if a, ok := td.Arg("health"); ok {
		var n int
		a.Scan(e.t, 0, &n)
		m.adjustHealth(n)
	}
	m.Bootstrap(peers)
	if a, ok := td.Arg("trust"); ok {
		for _, n := range parseNodes(a.Vals) {
			m.Trust(n.ID, testKey(string(n.ID)).Public().(ed25519.PublicKey))
		}
	}
	if _, ok := e.members[name]; !ok {
		e.names = append(e.names, name)
	}
	e.members[name] = m
	e.maxSize[name] = m.Config().MaxPacketSize
	delete(e.last, name)
	delete(e.streams, name)
	delete(e.crashed, name)
	return ""
}

func (e *scenarioEnv) member(td *datadriven.TestData) (string, *Member) {
	if len(td.CmdArgs) == 0 {
		td.Fatalf(e.t, "%s: no member named", td.Cmd)
	}
	name := td.CmdArgs[0].Key
	m, ok := e.members[name]
	if !ok {
		td.Fatalf(e.t, "%s: no member %q", td.Cmd, name)
	}
	return name, m
}

func (e *scenarioEnv) dur(td *datadriven.TestData, key string) time.Duration {
	a, ok := td.Arg(key)
	if !ok {
		td.Fatalf(e.t, "%s: %s= missing", td.Cmd, key)
	}
	d, err := parseDuration(a.SingleVal(e.t))
	if err != nil {
		td.Fatalf(e.t, "%s: %v", td.Cmd, err)
	}
	return d
}

// ready drains m's output, keeps its packets (and stream pings) for ack,
// deliver and stream answers unless it has none, checks
// that every packet is within MaxPacketSize and prints it to b (nothing
// when b is nil).
func (e *scenarioEnv) ready(b *strings.Builder, name string, m *Member, prefix string, kinds []string) Ready {
	r := m.Ready()
	r.Packets = slices.Clone(r.Packets)
	for i := range r.Packets {
		if s, max := r.Packets[i].Size(), e.maxSize[name]; s > max {
			e.t.Errorf("%s sent %d bytes, over MaxPacketSize %d: %s", name, s, max, fmtPacket(&r.Packets[i]))
		}
	}
	if len(r.Packets) > 0 {
		e.last[name] = r.Packets
	}
	if len(r.StreamProbes) > 0 {
		e.streams[name] = slices.Clone(r.StreamProbes)
	}
	if b != nil {
		for _, l := range e.calls {
			fmt.Fprintf(b, "%s%s\n", prefix, l)
		}
		fmtReady(b, prefix, r, kinds)
	}
	e.calls = e.calls[:0]
	return r
}

// delegates sets the Config callbacks asked for by add: ping-complete
// logs each PingComplete; ack-payload=P answers pings with payload P
// (set-ack-payload changes it); merge-filter=M and alive-filter=M log
// each question and refuse packets with an update whose Meta is M. The
// log is printed with the member's next output.
func (e *scenarioEnv) delegates(td *datadriven.TestData, name string, cfg *Config) {
	if td.HasArg("ping-complete") {
		cfg.PingComplete = func(n Node, rtt time.Duration, payload []byte) {
			e.calls = append(e.calls, fmt.Sprintf("ping-complete %s rtt %v payload %q", n.ID, rtt, payload))
		}
	}
	if a, ok := td.Arg("ack-payload"); ok {
		e.ackPayload[name] = a.Vals[0]
		cfg.AckPayload = func() []byte { return []byte(e.ackPayload[name]) }
	}
	if a, ok := td.Arg("merge-filter"); ok {
		cfg.MergeFilter = func(from Node, ups []Update) error {
			e.calls = append(e.calls, fmt.Sprintf("merge-filter from %s: %d updates", from.ID, len(ups)))
			for _, u := range ups {
				if u.Meta == a.Vals[0] {
					return fmt.Errorf("refused: %s", u.Meta)
				}
			}
			return nil
		}
	}
	if a, ok := td.Arg("alive-filter"); ok {
		cfg.AliveFilter = func(u Update) error {
			e.calls = append(e.calls, "alive-filter "+fmtUpdate(u))
			if u.Meta == a.Vals[0] {
				return fmt.Errorf("refused: %s", u.Meta)
			}
			return nil
		}
	}
}

func kindsArg(td *datadriven.TestData) []string {
	if a, ok := td.Arg("only"); ok {
		return a.Vals
	}
	return nil
}

// step: step NAME at=T, the packets one a line in the input; prints the
// error of each Step that fails and then the member's output.
func (e *scenarioEnv) step(td *datadriven.TestData) string {
	name, m := e.member(td)
	now := e.dur(td, "at")
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		p, err := parsePacket(line)
		if err != nil {
			td.Fatalf(e.t, "%v", err)
		}
		p = echoed(m, p)
		step := m.Step
		if td.HasArg("source-checked") {
			step = m.StepSourceChecked
		}
		if err := step(now, &p); err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
	}
	e.ready(&b, name, m, "", kindsArg(td))
	return b.String()
}

// replay: replay NAME at=T [n=N] [every=D] [quiet] steps the packets of
// the input n times, the i-th at T+i·every, with {i} in the input replaced
// by i in five digits, and prints the output once (drains it after each
// round with quiet).
func (e *scenarioEnv) replay(td *datadriven.TestData) string {
	name, m := e.member(td)
	now := e.dur(td, "at")
	n, every := 1, time.Duration(0)
	td.MaybeScanArgs(e.t, "n", &n)
	if td.HasArg("every") {
		every = e.dur(td, "every")
	}
	var b strings.Builder
	for i := range n {
		input := strings.ReplaceAll(strings.TrimSpace(td.Input), "{i}", fmt.Sprintf("%05d", i))
		for _, line := range strings.Split(input, "\n") {
			p, err := parsePacket(line)
			if err != nil {
				td.Fatalf(e.t, "%v", err)
			}
			p = echoed(m, p)
			if err := m.Step(now+time.Duration(i)*every, &p); err != nil && !td.HasArg("quiet") {
				fmt.Fprintf(&b, "error: %v\n", err)
			}
		}
		if td.HasArg("quiet") {
			e.ready(nil, name, m, "", nil)
		}
	}
	e.ready(&b, name, m, "", kindsArg(td))
	return b.String()
}

// tick: tick NAME at=T [only=(kinds)].
func (e *scenarioEnv) tick(td *datadriven.TestData) string {
	name, m := e.member(td)
	m.Tick(e.dur(td, "at"))
	var b strings.Builder
	e.ready(&b, name, m, "", kindsArg(td))
	return b.String()
}

// advance: advance NAME until=T [ack] [only=(kinds)] [quiet] ticks the
// member at every deadline it announces up to and including T (acking
// each ping at once with ack) and prints each
// instant and that tick's output (with only=(kinds), the instants that
// sent such packets; nothing with quiet).
func (e *scenarioEnv) advance(td *datadriven.TestData) string {
	name, m := e.member(td)
	until := e.dur(td, "until")
	var b strings.Builder
	for {
		at, ok := m.NextDeadline()
		if !ok || at > until {
			break
		}
		m.Tick(at)
		var out strings.Builder
		r := e.ready(&out, name, m, "  ", kindsArg(td))
		for _, p := range r.Packets {
			if p.Kind == MsgPing && td.HasArg("ack") {
				ackPing(&out, m, p, at)
				e.ready(&out, name, m, "  ", kindsArg(td))
			}
		}
		if !td.HasArg("quiet") && (out.Len() > 0 || !td.HasArg("only")) {
			fmt.Fprintf(&b, "%v:\n%s", at, out.String())
		}
	}
	return b.String()
}

// ack and nack: ack NAME at=T [except=(IDs)] [times=N] answers each ping
// of the member's last output with an ack from its receiver; nack answers
// each ping-req with a nack from its receiver (none from the IDs given,
// each N times, default once); both print the member's output.
func (e *scenarioEnv) ack(td *datadriven.TestData) string {
	name, m := e.member(td)
	now := e.dur(td, "at")
	var except []string
	if a, ok := td.Arg("except"); ok {
		except = a.Vals
	}
	times := 1
	td.MaybeScanArgs(e.t, "times", &times)
	var b strings.Builder
	for _, p := range e.last[name] {
		if slices.Contains(except, string(p.To.ID)) {
			continue
		}
		var answer Packet
		switch {
		case td.Cmd == "ack" && p.Kind == MsgPing:
			answer = Packet{Kind: MsgAck, From: p.To, To: m.Self(), Ack: Ack{Seq: p.Ping.Seq}}
		case td.Cmd == "nack" && p.Kind == MsgPingReq:
			answer = Packet{Kind: MsgNack, From: p.To, To: m.Self(), Nack: Nack{Seq: p.PingReq.Seq}}
		default:
			continue
		}
		for range times {
			if err := m.Step(now, &answer); err != nil {
				fmt.Fprintf(&b, "error: %v\n", err)
			}
		}
	}
	e.ready(&b, name, m, "", kindsArg(td))
	return b.String()
}

// streamAnswer: stream-ack NAME at=T [to=ID seq=N] and stream-failed
// answer each stream ping of the member's last output (or the one named),
// then print its output.
func (e *scenarioEnv) streamAnswer(td *datadriven.TestData) string {
	name, m := e.member(td)
	now := e.dur(td, "at")
	answer := m.StreamFailed
	if td.Cmd == "stream-ack" {
		answer = m.StreamAck
	}
	if a, ok := td.Arg("to"); ok {
		var seq uint32
		td.ScanArgs(e.t, "seq", &seq)
		answer(now, ID(a.Vals[0]), seq)
	} else {
		for _, sp := range e.streams[name] {
			answer(now, sp.To.ID, sp.Seq)
		}
	}
	var b strings.Builder
	e.ready(&b, name, m, "", kindsArg(td))
	return b.String()
}

// deliver: deliver NAME at=T [to=(names)] steps each packet of the
// member's last output into the member at its address (packets to other
// addresses, crashed members or across a partition are lost), then
// prints each receiver's output after its name.
func (e *scenarioEnv) deliver(td *datadriven.TestData) string {
	from, _ := e.member(td)
	now := e.dur(td, "at")
	to := e.names
	if a, ok := td.Arg("to"); ok {
		to = a.Vals
	}
	var b strings.Builder
	got := map[string]bool{}
	for _, p := range e.last[from] {
		for _, n := range to {
			if m := e.members[n]; m.Self().Addr == p.To.Addr && !e.crashed[n] && !e.cut[[2]string{from, n}] {
				got[n] = true
				if err := m.Step(now, &p); err != nil {
					fmt.Fprintf(&b, "%s: error: %v\n", n, err)
				}
			}
		}
	}
	for _, n := range e.names {
		if got[n] {
			e.ready(&b, n, e.members[n], n+": ", kindsArg(td))
		}
	}
	return b.String()
}

// periods: periods NAME from=T n=N [every=D] [ack[=(IDs)]] [ack-delay=D]
// [stream-ack=D] [count=(kind,ID)] [only=(kinds)] [quiet] ticks the member
// at T, T+D, ... (D 1 s by default) n times, printing each tick's output
// (with only=, the ticks that printed something; nothing with quiet);
// with ack every ping (to the IDs given) is acked ack-delay (1 ms by
// default) after its tick, with stream-ack every stream ping acked
// stream-ack after it; with count the last line gives how many updates of
// that kind about ID the ticks' packets carried.
func (e *scenarioEnv) periods(td *datadriven.TestData) string {
	name, m := e.member(td)
	from, every, n := e.dur(td, "from"), time.Second, 0
	if td.HasArg("every") {
		every = e.dur(td, "every")
	}
	td.ScanArgs(e.t, "n", &n)
	var kind, id string
	if a, ok := td.Arg("count"); ok {
		kind, id = a.Vals[0], a.Vals[1]
	}
	delay, streamDelay := time.Millisecond, time.Duration(-1)
	if td.HasArg("ack-delay") {
		delay = e.dur(td, "ack-delay")
	}
	if td.HasArg("stream-ack") {
		streamDelay = e.dur(td, "stream-ack")
	}
	acked, ackSome := td.Arg("ack")
	var b strings.Builder
	count := 0
	for i := range n {
		now := from + time.Duration(i)*every
		m.Tick(now)
		var tick strings.Builder
		out := &tick
		if td.HasArg("quiet") {
			out = nil
		}
		r := e.ready(out, name, m, "  ", kindsArg(td))
		for _, p := range r.Packets {
			for _, u := range p.Updates {
				if u.Kind.String() == kind && string(u.Node.ID) == id {
					count++
				}
			}
			if p.Kind == MsgPing && ackSome && (len(acked.Vals) == 0 || slices.Contains(acked.Vals, string(p.To.ID))) {
				ackPing(&tick, m, p, now+delay)
				e.ready(out, name, m, "  ", kindsArg(td))
			}
		}
		if streamDelay >= 0 {
			for _, sp := range r.StreamProbes {
				m.StreamAck(now+streamDelay, sp.To.ID, sp.Seq)
			}
			e.ready(out, name, m, "  ", kindsArg(td))
		}
		if out != nil && (tick.Len() > 0 || !td.HasArg("only")) {
			fmt.Fprintf(&b, "%v:\n%s", now, tick.String())
		}
	}
	if kind != "" {
		fmt.Fprintf(&b, "%s(%s) sent %d times\n", kind, id, count)
	}
	return b.String()
}

// ackPing steps into m, at at, the ack of ping p from its receiver, and
// prints the error if Step refuses it.
func ackPing(b *strings.Builder, m *Member, p Packet, at time.Duration) {
	ack := Packet{Kind: MsgAck, From: p.To, To: m.Self(), Ack: Ack{Seq: p.Ping.Seq}}
	if err := m.Step(at, &ack); err != nil {
		fmt.Fprintf(b, "error: %v\n", err)
	}
}
