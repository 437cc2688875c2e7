package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// sameDC is a merge veto in the shape of Consul's: every Alive in a view
// or join must carry this member's datacenter in its metadata.
func sameDC(dc string) func(swim.Node, []swim.Update) error {
	return func(from swim.Node, ups []swim.Update) error {
		for _, u := range ups {
			if u.Kind == swim.UpdateAlive && u.Meta != "dc="+dc {
				return fmt.Errorf("member %q is in %q, not in datacenter %s", u.Node.ID, u.Meta, dc)
			}
		}
		return nil
	}
}

func dcConfig(dc string) Config {
	c := Config{Plain: true}
	c.Protocol = fast()
	c.Protocol.Meta = []byte("dc=" + dc)
	c.Protocol.MergeFilter = sameDC(dc)
	return c
}

// A member of another datacenter is refused by the merge veto on both
// sides: the seed does not answer its join, so the Join ends with its
// context (cancelled once the refusal is counted), and neither view holds
// the other; a member of the same datacenter joins.
func TestMergeVetoRefusesOtherDatacenter(t *testing.T) {
	as := groupOf(t, []Config{dcConfig("dc1"), dcConfig("dc1")})
	other := start(t, dcConfig("dc2"))
	var je *JoinError
	require.ErrorAs(t, joinUntil(other, as[0].Self().Addr, func() bool { return as[0].Stats().Protocol.MergesRefused > 0 }), &je)
	assert.Positive(t, as[0].Stats().Protocol.MergesRefused)
	assert.Len(t, as[0].Members(), 2)
	assert.Len(t, other.Members(), 1)

	// Without a veto at the seed, the joiner's own veto refuses the view
	// the seed answers with, and the Join fails with the veto's error. The
	// seed, which admitted the joiner, probes it, and its pings may make
	// it known to the joiner: gossip, which no MergeFilter screens (an
	// AliveFilter does, as memberlist's AliveDelegate), and which does not
	// complete the Join.
	noVeto := dcConfig("dc1")
	noVeto.Protocol.MergeFilter = nil
	seed := start(t, noVeto)
	require.ErrorAs(t, joinUntil(other, seed.Self().Addr, func() bool { return other.Stats().Protocol.MergesRefused > 0 }), &je)
	assert.Positive(t, other.Stats().Protocol.MergesRefused)
	assert.ErrorContains(t, je.MergeRefusal, "not in datacenter dc2")
}

// joinUntil joins a through addr until refused reports the refusal, for at
// most 5 s (a loaded machine may take more than a few protocol periods to
// carry the join and its answer), and returns Join's error.
func joinUntil(a *Agent, addr string, refused func() bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if refused() {
					cancel()
					return
				}
			}
		}
	}()
	return a.Join(ctx, addr)
}

// The alive filter keeps a member tagged role=intruder out of this
// member's view, though a member without the filter admits it and gossips
// its Alive, and the intruder itself probes this member.
func TestAliveFilterKeepsMemberOut(t *testing.T) {
	filtered := Config{Plain: true, Protocol: fast()}
	filtered.Protocol.AliveFilter = func(u swim.Update) error {
		if strings.Contains(u.Meta, "role=intruder") {
			return errors.New("intruder")
		}
		return nil
	}
	a := start(t, filtered)
	b := start(t, Config{Plain: true})
	join(t, b, a)
	bad := Config{Plain: true, Protocol: fast()}
	bad.Protocol.Meta = []byte("role=intruder")
	c := start(t, bad)
	join(t, c, b)
	require.Eventually(t, func() bool { return alive(b) == 3 && alive(c) == 3 }, 10*time.Second, 10*time.Millisecond,
		"b and c know everyone (c through b's view)")
	periodsFrom(t, a, b, c)(5) // five protocol periods of gossip and probes
	_, known := member(a, c.Self().ID)
	assert.False(t, known, "the filtered member entered the view")
	assert.Positive(t, a.Stats().Protocol.AlivesRefused)
	assert.Equal(t, 2, aliveOrSuspect(a))
}

type pingResult struct {
	target  swim.ID
	rtt     time.Duration
	payload string
}

