// Package promswim exports a swim/agent member's view and counters as
// Prometheus metrics. It is a package of its own so that services using
// swim/agent without Prometheus do not depend on client_golang (as
// monitor/promfd is for the per-peer monitor).
package promswim

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fdkit/fdkit/monitor/promfd"
	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

// Collector exports an agent's view and counters as Prometheus metrics:
//
//	fdswim_peer_suspicion_level{peer}      per-peer suspicion level (φ by default)
//	fdswim_peer_detector_warming_up{peer}  1 while the peer's detector is
//	                                       warming up (its level then
//	                                       means little; swim.PeerStatus)
//	fdswim_peer_state{peer,state}          1 for the peer's current state
//	fdswim_peer_incarnation{peer}          per-peer incarnation
//	fdswim_members{state}                  members per state, self included
//	fdswim_local_health_multiplier         Lifeguard's local health
//	                                       multiplier (memberlist's health
//	                                       score): 0 when healthy, up to
//	                                       swim.Config's
//	                                       MaxLocalHealthMultiplier
//	fdswim_packets_sent_total, fdswim_packets_received_total,
//	fdswim_bytes_sent_total, fdswim_bytes_received_total,
//	fdswim_auth_failures_total, fdswim_decode_errors_total,
//	fdswim_rejected_total, fdswim_replayed_total, fdswim_unknown_kinds_total, fdswim_send_errors_total,
//	fdswim_encode_errors_total, fdswim_events_dropped_total,
//	fdswim_dropped_oversize_total, fdswim_dropped_queue_full_total
//	fdswim_host_lateness_seconds, fdswim_host_lateness_max_seconds{source},
//	fdswim_host_lateness_measurements_total{source}
//	                                       the host's lateness the agent
//	                                       measures (Agent.Lateness), as
//	                                       promfd.Lateness exports it: the
//	                                       bound handed to the state machine
//	                                       before each tick, and per source
//	                                       the largest and the count
//	fdswim_protocol_<counter>_total        every swim.Stats counter, in snake
//	                                       case: probes_started, suspicions,
//	                                       gossips_sent (eager gossip), ...
//
// Every counter of agent.Stats is exported, each under its own name.
//
// Register it with prometheus.MustRegister(promswim.NewCollector(a)).
type Collector struct {
	a                          *agent.Agent
	level, warming, state, inc *prometheus.Desc
	members, lhm               *prometheus.Desc
	late                       *promfd.Lateness
	counters                   []counterDesc
}

type counterDesc struct {
	d *prometheus.Desc
	f func(agent.Stats) uint64
}

