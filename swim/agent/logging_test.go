package agent

import (
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Authentication failures are logged at Warn, one line per authLogEvery
// however many arrive; the counter has them all.
func TestAuthFailuresLoggedRateLimited(t *testing.T) {
	a, out, from := dropsLogged(t, 20, append([]byte{0x02}, make([]byte, 40)...), // bad tag
		func(a *Agent) uint64 { return a.Stats().AuthFailures })
	assert.Equal(t, 1, strings.Count(out, "msg=\"dropped a packet that failed authentication"), out)
	assert.Contains(t, out, "level=WARN")
	assert.Contains(t, out, "from="+from)
	assert.Zero(t, a.Stats().LabelMismatches)
}

// dropsLogged sends n copies of datagram to a new member that logs at
// Warn, waits until count says all n were dropped, and returns the member,
// its log and the sender's address.
func dropsLogged(t *testing.T, n uint64, datagram []byte, count func(*Agent) uint64) (*Agent, string, string) {
	t.Helper()
	var buf lockedBuf
	a := start(t, Config{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	u, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	defer u.Close()
	to := netip.MustParseAddrPort(a.Self().Addr)
	for range n {
		require.NoError(t, u.Send(to, datagram))
	}
	require.Eventually(t, func() bool { return count(a) == n }, 5*time.Second, 10*time.Millisecond)
	return a, buf.String(), u.LocalAddr().String()
}

// A stream frame that fails authentication is logged like a datagram, and
// the line's total counts both paths, so that the line about a stream
// failure never says total=0 (the datagram counter alone said 23 after
// 10,596 garbage frames over TCP).
func TestStreamAuthFailureLoggedWithTotal(t *testing.T) {
	var buf lockedBuf
	a := start(t, Config{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	to := netip.MustParseAddrPort(a.Self().Addr)
	c, err := transport.DialStream(t.Context(), to, transport.StreamConfig{})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.WriteFrame(append([]byte{0x02}, make([]byte, 40)...))) // bad tag
	require.Eventually(t, func() bool { return strings.Contains(buf.String(), "failed authentication") }, 5*time.Second, 10*time.Millisecond)
	out := buf.String()
	assert.Equal(t, uint64(1), a.Stats().StreamAuthFailures)
	assert.Contains(t, out, "err=\"stream: ", out)
	assert.Contains(t, out, " total=1", out)
}

// Stats.Protocol carries the state machine's counters.
func TestStatsProtocol(t *testing.T) {
	as := group(t, 2, Config{Plain: true})
	require.Eventually(t, func() bool { return as[0].Stats().Protocol.ProbesStarted > 0 }, 5*time.Second, 10*time.Millisecond)
}

// Packets of another cluster (another label) are logged at Warn, one line
// per authLogEvery, naming their source (usr29 F4: the member dropping
// them logged nothing; only the counter moved).
func TestLabelMismatchesLoggedRateLimited(t *testing.T) {
	a, out, from := dropsLogged(t, 5, append([]byte{wire.EnvelopeLabel, 3, 'd', 'c', '2', wire.EnvelopePlain}, make([]byte, 20)...),
		func(a *Agent) uint64 { return a.Stats().LabelMismatches })
	assert.Equal(t, 1, strings.Count(out, "msg=\"dropped a packet of another cluster"), out)
	assert.Contains(t, out, "from="+from)
	assert.Zero(t, a.Stats().AuthFailures)
}

// A stream frame of another cluster is logged too, as on UDP (usr29 F4).
func TestStreamLabelMismatchLogged(t *testing.T) {
	var buf lockedBuf
	a := start(t, Config{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	c, b := otherClusterStream(t, a)
	defer c.Close()
	require.NoError(t, c.WriteFrame(b))
	require.Eventually(t, func() bool { return strings.Contains(buf.String(), "dropped a packet of another cluster") }, 3*time.Second, 10*time.Millisecond, buf.String())
	assert.Contains(t, buf.String(), "stream:")
	assert.Zero(t, a.Stats().AuthFailures)
}
