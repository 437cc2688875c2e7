package agent

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// TestStreamUnknownKindNotDecodeError: a later version's message kind on a
// stream is counted as an unknown kind, as on UDP, not as a stream decode
// error (issue 13: unknown kinds are ignored and counted, not treated as
// decode errors); the stream ends without an answer.
func TestStreamUnknownKindNotDecodeError(t *testing.T) {
	a := start(t, Config{Plain: true})
	c, err := transport.DialStream(context.Background(), netip.MustParseAddrPort(a.Self().Addr), transport.StreamConfig{Timeout: 3 * time.Second})
	require.NoError(t, err)
	defer c.Close()
	unknown := []byte{wire.EnvelopePlain, wire.Version, 200, 2, 'z', 'z', 0, 0, 0, 0, 0}
	require.NoError(t, c.WriteFrame(unknown))
	_, err = c.ReadFrame()
	assert.Error(t, err, "no answer")
	require.Eventually(t, func() bool { return a.Stats().UnknownKinds == 1 }, 3*time.Second, 5*time.Millisecond)
	assert.Zero(t, a.Stats().StreamDecodeErrors)
}
