package agent

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// streamFlood holds a victim's inbound stream slots with streams that
// stall: from eight loopback addresses, 16 each (the default
// MaxStreamConnsPerSource of 64 slots), half deliver a valid first frame
// (a reliable message's, sealed with the group's key: a key holder) and
// then send nothing, half stop inside their first frame. Each stream the
// victim closes is dialled again until stop; closed counts them.
type streamFlood struct {
	closed, dialled atomic.Int64
	stop            chan struct{}
	wg              sync.WaitGroup
	mu              sync.Mutex
	open            map[net.Conn]bool
}

func startStreamFlood(t *testing.T, victim netip.AddrPort, codec *wire.Codec) *streamFlood {
	f := &streamFlood{stop: make(chan struct{}), open: map[net.Conn]bool{}}
	for i := range 128 {
		src := fmt.Sprintf("127.0.0.%d", 2+i/16)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for k := 0; ; k++ {
				select {
				case <-f.stop:
					return
				default:
				}
				var frame []byte
				if i%2 == 0 {
					b, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgUser, From: swim.Node{ID: swim.ID(fmt.Sprintf("flood-%d-%d", i, k)), Addr: src + ":9"},
						User: []byte("x"), Part: swim.Part{Total: 1 << 20}})
					if err != nil {
						panic(err)
					}
					frame = binary.BigEndian.AppendUint32(nil, uint32(len(b)))
					frame = append(frame, b...)
				} else {
					frame = append(binary.BigEndian.AppendUint32(nil, 600), make([]byte, 10)...)
				}
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: time.Second}
				c, err := d.Dial("tcp", victim.String())
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				f.dialled.Add(1)
				f.mu.Lock()
				f.open[c] = true
				f.mu.Unlock()
				_, _ = c.Write(frame)
				go func() { <-f.stop; _ = c.Close() }()
				_, err = c.Read(make([]byte, 1)) // until the victim closes it
				f.mu.Lock()
				delete(f.open, c)
				f.mu.Unlock()
				_ = c.Close()
				select {
				case <-f.stop:
					return
				default:
					f.closed.Add(1)
				}
				_ = err
			}
		}()
	}
	t.Cleanup(f.end)
	return f
}

func (f *streamFlood) end() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	f.wg.Wait()
}

// F5: streams that stall after a valid first frame, or inside one, from
// a few addresses, do not shut a member out of a victim's stream path:
// with 128 of them held open and redialled as soon as closed, a member's
// SendReliable and its joins over a stream (push-pull's view and pull,
// which a member whose datagrams are lost sends over a stream) to the
// victim succeed, and the victim closes flood streams to make room
// (Stats.StreamsEvicted). Before, a stream that had delivered a frame was
// never evicted, and the flood held all 64 slots until StreamTimeout.
func TestStalledStreamFloodLeavesRoom(t *testing.T) {
	id := func(i int) swim.ID { return swim.ID(fmt.Sprintf("member-%d-%s", i, strings.Repeat("x", 100))) }
	cfg := Config{Keys: [][]byte{testKey}, Protocol: fast(), MaxPacketSize: 700, LeaveTimeout: new(100 * time.Millisecond)}
	var as []*Agent
	for i := range 2 {
		c := cfg
		c.ID, c.Seed = id(i), uint64(i+1)
		as = append(as, start(t, c))
	}
	join(t, as[1], as[0])
	victim, member := as[0], as[1]
	msgs, cancel := victim.Receive(16)
	defer cancel()
	c := cfg
	c.ID, c.Seed = id(2), 3
	x, shim := startShimmed(t, c)
	shim.blocked.Store(1) // x's joins reach the victim only over a stream

	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: mustKeyring(t)}, MaxPacketSize: 700})
	require.NoError(t, err)
	to := netip.MustParseAddrPort(victim.Self().Addr)
	flood := startStreamFlood(t, to, codec)
	require.Eventually(t, func() bool { return victim.Stats().StreamsIn >= 64 }, 20*time.Second, 10*time.Millisecond, "the flood holds every slot")

	const rounds = 5
	sent, joined := 0, 0
	for r := range rounds {
		ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		data := []byte(fmt.Sprintf("reliable %d", r))
		if err := member.SendReliable(ctx, victim.Self().ID, data); err == nil {
			sent++
			assert.Equal(t, data, receiveOne(t, msgs).Data)
		} else {
			t.Logf("round %d: SendReliable: %v", r, err)
		}
		if err := x.Join(ctx, victim.Self().Addr); err == nil {
			joined++
		} else {
			t.Logf("round %d: join over a stream: %v", r, err)
		}
		stop()
	}
	st := victim.Stats()
	t.Logf("under a flood of 128 stalled streams: %d of %d reliable messages, %d of %d joins over a stream; victim: %d streams in, %d evicted, %d refused; flood: %d dialled, %d closed by the victim",
		sent, rounds, joined, rounds, st.StreamsIn, st.StreamsEvicted, st.StreamsRefused, flood.dialled.Load(), flood.closed.Load())
	assert.Equal(t, rounds, sent, "reliable messages through the flood")
	assert.Equal(t, rounds, joined, "joins over a stream through the flood")
	assert.Positive(t, x.Stats().StreamJoins, "the joins went over a stream")
	assert.Positive(t, st.StreamsEvicted, "flood streams closed to make room")
	assert.Positive(t, flood.closed.Load(), "the flood saw its streams closed")
}
