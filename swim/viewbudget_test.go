package swim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// viewBytes tallies, per sender (ID and address), the bytes a member
// received from it at its own address and the bytes of the view requests
// (MsgJoin without digest) it sent there, and per address the same sums.
type viewBytes struct {
	recv, sent         map[Node]int
	recvAddr, sentAddr map[string]int
}

func newViewBytes() *viewBytes {
	return &viewBytes{recv: map[Node]int{}, sent: map[Node]int{}, recvAddr: map[string]int{}, sentAddr: map[string]int{}}
}

func (v *viewBytes) received(p *Packet) {
	v.recv[p.From] += p.Size()
	v.recvAddr[p.From.Addr] += p.Size()
}

// out counts m's view requests and acks to the senders counted among pk,
// and acks m's pings at once.
func (v *viewBytes) out(t *testing.T, m *Member, now time.Duration, pk []Packet) {
	t.Helper()
	for _, p := range pk {
		switch {
		case p.Kind == MsgJoin && p.Digest.IsZero(), p.Kind == MsgAck && v.recv[p.To] > 0:
			// View requests, and the acks to the senders counted, which
			// this member does not vouch for (reply.go).
			v.sent[p.To] += p.Size()
			v.sentAddr[p.To.Addr] += p.Size()
		case p.Kind == MsgPing:
			ack := Packet{Kind: MsgAck, From: p.To, To: m.Self(), Ack: Ack{Seq: p.Ping.Seq}}
			require.NoError(t, m.Step(now, &ack))
		}
	}
}

// within fails unless every sender and every address was sent at most
// twice the bytes received from it.
func (v *viewBytes) within(t *testing.T, what string) bool {
	t.Helper()
	for n, s := range v.sent {
		if !assert.LessOrEqual(t, s, 2*v.recv[n], "%s: view requests to %v against the bytes received from it", what, n) {
			return false
		}
	}
	for a, s := range v.sentAddr {
		if !assert.LessOrEqual(t, s, 2*v.recvAddr[a], "%s: view requests to address %s", what, a) {
			return false
		}
	}
	return true
}

// oneRequest is the least size of a ping (Packet.Size) from the unknown
// sender n that pays for m's view request and m's ack (asksView).
func oneRequest(m *Member, n Node) int {
	return (m.askViewSize(n) + m.bareReplySize(n, &Packet{Kind: MsgPing}) + 1) / 2
}

// The reviewer's pattern (issue 27): one packet of 1.5 requests' size,
// then one of half a request's size every 3 s for 500 s. Each new packet
// used to reset the retries while the bytes received added up, and the
// requests it drew were not counted: 3.48 times the bytes received. Now
// every request, asked or retried, counts: the first packet pays for its
// request and a retry two periods later, and each small one for one
// request, which pushes the retry out.
func TestViewRequestsWithinTwiceReceived(t *testing.T) {
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	a.Tick(0)
	drain(a)
	j := node("j")
	req := a.askViewSize(j)
	v := newViewBytes()
	var at []time.Duration
	out := func(now time.Duration, pk []Packet) {
		n := v.sent[j]
		if v.out(t, a, now, pk); v.sent[j] > n {
			at = append(at, now)
		}
	}
	step := func(now time.Duration, p Packet) {
		tickUntil(a, now, func(at time.Duration, pk []Packet, _ []Event) { out(at, pk) })
		v.received(&p)
		require.NoError(t, a.Step(now, &p))
		pk, _ := drain(a)
		out(now, pk)
	}
	start := 500 * time.Millisecond
	step(start, pingOf(a, j, req+req/2))
	small := pingOf(a, j, oneRequest(a, j))
	require.GreaterOrEqual(t, 2*small.Size(), req)
	for now := start + 3*time.Second; now <= 500*time.Second; now += 3 * time.Second {
		step(now, small)
	}
	tickUntil(a, 600*time.Second, func(now time.Duration, pk []Packet, _ []Event) { v.out(t, a, now, pk) })
	v.within(t, "small packets every 3 s")
	s := time.Second
	require.GreaterOrEqual(t, len(at), 5)
	assert.Equal(t, []time.Duration{start, start + 2*s, start + 3*s, start + 6*s, start + 9*s}, at[:5],
		"the first request, its retry, then one per small packet")
	t.Logf("received %d B, sent %d B of view requests (%.2f×)", v.recv[j], v.sent[j], float64(v.sent[j])/float64(v.recv[j]))
}

