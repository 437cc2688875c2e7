package agent

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// pingClock is a transport that records the gap between two consecutive
// pings its agent sends. In a steady group (no ping-req to relay, no dead
// member to reconnect to, local health multiplier 0) every ping starts a
// protocol period, and a period starts ProbeInterval after the previous
// one's start as the agent saw it: the gap minus ProbeInterval is how late
// the agent's timer fired at the state machine's deadline
// (swim.Member.NextDeadline), plus the Tick and the send.
type pingClock struct {
	transport.Transport
	codec *wire.Codec
	mu    sync.Mutex
	last  time.Time
	gaps  chan time.Duration
}

func (p *pingClock) Send(to netip.AddrPort, b []byte) error {
	now := time.Now()
	if pkt, err := p.codec.Decode(b); err == nil && pkt.Kind == swim.MsgPing {
		p.mu.Lock()
		if !p.last.IsZero() {
			select {
			case p.gaps <- now.Sub(p.last):
			default:
			}
		}
		p.last = now
		p.mu.Unlock()
	}
	return p.Transport.Send(to, b)
}

// BenchmarkTickLateness measures how late an agent's probe periods start
// (late-ms-mean, late-ms-max: the gap between two pings minus
// ProbeInterval; one iteration is one period) in a steady group of 3 with
// 200 ms periods, for TickInterval 50ms (the former default) and the
// default: the deadlines of the protocol come from the state machine in
// both cases, so both must be on time.
//
//	go test ./swim/agent -run '^$' -bench TickLateness -benchtime 50x
func BenchmarkTickLateness(b *testing.B) {
	const period = 200 * time.Millisecond
	for _, tick := range []time.Duration{50 * time.Millisecond, 0} {
		name := "tick=" + tick.String()
		if tick == 0 {
			name = "tick=default"
		}
		b.Run(name, func(b *testing.B) {
			proto := swim.Config{ProbeInterval: period, ProbeTimeout: period / 2}
			codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
			require.NoError(b, err)
			u, err := listenUDP(transport.Config{})
			require.NoError(b, err)
			pc := &pingClock{Transport: u, codec: codec, gaps: make(chan time.Duration, 1024)}
			a := start(b, Config{Plain: true, TickInterval: tick, Transport: pc, DisableStream: true, Protocol: proto})
			others := group(b, 2, Config{Plain: true, TickInterval: tick, Protocol: proto})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			require.NoError(b, a.Join(ctx, others[0].Self().Addr, others[1].Self().Addr))
			require.Eventually(b, func() bool { return alive(a) == 3 }, 5*time.Second, 10*time.Millisecond)
			time.Sleep(5 * period)
			for len(pc.gaps) > 0 {
				<-pc.gaps
			}
			b.ResetTimer()
			var sum, worst time.Duration
			for b.Loop() {
				late := <-pc.gaps - period
				sum += late
				worst = max(worst, late)
			}
			b.ReportMetric(float64(sum)/1e6/float64(b.N), "late-ms-mean")
			b.ReportMetric(float64(worst)/1e6, "late-ms-max")
		})
	}
}