// NewCollector returns a Collector for a.
func NewCollector(a *agent.Agent) *Collector {
	c := &Collector{
		a:       a,
		level:   prometheus.NewDesc("fdswim_peer_suspicion_level", "Suspicion level of the peer's failure detector (phi by default).", []string{"peer"}, nil),
		warming: prometheus.NewDesc("fdswim_peer_detector_warming_up", "1 while the peer's failure detector rests on too few inter-arrival times for its level to mean much (swim.PeerStatus.WarmingUp).", []string{"peer"}, nil),
		state:   prometheus.NewDesc("fdswim_peer_state", "1 for the peer's current membership state.", []string{"peer", "state"}, nil),
		inc:     prometheus.NewDesc("fdswim_peer_incarnation", "The peer's incarnation number.", []string{"peer"}, nil),
		members: prometheus.NewDesc("fdswim_members", "Members per state in the local view, this member included.", []string{"state"}, nil),
		lhm:     prometheus.NewDesc("fdswim_local_health_multiplier", "Lifeguard's local health multiplier (memberlist's health score): 0 when healthy; each step lengthens this member's probe timeouts and interval (Agent.LocalHealthMultiplier).", nil, nil),
		late:    promfd.NewLateness(a.Lateness(), promfd.Config{Namespace: "fdswim"}),
	}
	for _, x := range []struct {
		name, help string
		f          func(agent.Stats) uint64
	}{
		{"packets_sent_total", "Datagrams sent.", func(s agent.Stats) uint64 { return s.PacketsSent }},
		{"packets_received_total", "Datagrams received.", func(s agent.Stats) uint64 { return s.PacketsReceived }},
		{"bytes_sent_total", "Datagram bytes sent.", func(s agent.Stats) uint64 { return s.BytesSent }},
		{"bytes_received_total", "Datagram bytes received.", func(s agent.Stats) uint64 { return s.BytesReceived }},
		{"auth_failures_total", "Datagrams dropped for failing authentication or having the wrong envelope.", func(s agent.Stats) uint64 { return s.AuthFailures }},
		{"decode_errors_total", "Authenticated datagrams whose payload did not decode.", func(s agent.Stats) uint64 { return s.DecodeErrors }},
		{"unknown_kinds_total", "Authenticated packets of a message kind this version does not know (from a later version), ignored.", func(s agent.Stats) uint64 { return s.UnknownKinds }},
		{"messages_dropped_total", "Application messages not delivered to a Receive subscriber whose channel was full.", func(s agent.Stats) uint64 { return s.MessagesDropped }},
		{"unknown_fields_total", "Extension fields of accepted packets skipped because this version does not know their tag (from a later version).", func(s agent.Stats) uint64 { return s.UnknownFields }},
		{"format1_received_total", "Accepted packets in wire format 1 (members that may read only format 1).", func(s agent.Stats) uint64 { return s.Format1Received }},
		{"rejected_total", "Decoded packets the protocol refused.", func(s agent.Stats) uint64 { return s.Rejected }},
		{"label_mismatches_total", "Datagrams and stream frames dropped for a cluster label other than this member's (another group's packets).", func(s agent.Stats) uint64 { return s.LabelMismatches }},
		{"plain_accepted_total", "Plain packets accepted while encryption is being turned on; once it stops growing on every member, none sends plain any more.", func(s agent.Stats) uint64 { return s.PlainAccepted }},
		{"reliable_sent_total", "Reliable messages (SendReliable) acknowledged by their receiver.", func(s agent.Stats) uint64 { return s.ReliableSent }},
		{"reliable_received_total", "Reliable messages received whole over streams.", func(s agent.Stats) uint64 { return s.ReliableReceived }},
		{"reliable_refused_total", "Reliable messages received whole and refused unacknowledged: those waiting for the agent held MaxReceiveBytes.", func(s agent.Stats) uint64 { return s.ReliableRefused }},
		{"replayed_total", "Sealed packets dropped by the replay check (seen before, sealed before this member started, or beyond the clock-skew bound).", func(s agent.Stats) uint64 { return s.Replayed }},
		{"send_errors_total", "Datagrams that could not be sent (bad destination address or socket error).", func(s agent.Stats) uint64 { return s.SendErrors }},
		{"encode_errors_total", "Outgoing packets that could not be encoded.", func(s agent.Stats) uint64 { return s.EncodeErrors }},
		{"events_dropped_total", "Membership events not delivered to a subscriber whose channel was full.", func(s agent.Stats) uint64 { return s.EventsDropped }},
		{"dropped_oversize_total", "Received datagrams dropped by the transport for exceeding the maximum packet size.", func(s agent.Stats) uint64 { return s.DroppedOversize }},
		{"dropped_queue_full_total", "Received datagrams dropped by the transport because its receive queue was full.", func(s agent.Stats) uint64 { return s.DroppedQueueFull }},
		{"streams_in_total", "Inbound streams (TCP) accepted.", func(s agent.Stats) uint64 { return s.StreamsIn }},
		{"streams_out_total", "Streams (TCP) dialled: fallback pings and views larger than one datagram.", func(s agent.Stats) uint64 { return s.StreamsOut }},
		{"streams_refused_total", "Inbound streams closed at once because the maximum number was being served and none could make room.", func(s agent.Stats) uint64 { return s.StreamsRefused }},
		{"streams_evicted_total", "Inbound streams closed before their first frame to make room for a new one (also counted in fdswim_streams_in_total when served).", func(s agent.Stats) uint64 { return s.StreamsEvicted }},
		{"streams_spared_total", "Times eviction passed over an inbound stream whose whole first frame already waited unread in the kernel (Linux only).", func(s agent.Stats) uint64 { return s.StreamsSpared }},
		{"stream_dial_errors_total", "Streams that could not be dialled (refused, timed out).", func(s agent.Stats) uint64 { return s.StreamDialErrors }},
		{"stream_auth_failures_total", "Inbound streams cut for a frame that failed authentication.", func(s agent.Stats) uint64 { return s.StreamAuthFailures }},
		{"stream_replayed_total", "Inbound streams cut for a frame that failed the replay check.", func(s agent.Stats) uint64 { return s.StreamReplayed }},
		{"stream_decode_errors_total", "Inbound streams, and answers to joins sent over a stream, cut for a malformed frame or an unexpected message kind.", func(s agent.Stats) uint64 { return s.StreamDecodeErrors }},
		{"stream_oversize_total", "Inbound streams, and answers to joins sent over a stream, cut for a frame above the packet size, or over the byte or member cap.", func(s agent.Stats) uint64 { return s.StreamOversize }},
		{"stream_timeouts_total", "Inbound streams, and answers to joins sent over a stream, cut at their deadline (slow senders).", func(s agent.Stats) uint64 { return s.StreamTimeouts }},
		{"stream_syncs_total", "Views larger than one datagram sent over a stream.", func(s agent.Stats) uint64 { return s.StreamSyncs }},
		{"stream_sync_fallbacks_total", "Views sent as datagrams after their stream failed.", func(s agent.Stats) uint64 { return s.StreamSyncFallbacks }},
		{"stream_joins_total", "Joins resent over a stream after a datagram join got no answer.", func(s agent.Stats) uint64 { return s.StreamJoins }},
		{"stream_join_answers_total", "Views read back on the stream of a join this member sent (the member joined had not verified its address).", func(s agent.Stats) uint64 { return s.StreamJoinAnswers }},
		{"stream_answers_foreign_total", "Frames dropped from the stream of a join this member sent because their sender was not the member dialled (another address or another ID).", func(s agent.Stats) uint64 { return s.StreamAnswersForeign }},
		{"stream_pings_skipped_total", "Stream fallback pings not sent: every slot of stream pings taken, or the target's address holding its share, or an address that cannot be dialled.", func(s agent.Stats) uint64 { return s.StreamPingsSkipped }},
		{"streams_addr_busy_total", "Stream pings and views not dialled because their address already held 4 of this member's dialled streams of that kind (a ping skipped, a view sent as datagrams).", func(s agent.Stats) uint64 { return s.StreamsAddrBusy }},
		{"stream_joins_busy_total", "Joins to a seed sent as datagrams instead of over a stream because a join's stream to that seed was still open or 4 joins' streams were.", func(s agent.Stats) uint64 { return s.StreamJoinsBusy }},
		{"stream_joins_yielded_total", "Joins' streams to a seed closed unanswered, after half a probe interval or more, to give their slot to a join to a seed that had had fewer streams.", func(s agent.Stats) uint64 { return s.StreamJoinsYielded }},
		{"stream_answers_idle_total", "Answers to joins sent over a stream cut because the member dialled sent no frame of its own within two probe intervals (at least 1 s), or the whole answer took more than twice that.", func(s agent.Stats) uint64 { return s.StreamAnswersIdle }},
	} {
		c.counters = append(c.counters, counterDesc{prometheus.NewDesc("fdswim_"+x.name, x.help, nil, nil), x.f})
	}
	c.counters = protocolCounters(c.counters, reflect.TypeFor[swim.Stats](), nil)
	return c
}