// Bytes received from a sender's ID at one address do not pay for
// requests to another: a large packet from j at A, then a small one
// claiming j at V, draw one request to each, and none is retried to V.
func TestViewRequestBudgetPerAddress(t *testing.T) {
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	a.Tick(0)
	drain(a)
	atA, atV := Node{ID: "j", Addr: "A:1"}, Node{ID: "j", Addr: "V:1"}
	req := a.askViewSize(atA)
	big, small := pingOf(a, atA, 3*req), pingOf(a, atV, oneRequest(a, atV))
	require.NoError(t, a.Step(time.Second, &big))
	drain(a)
	require.NoError(t, a.Step(2*time.Second, &small))
	pk, _ := drain(a)
	require.Len(t, only(t, pk, MsgJoin), 1, "the request to V")
	assert.Equal(t, atV, only(t, pk, MsgJoin)[0].To)
	assert.Empty(t, viewAsks(t, a, atV.Addr, time.Minute), "no retry to V")
	assert.Equal(t, 4, a.Stats().ViewRequests, "one to V, three to A (paid by its packet)")
}

// A packet received from another address than the one its sender
// claims draws no view request to the address claimed, however large,
// and pays for none later.
func TestViewRequestNotFromOtherSource(t *testing.T) {
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	a.Tick(0)
	drain(a)
	j := node("j")
	req := a.askViewSize(j)
	big := pingOf(a, j, 4*req)
	require.NoError(t, a.StepFromOtherSource(time.Second, &big))
	pk, _ := drain(a)
	assert.Empty(t, only(t, pk, MsgJoin), "no request to the address claimed")
	require.Len(t, only(t, pk, MsgAck), 1, "the ping is answered")
	assert.Empty(t, viewAsks(t, a, j.Addr, time.Minute))
	assert.Zero(t, a.Stats().ViewRequests)

	// A small packet from j's own address afterwards draws one request
	// and no retry: the forwarded bytes paid for nothing.
	small := pingOf(a, j, oneRequest(a, j))
	require.NoError(t, a.Step(time.Minute+time.Second, &small))
	pk, _ = drain(a)
	assert.Len(t, only(t, pk, MsgJoin), 1)
	assert.Empty(t, viewAsks(t, a, j.Addr, 2*time.Minute))
	assert.Equal(t, 1, a.Stats().ViewRequests)
}

// Adversarial senders, over many seeds: three IDs at three addresses in
// every combination, interleaved, sending pings and acks from a few bytes
// to several requests' size, at random gaps from none to several
// periods, some received from another source. Every sender and every
// address is sent at most twice the bytes received from it, at every
// instant.
func TestViewRequestBudgetAdversarial(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 27))
		a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
		a.Tick(0)
		drain(a)
		req := a.askViewSize(Node{ID: "j0", Addr: "v0:1"})
		sizes := []int{1, req / 3, (req + 1) / 2, req, req + req/2, 3 * req}
		gaps := []time.Duration{0, 10 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 7 * time.Second}
		v := newViewBytes()
		now := time.Second
		for i := range 200 {
			now += gaps[rng.IntN(len(gaps))]
			tickUntil(a, now, func(at time.Duration, pk []Packet, _ []Event) { v.out(t, a, at, pk) })
			from := Node{ID: ID(fmt.Sprintf("j%d", rng.IntN(3))), Addr: fmt.Sprintf("v%d:1", rng.IntN(3))}
			p := pingOf(a, from, sizes[rng.IntN(len(sizes))])
			if rng.IntN(3) == 0 {
				p.Kind, p.Ping, p.Ack = MsgAck, Ping{}, Ack{Seq: rng.Uint32()}
			}
			other := rng.IntN(5) == 0
			if other {
				require.NoError(t, a.StepFromOtherSource(now, &p))
			} else {
				v.received(&p)
				require.NoError(t, a.Step(now, &p))
			}
			pk, _ := drain(a)
			if other {
				// Its ack, paid by the packet itself, not by the bytes
				// received from the address claimed.
				pk = slices.DeleteFunc(pk, func(q Packet) bool {
					if q.Kind != MsgAck || q.To != p.From {
						return false
					}
					assert.LessOrEqual(t, q.Size(), 2*p.Size(), "seed %d, packet %d: ack to another source's ping", seed, i)
					return true
				})
			}
			v.out(t, a, now, pk)
			if !v.within(t, fmt.Sprintf("seed %d, packet %d", seed, i)) {
				return
			}
		}
		tickUntil(a, now+time.Minute, func(at time.Duration, pk []Packet, _ []Event) { v.out(t, a, at, pk) })
		if !v.within(t, fmt.Sprintf("seed %d, after the packets", seed)) {
			return
		}
	}
}