// Ack payloads travel with the acks of direct probes, and the prober gets
// each with the round-trip time (memberlist's PingDelegate, for Vivaldi).
func TestPingPayloadAndRTT(t *testing.T) {
	results := make(chan pingResult, 256)
	cfg := func(id string) Config {
		c := Config{Plain: true, ID: swim.ID(id), Protocol: fast()}
		c.Protocol.AckPayload = func() []byte { return []byte("coord of " + id) }
		c.Protocol.PingComplete = func(n swim.Node, rtt time.Duration, payload []byte) {
			select {
			case results <- pingResult{n.ID, rtt, string(payload)}:
			default:
			}
		}
		return c
	}
	a, b := start(t, cfg("a")), start(t, cfg("b"))
	join(t, b, a)
	seen := map[swim.ID]bool{}
	deadline := time.After(5 * time.Second)
	for !seen["a"] || !seen["b"] {
		select {
		case r := <-results:
			seen[r.target] = true
			assert.Equal(t, "coord of "+string(r.target), r.payload)
			assert.Positive(t, r.rtt)
			// A round trip, not a clock reading: the ack counts only while
			// its probe runs (at most 100 ms × 8 at the top local health
			// multiplier), plus however long a loaded machine stalls the
			// agent before it reads the ack.
			assert.Less(t, r.rtt, 10*time.Second)
		case <-deadline:
			t.Fatalf("pings completed: %v", seen)
		}
	}
	// A payload over the bound is not sent, and counted.
	big := cfg("c")
	big.Protocol.AckPayload = func() []byte { return make([]byte, swim.MaxAckPayloadLen+1) }
	c := start(t, big)
	join(t, c, a)
	require.Eventually(t, func() bool { return c.Stats().Protocol.AckPayloadsTooLarge > 0 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, 3, aliveOrSuspect(c), "acks without their payload still answer the probes")
}

// The merge veto withholds the application state of a view it refuses,
// as memberlist calls MergeRemoteState only after its MergeDelegate
// accepted: a seed of this datacenter, without a veto, has admitted a
// member of another, so its state (sent first, naming only the seed) must
// not reach a joiner whose veto refuses the seed's view. The same joiner
// got the state of a seed whose view it accepted. Once the refused seed
// has admitted the joiner, gossip (which no MergeFilter screens) joins the
// two groups, and the views of both seeds come to name the other
// datacenter's member: no state of the refused seed is delivered
// meanwhile.
func TestMergeVetoWithholdsRefusedState(t *testing.T) {
	seedCfg := func(id string) Config {
		c := dcConfig("dc1")
		c.ID = swim.ID(id)
		c.Protocol.MergeFilter = nil
		c.LocalState = func(bool) []byte { return []byte("state of " + id) }
		return c
	}
	seed := start(t, seedCfg("seed"))
	foreign := dcConfig("dc2")
	foreign.Protocol.MergeFilter = nil
	join(t, start(t, foreign), seed)
	require.Eventually(t, func() bool { return alive(seed) == 2 }, 10*time.Second, 10*time.Millisecond)

	got := make(chan string, 64)
	jc := dcConfig("dc1")
	jc.MergeRemoteState = func(from swim.Node, s []byte, _ bool) {
		select {
		case got <- string(s):
		default:
		}
	}
	j := start(t, jc)
	other := start(t, seedCfg("other"))
	join(t, j, other)
	select {
	case s := <-got:
		assert.Equal(t, "state of other", s, "the accepted view's state is delivered")
	case <-time.After(20 * time.Second):
		t.Fatal("the accepted view's state was not delivered")
	}

	var je *JoinError
	err := joinUntil(j, seed.Self().Addr, func() bool { return j.Stats().Protocol.MergesRefused > 0 })
	require.ErrorAs(t, err, &je)
	assert.Positive(t, j.Stats().Protocol.StatesReceived)
	require.Eventually(t, func() bool { return j.Stats().Protocol.StatesWithheld > 0 }, 10*time.Second, 10*time.Millisecond,
		"the refused view's state is dropped")
	for len(got) > 0 {
		assert.Equal(t, "state of other", <-got, "only the accepted view's state is delivered")
	}
}

// The merge veto's digest shortcut delivers only the state that answers
// this member's own pull: a digest is the sender's claim, and this
// member's is public (it goes with each of its states and pulls). A forger
// whose Alive the veto accepts pulls the victim for its digest, then
// sends a state of its own under that digest, unasked, as if its view
// equalled the victim's. Each is held for a verdict on a view that never
// comes, and dropped: none reaches MergeRemoteState.
func TestMergeVetoForgedDigestWithheld(t *testing.T) {
	got := make(chan string, 64)
	vc := dcConfig("dc1")
	vc.LocalState = func(bool) []byte { return []byte("state of the victim") }
	// No anti-entropy of the victim's own: the answer to its own pull is
	// the one state an equal digest delivers (swim's
	// TestMergeFilterStateWithEqualDigest), and the forger's states are
	// all unasked.
	vc.Protocol.PushPullInterval = new(time.Duration(0))
	vc.MergeRemoteState = func(from swim.Node, s []byte, _ bool) {
		select {
		case got <- string(s):
		default:
		}
	}
	victim := start(t, vc)
	to := netip.MustParseAddrPort(victim.Self().Addr)
	forger := newPlainPeer(t)
	self := swim.Node{ID: "mallory", Addr: forger.addr()}
	alive := []swim.Update{{Kind: swim.UpdateAlive, Node: self, From: self.ID, Meta: "dc=dc1"}}
	digests := make(chan swim.ViewDigest, 16)
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() { // answers pings (the join challenge, probes) and reads the victim's digest
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case p := <-forger.conn.Packets():
				pk, err := forger.codec.Decode(p.Data)
				if err != nil {
					continue
				}
				switch {
				case pk.Kind == swim.MsgPing:
					b, _, err := forger.codec.Encode(&swim.Packet{Kind: swim.MsgAck, From: self, To: pk.From, Ack: swim.Ack{Seq: pk.Ping.Seq}})
					if err == nil {
						_ = forger.conn.Send(p.From, b)
					}
				case pk.Kind == swim.MsgSync && len(pk.State) > 0 && !pk.Digest.IsZero():
					select {
					case digests <- pk.Digest:
					default:
					}
				}
			}
		}
	}()
	const rounds = 5
	deadline := time.Now().Add(20 * time.Second)
	for range rounds {
		// A pull with a digest no view has: answered with the victim's
		// state, which carries its digest. Pulls over the victim's bound
		// go unanswered: sent again after a while.
		var d swim.ViewDigest
		for d.IsZero() {
			require.True(t, time.Now().Before(deadline), "the victim never answered the forger's pull")
			forger.send(t, victim, &swim.Packet{Kind: swim.MsgJoin, From: self, To: swim.Node{Addr: to.String()},
				Updates: alive, Digest: swim.ViewDigest{Members: 1, Hash: 1}})
			select {
			case d = <-digests:
			case <-time.After(500 * time.Millisecond):
			}
		}
		forger.send(t, victim, &swim.Packet{Kind: swim.MsgSync, From: self, To: victim.Self(),
			State: []byte("state of mallory"), Updates: alive, Digest: d})
	}
	if !assert.Eventually(t, func() bool { return victim.Stats().Protocol.StatesWithheld >= rounds || len(got) > 0 }, 20*time.Second, 10*time.Millisecond) {
		t.Fatalf("every forged state is held and dropped: %+v", victim.Stats().Protocol) // read after the wait
	}
	assert.Empty(t, got, "a forged state reached MergeRemoteState")
}