// protocolCounters appends a counter for every integer field of t, a
// struct within swim.Stats at index, walking into nested structs: a
// counter is named for its own field, whatever group holds it.
func protocolCounters(cs []counterDesc, t reflect.Type, index []int) []counterDesc {
	for i := range t.NumField() {
		f := t.Field(i)
		at := append(slices.Clone(index), i)
		switch f.Type.Kind() {
		case reflect.Struct:
			cs = protocolCounters(cs, f.Type, at)
			continue
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		default:
			continue
		}
		help, ok := protocolHelp[f.Name]
		if !ok {
			help = "swim.Stats." + f.Name + "."
		}
		cs = append(cs, counterDesc{
			prometheus.NewDesc("fdswim_protocol_"+snake(f.Name)+"_total", help, nil, nil),
			func(s agent.Stats) uint64 { return uint64(reflect.ValueOf(s.Protocol).FieldByIndex(at).Int()) },
		})
	}
	return cs
}

// protocolHelp is the help text of each swim.Stats counter, exported as
// fdswim_protocol_<field in snake case>_total. A counter added to
// swim.Stats is exported too, with its field name as help, until it gets
// a line here.
var protocolHelp = map[string]string{
	"ProbesStarted":        "Probes started (one per protocol period with a target).",
	"ProbesFailed":         "Probes with neither a direct nor an indirect ack.",
	"PingReqsSent":         "Indirect probe requests (ping-req) sent.",
	"NacksSent":            "Nacks sent for ping-reqs whose target did not answer in time (Lifeguard).",
	"RelaysExpired":        "Relays whose target did not ack before the relay's deadline (a nack follows if one was asked).",
	"RelaysRefused":        "Ping-reqs not relayed: an unknown requester and target, or the relays held at their bound.",
	"AckPayloadsTooLarge":  "Ack payloads left out because the ack would have exceeded MaxPacketSize.",
	"AcksFromOtherHost":    "Acks ignored because they came from another host, or claimed another address, than their sender is held at: they answer no probe and complete no relay.",
	"AcksUnmatched":        "Acks without their sender's ID whose number matches none of this member's latest probe pings: refused.",
	"Refutations":          "Times this member raised its own incarnation to refute a suspicion, a declaration or a later alive update about itself.",
	"RefutationsUncharged": "Refutations not counted against the local health multiplier: of a later alive update, of a suspicion or declaration from a sender not held alive at the address it came from, or of one in a protocol period that counted one already or before a probe of this member's own ended since the last counted one.",
	"GateDeferrals":        "Failed probes forgiven once by the per-peer detector gate.",
	"Suspicions":           "Suspicions this member raised itself.",
	"Declarations":         "Members this member declared dead by its own suspicion timeout.",
	"Misdirected":          "Packets for another member ID dropped.",
	"LocalPauses":          "Late ticks taken for a pause of this member.",
	"DetectorErrors":       "Per-peer detector or estimator factory errors.",
	"PushPulls":            "Anti-entropy exchanges (push-pull) started.",
	"ViewRequests":         "Views asked of unknown senders.",
	"DigestMatches":        "Anti-entropy view digests received equal to this member's view: no view sent.",
	"DigestMismatches":     "Anti-entropy view digests received different from this member's view: both views sent.",
	"AliveSent":            "Pings sent only to carry a refutation at once.",
	"AliveDeferred":        "Refutations and restatements not announced at once, and direct sends of this member's alive update not made, past their budget per protocol period (they ride the gossip queue).",
	"GossipsSent":          "Eager gossip packets sent (eager dissemination, gossip fanout).",
	"JoinAnnouncements":    "Members sent this member's alive update directly on joining.",
	"Implausible":          "Updates refused for an implausible incarnation jump.",
	"AccusationsReturned":  "Accusations sent back to the sender of a stale alive update and to the accused.",
	"Reaped":               "Dead and left members forgotten.",
	"MembersRefused":       "New members not admitted because the view was full of live ones.",
	"Conflicts":            "Claims of a live member's ID (or of a dead one before the dead reclaim time) by a node at another address.",
	"Reclaims":             "Dead or left members' entries taken over by their ID at another address (a member restarted elsewhere).",
	"AddrsRefused":         "Updates dropped for naming a member at an address that is not a unicast ip:port.",
	"StreamProbes":         "Stream (TCP) fallback pings requested after a direct ping timed out.",
	"StreamProbesUnpaid":   "Stream fallback pings not requested for a member not verified: never heard from at its address, or its ledger does not pay.",
	"StreamOnly":           "Probes answered only over the stream (TCP) fallback: UDP to or from the member is lost.",
	"BadProofs":            "Alive and leave updates refused for a missing, invalid or foreign self-signature (signed self-updates).",
	"AccusationsCapped":    "Accusations above the incarnation the accused asserted, taken at it (signed self-updates).",
	"ViewEntriesSkipped":   "View entries left out of a view transfer because one alone does not fit the packet size after the header.",
	"PullsRefused":         "Pulls (joins, view requests, anti-entropy exchanges) not answered: their sender address or all senders had reached the per-period bound.",
	"AccusationsUnvouched": "Suspect and Dead updates about a live member from a sender not held alive or suspect at the address it came from: taken as this member's own suspicion, never as a death.",
	"HearsayDropped":       "Accusations about a live member from hearsay or a view transfer dropped past the per-period budget of suspicions made from them.",
	"BroadcastsOwnDropped": "Broadcasts this member queued itself, dropped because its own broadcasts filled the queue.",
	"BroadcastsUnrelayed":  "Broadcasts delivered but not passed on: their packet's sender was not held alive or suspect at the address it came from.",
	"BroadcastsUnvouched":  "Broadcasts dropped from a packet whose sender was not held alive or suspect at the address it came from, numbered above every number delivered from their origin (not the sender's own from the address it is held at).",
}

