package agent

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// Several reliable messages from one sender to one receiver at once, on
// streams of their own, each arrive whole: their frames interleave under
// one sender ID in the receiver's replay check. Eight, twice what one
// address may have in flight (streamOutPerAddr): the last four wait for
// the first ones' turn and then go, none fails (TestReliableSendsPerAddress
// has the wait end with the context).
func TestSendReliableConcurrent(t *testing.T) {
	as := group(t, 2, Config{})
	msgs, cancel := as[1].Receive(16)
	defer cancel()
	ctx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	const n, size = 2 * streamOutPerAddr, 200 << 10
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, as[0].SendReliable(ctx, as[1].Self().ID, bytes.Repeat([]byte{byte(i)}, size)))
		}()
	}
	wg.Wait()
	seen := map[byte]bool{}
	for range n {
		m := receiveOne(t, msgs)
		require.Len(t, m.Data, size)
		assert.Equal(t, bytes.Repeat(m.Data[:1], size), m.Data, "a message's bytes mixed with another's")
		seen[m.Data[0]] = true
	}
	assert.Len(t, seen, n)
	assert.Zero(t, as[1].Stats().StreamReplayed)
}

// A reliable stream that stalls after its first frame (slowloris), on
// every inbound slot at once, is cut at StreamTimeout; meanwhile new
// streams are refused, and once the slots free a message goes through.
func TestReliableSlowloris(t *testing.T) {
	const slots = 8
	timeout := 500 * time.Millisecond
	// The attacker has as many addresses as slots (MaxStreamConnsPerSource
	// would keep one address to a quarter of them; all are loopback here).
	victim := start(t, Config{MaxStreamConns: slots, MaxStreamConnsPerSource: slots, StreamTimeout: timeout})
	msgs, cancel := victim.Receive(4)
	defer cancel()
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: mustKeyring(t)}})
	require.NoError(t, err)
	to := netip.MustParseAddrPort(victim.Self().Addr)
	var conns []*transport.Conn
	for i := range slots {
		b, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgUser, From: swim.Node{ID: swim.ID(rune('a' + i)), Addr: "127.0.0.1:9"},
			User: []byte("x"), Part: swim.Part{Total: 1 << 20}})
		require.NoError(t, err)
		c, err := transport.DialStream(context.Background(), to, transport.StreamConfig{Timeout: 30 * time.Second})
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.WriteFrame(b))
		conns = append(conns, c)
	}
	t0 := time.Now()
	for _, c := range conns {
		_, err := c.ReadFrame() // the victim closes it: EOF or reset
		require.Error(t, err)
	}
	held := time.Since(t0)
	// The victim's deadline cut them (StreamTimeouts), well before the
	// attacker's own 30 s read deadline; how soon after the 500 ms is the
	// scheduler's business on a loaded machine, so the bound is loose.
	assert.Less(t, held, 10*time.Second, "stalled streams held until the attacker gave up")
	assert.GreaterOrEqual(t, victim.Stats().StreamTimeouts, uint64(slots))
	sender := start(t, Config{})
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	require.NoError(t, sender.SendReliableToAddress(ctx, victim.Self().Addr, []byte("after")))
	assert.Equal(t, []byte("after"), receiveOne(t, msgs).Data)
	t.Logf("%d stalled streams cut after %v (StreamTimeout %v)", slots, held.Round(time.Millisecond), timeout)
}

// Reliable messages stuck on a receiver that accepts the stream and never
// reads (a hung process) do not take the dialling slots of the protocol:
// with as many stuck as there are slots, the agent still sends its stream
// fallback pings to a member whose UDP is lost, and does not declare it
// dead.
func TestStuckReliableSendsLeaveStreamPings(t *testing.T) {
	as, shim := streamGroup(t, Config{StreamTimeout: 20 * time.Second})
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer hung.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := hung.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // never read, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 * streamOutMax {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = as[0].SendReliableToAddress(ctx, hung.Addr().String(), make([]byte, 1000))
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	time.Sleep(5 * fast().ProbeInterval) // every sender dialled and waits for its ack
	skipped := as[0].Stats().StreamPingsSkipped
	shim.blocked.Store(1)
	time.Sleep(30 * fast().ProbeInterval)
	assert.Equal(t, skipped, as[0].Stats().StreamPingsSkipped, "stream pings skipped for want of a slot")
	assert.NotEqual(t, swim.StateDead, state(as[0], as[3].Self().ID))
}

// slowConn delays its third write by delay: a frame sealed, then held
// in a slow link's buffers.
type slowConn struct {
	net.Conn
	writes int
	delay  time.Duration
}

func (c *slowConn) Write(b []byte) (int, error) {
	if c.writes++; c.writes == 3 {
		time.Sleep(c.delay)
	}
	return c.Conn.Write(b)
}

// A reliable message whose frame arrives more than the replay window
// (2 s) after it was sealed, while its sender's datagrams move the
// receiver's window for that sender on, is received whole: the frames
// after a stream's first are checked as a chain, not against the window.
func TestReliableFrameDelayedPastReplayWindow(t *testing.T) {
	recv := start(t, Config{})
	_, cancel := recv.Receive(512)
	defer cancel()
	sender := start(t, Config{StreamWrap: func(c net.Conn, inbound bool) (net.Conn, error) {
		if inbound {
			return c, nil
		}
		return &slowConn{Conn: c, delay: 2500 * time.Millisecond}, nil
	}})
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- sender.SendReliableToAddress(ctx, recv.Self().Addr, make([]byte, 5000)) }()
	// While the frame waits, and until the message is through, the
	// sender's datagrams move the receiver's window on. (A fixed count of
	// them, 200 at 10 ms, took past the context on a loaded machine.)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for sent := 0; ; {
		select {
		case err := <-done:
			require.NoError(t, err)
			assert.Zero(t, recv.Stats().StreamReplayed)
			assert.Greater(t, sent, 1, "datagrams sent while the frame waited")
			return
		case <-tick.C:
			require.NoError(t, sender.SendToAddress(ctx, recv.Self().Addr, []byte("x")))
			sent++
		}
	}
}