// A Protocol.MaxStateSize larger than a datagram can carry is refused at
// Start, naming the largest that fits: such a state was never sent, only
// counted in StatesTooLarge, so the state exchange stopped without an
// error. The largest that fits is sent and merged.
func TestMaxStateSizeOverPacketRefused(t *testing.T) {
	local := func(n int) func(bool) []byte { return func(bool) []byte { return bytes.Repeat([]byte("s"), n) } }
	p := fast()
	p.MaxStateSize = 4096
	_, err := Start(context.Background(), Config{Plain: true, Protocol: p, LocalState: local(10)})
	require.Error(t, err)
	assert.ErrorContains(t, err, "Protocol.MaxStateSize 4096")
	var fit int
	_, err = fmt.Sscanf(err.Error()[strings.Index(err.Error(), "at most "):], "at most %d bytes", &fit)
	require.NoError(t, err)
	require.Greater(t, fit, 512)

	p.MaxStateSize = fit
	got := make(chan int, 4)
	merge := func(_ swim.Node, st []byte, _ bool) {
		select {
		case got <- len(st):
		default:
		}
	}
	seed := start(t, Config{Plain: true, Protocol: p, LocalState: local(fit), MergeRemoteState: merge})
	joiner := start(t, Config{Plain: true, Protocol: p, LocalState: local(fit), MergeRemoteState: merge})
	join(t, joiner, seed)
	select {
	case n := <-got:
		assert.Equal(t, fit, n)
	case <-time.After(10 * time.Second):
		t.Fatalf("no state of %d bytes merged; too large: %d", fit, joiner.Stats().Protocol.StatesTooLarge+seed.Stats().Protocol.StatesTooLarge)
	}
}
