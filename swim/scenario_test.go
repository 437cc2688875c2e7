package swim

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestScenarios runs the protocol scenarios of testdata/scenarios, each a
// datadriven file of commands and the output they must print (the shape of
// etcd raft's interaction tests). Commands:
//
//	add NAME [options]          create a member (scenarioEnv.add)
//	bootstrap NAME peers=(...)  Bootstrap
//	join NAME at=T seeds=(...)  Join
//	leave NAME at=T             Leave
//	set-meta NAME meta=M        SetMeta
//	broadcast NAME [key=K] data=D
//	send NAME at=T to=ID data=D SendTo
//	set-ack-payload NAME data=P the payload of its acks (add's ack-payload)
//	answer-stream-ping NAME at=T  AnswerStreamPing of the input's ping
//	tick NAME at=T              Tick, then print the output
//	advance NAME until=T [ack]  Tick at each deadline up to T, print each output
//	step NAME at=T              Step each packet of the input, print the output
//	replay NAME at=T n=N every=D  Step the input n times, print the output
//	ack NAME at=T [except=(..)] ack the pings of the member's last output
//	nack NAME at=T [except=(..)] nack its ping-reqs
//	stream-ack|stream-failed NAME at=T  answer its stream pings
//	ready NAME                  print the pending output
//	deliver NAME at=T [to=(..)] step its last packets into their receivers
//	periods NAME from=T n=N [ack] [count=(kind,ID)]
//	                            tick once a period, ack, count updates sent
//	run from=T until=T [members=(...)] [print=events|packets|none]
//	                            a network delivering every packet
//	crash NAME                  the member stops: not ticked, packets to it lost
//	partition left=(..) right=(..)  packets between the two sides are lost
//	heal                        undo every partition
//	state NAME ids=(...)        State of each ID
//	view NAME at=T [ids=(...)] [detector]
//	                            Members (those given; with their detectors)
//	stats NAME                  the non-zero Stats counters
//	inspect NAME what...        incarnation, alive, queued, deadline, probe-end, refusal,
//	                            lhm, left, meta, lateness
//
// Every output line is a checked assertion; run with -rewrite to write
// the outputs after a deliberate change of behaviour, and review the diff.
// Every packet a member sends is also checked to fit its MaxPacketSize.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		t.Parallel()
		e := newScenarioEnv(t)
		datadriven.RunTest(t, path, e.handle)
	})
}

func (e *scenarioEnv) handle(t *testing.T, td *datadriven.TestData) string {
	e.t = t
	switch td.Cmd {
	case "add":
		return e.add(td)
	case "step":
		return e.step(td)
	case "replay":
		return e.replay(td)
	case "tick":
		return e.tick(td)
	case "advance":
		return e.advance(td)
	case "ack", "nack":
		return e.ack(td)
	case "stream-ack", "stream-failed":
		return e.streamAnswer(td)
	case "run":
		return e.run(td)
	case "deliver":
		return e.deliver(td)
	case "periods":
		return e.periods(td)
	case "state", "view", "stats", "inspect", "ready":
		return e.show(td)
	case "crash":
		e.crashed[td.CmdArgs[0].Key] = true
		return ""
	case "partition":
		return e.partition(td)
	case "heal":
		clear(e.cut)
		return ""
	}
	return e.api(td)
}

// api runs the commands that call one method of Member and print its error.
func (e *scenarioEnv) api(td *datadriven.TestData) string {
	_, m := e.member(td)
	var err error
	switch td.Cmd {
	case "bootstrap":
		a, _ := td.Arg("peers")
		m.Bootstrap(parseNodes(a.Vals))
	case "join":
		a, _ := td.Arg("seeds")
		err = m.Join(e.dur(td, "at"), a.Vals)
	case "leave":
		err = m.Leave(e.dur(td, "at"))
	case "set-meta":
		var meta string
		td.ScanArgs(e.t, "meta", &meta)
		if meta, err = parseMeta(meta); err == nil {
			err = m.SetMeta([]byte(meta))
		}
	case "broadcast":
		var key, data string
		td.MaybeScanArgs(e.t, "key", &key)
		td.ScanArgs(e.t, "data", &data)
		err = m.Broadcast(key, []byte(data))
	case "set-ack-payload":
		var data string
		td.ScanArgs(e.t, "data", &data)
		data, err = parseMeta(data)
		e.ackPayload[td.CmdArgs[0].Key] = data
	case "answer-stream-ping":
		p, perr := parsePacket(strings.TrimSpace(td.Input))
		if perr != nil {
			td.Fatalf(e.t, "%v", perr)
		}
		ack, aerr := m.AnswerStreamPing(e.dur(td, "at"), &p)
		if aerr != nil {
			return fmt.Sprintf("error: %v\n", aerr)
		}
		return fmtPacket(&ack) + "\n"
	case "send":
		var to, data string
		td.ScanArgs(e.t, "to", &to)
		td.ScanArgs(e.t, "data", &data)
		err = m.SendTo(e.dur(td, "at"), ID(to), []byte(data))
	default:
		td.Fatalf(e.t, "unknown command %s", td.Cmd)
	}
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	return ""
}

func (e *scenarioEnv) partition(td *datadriven.TestData) string {
	left, okL := td.Arg("left")
	right, okR := td.Arg("right")
	if !okL || !okR {
		td.Fatalf(e.t, "partition: want left=(...) right=(...)")
	}
	for _, a := range left.Vals {
		for _, b := range right.Vals {
			e.cut[[2]string{a, b}], e.cut[[2]string{b, a}] = true, true
		}
	}
	return ""
}