// snake turns a Go field name into snake case: PingReqsSent → ping_reqs_sent.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.level
	ch <- c.warming
	ch <- c.state
	ch <- c.inc
	ch <- c.members
	ch <- c.lhm
	c.late.Describe(ch)
	for _, x := range c.counters {
		ch <- x.d
	}
}

// Collect implements prometheus.Collector. A stopped agent exports its
// counters only.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if ms, err := c.a.MembersContext(ctx); err == nil {
		count := map[swim.State]int{}
		for _, m := range ms {
			count[m.State]++
			if m.Self {
				continue
			}
			id := string(m.Node.ID)
			ch <- prometheus.MustNewConstMetric(c.level, prometheus.GaugeValue, m.Level, id)
			warming := 0.0
			if m.WarmingUp {
				warming = 1
			}
			ch <- prometheus.MustNewConstMetric(c.warming, prometheus.GaugeValue, warming, id)
			ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, 1, id, m.State.String())
			ch <- prometheus.MustNewConstMetric(c.inc, prometheus.GaugeValue, float64(m.Incarnation), id)
		}
		for _, s := range []swim.State{swim.StateAlive, swim.StateSuspect, swim.StateDead, swim.StateLeft} {
			ch <- prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(count[s]), s.String())
		}
	}
	ch <- prometheus.MustNewConstMetric(c.lhm, prometheus.GaugeValue, float64(c.a.LocalHealthMultiplier()))
	st := c.a.Stats()
	for _, x := range c.counters {
		ch <- prometheus.MustNewConstMetric(x.d, prometheus.CounterValue, float64(x.f(st)))
	}
	c.late.Collect(ch)
}
