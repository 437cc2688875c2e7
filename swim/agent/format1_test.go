package agent

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFormat1RefusesMetaAndState: an agent writing wire format 1, which has
// no field for metadata or application state, refuses them as it refuses
// Broadcast and SendTo (ErrNeedsFormat2), instead of keeping metadata that
// only it shows and raising its incarnation for a change nobody hears.
func TestFormat1RefusesMetaAndState(t *testing.T) {
	cfg := Config{Plain: true, WireVersion: 1, Bind: "127.0.0.1:0", Protocol: fast()}
	cfg.Protocol.Meta = []byte("zone=eu")
	a, err := Start(context.Background(), cfg)
	if err == nil {
		_ = a.Close()
	}
	assert.ErrorIs(t, err, ErrNeedsFormat2, "Protocol.Meta with WireVersion 1")

	cfg = Config{Plain: true, WireVersion: 1, Bind: "127.0.0.1:0", Protocol: fast(),
		LocalState: func(bool) []byte { return []byte("s") }}
	a, err = Start(context.Background(), cfg)
	if err == nil {
		_ = a.Close()
	}
	assert.ErrorIs(t, err, ErrNeedsFormat2, "LocalState with WireVersion 1")

	cfg = Config{Plain: true, WireVersion: 1, Bind: "127.0.0.1:0", Protocol: fast()}
	cfg.Protocol.AckPayload = func() []byte { return []byte("coord") }
	a, err = Start(context.Background(), cfg)
	if err == nil {
		_ = a.Close()
	}
	assert.ErrorIs(t, err, ErrNeedsFormat2, "AckPayload with WireVersion 1")

	a = start(t, Config{Plain: true, WireVersion: 1, Bind: "127.0.0.1:0"})
	inc := a.Members()[0].Incarnation
	require.ErrorIs(t, a.SetMeta(context.Background(), []byte("zone=eu")), ErrNeedsFormat2)
	m := a.Members()[0]
	assert.Equal(t, inc, m.Incarnation, "no incarnation bump for metadata nobody receives")
	assert.Empty(t, m.Meta)
	assert.NoError(t, a.SetMeta(context.Background(), nil), "clearing (no metadata) is what format 1 says")
}