// run ticks the members every 10 ms from `from` to `until` (each at its
// deadlines) and delivers every packet to the member at its address
// until the network is quiet; packets to an unknown address, a crashed
// member or across a partition are lost. It prints each member's events
// (print=events, the default), every packet (print=packets) or nothing.
func (e *scenarioEnv) run(td *datadriven.TestData) string {
	from, until := e.dur(td, "from"), e.dur(td, "until")
	names := e.names
	if a, ok := td.Arg("members"); ok {
		names = a.Vals
	}
	show := "events"
	td.MaybeScanArgs(e.t, "print", &show)
	byAddr := map[string]string{}
	for _, n := range names {
		if !e.crashed[n] {
			byAddr[e.members[n].Self().Addr] = n
		}
	}
	var b strings.Builder
	for now := from; now <= until; now += 10 * time.Millisecond {
		for _, n := range names {
			if m := e.members[n]; !e.crashed[n] {
				if at, ok := m.NextDeadline(); ok && at <= now {
					m.Tick(now)
				}
			}
		}
		for range 20 {
			quiet := true
			for _, n := range names {
				if e.crashed[n] {
					continue
				}
				var out *strings.Builder
				prefix := ""
				if show == "packets" {
					out, prefix = &b, fmt.Sprintf("%v %s: ", now, n)
				}
				r := e.ready(out, n, e.members[n], prefix, nil)
				if show == "events" {
					for _, ev := range r.Events {
						fmt.Fprintf(&b, "%s: %s\n", n, fmtEvent(ev))
					}
				}
				for i := range r.Packets {
					to, ok := byAddr[r.Packets[i].To.Addr]
					if !ok || e.cut[[2]string{n, to}] {
						continue
					}
					quiet = false
					if err := e.members[to].Step(now, &r.Packets[i]); err != nil {
						fmt.Fprintf(&b, "%s: step error: %v\n", to, err)
					}
				}
			}
			if quiet {
				break
			}
		}
	}
	return b.String()
}

// show prints what a member holds: state, view, stats, inspect, ready.
func (e *scenarioEnv) show(td *datadriven.TestData) string {
	name, m := e.member(td)
	var b strings.Builder
	switch td.Cmd {
	case "ready":
		e.ready(&b, name, m, "", kindsArg(td))
	case "state":
		a, _ := td.Arg("ids")
		for _, id := range a.Vals {
			fmt.Fprintf(&b, "%s %s\n", id, m.State(ID(id)))
		}
	case "view":
		ids, filter := td.Arg("ids")
		for _, p := range m.Members(e.dur(td, "at")) {
			if !filter || slices.Contains(ids.Vals, string(p.Node.ID)) {
				fmt.Fprintln(&b, fmtPeer(p))
				if td.HasArg("detector") {
					fmt.Fprintf(&b, "  level %.4g suspected=%v warming-up=%v probe-timeout %v\n",
						p.Level, p.Suspected, p.WarmingUp, p.ProbeTimeout)
				}
			}
		}
	case "stats":
		printNonZero(&b, "", reflect.ValueOf(m.Stats()))
	case "inspect":
		for _, a := range td.CmdArgs[1:] {
			fmt.Fprintf(&b, "%s: %s\n", a.Key, inspect(m, a.Key))
		}
	}
	return b.String()
}

func inspect(m *Member, what string) string {
	switch what {
	case "incarnation":
		return fmt.Sprint(m.Incarnation())
	case "alive":
		return fmt.Sprint(m.NumAlive())
	case "queued":
		return fmt.Sprint(m.Queued())
	case "deadline":
		if at, ok := m.NextDeadline(); ok {
			return at.String()
		}
		return "none"
	case "probe-end":
		if m.pr.active {
			return m.pr.endAt.String()
		}
		return "none"
	case "refusal":
		r, ok := m.JoinRefusal()
		if !ok {
			return "none"
		}
		return fmt.Sprintf("by %s held %s left=%v incarnation %d at %v", fmtNode(r.By), fmtNode(r.Held), r.Left, r.Incarnation, r.At)
	case "lhm":
		return fmt.Sprint(m.LocalHealthMultiplier())
	case "left":
		return fmt.Sprint(m.Left())
	case "meta":
		return fmtMeta(m.Meta())
	case "lateness":
		return m.HostLateness().String()
	}
	return "unknown: want incarnation, alive, queued, deadline, probe-end, refusal, lhm, left, meta or lateness"
}

// printNonZero prints the non-zero numeric fields of v, nested structs
// flattened, sorted by name so that regrouping Stats keeps the output.
func printNonZero(b *strings.Builder, prefix string, v reflect.Value) {
	var lines []string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			switch {
			case f.Kind() == reflect.Struct:
				walk(f)
			case f.CanInt() && f.Int() != 0:
				lines = append(lines, fmt.Sprintf("%s%s %d", prefix, v.Type().Field(i).Name, f.Int()))
			case f.CanUint() && f.Uint() != 0:
				lines = append(lines, fmt.Sprintf("%s%s %d", prefix, v.Type().Field(i).Name, f.Uint()))
			}
		}
	}
	walk(v)
	slices.Sort(lines)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
}
