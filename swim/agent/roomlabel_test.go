package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With a long cluster label the envelope itself passes the protocol's
// 256 bytes of payload, and the state machine wants the payload larger
// than the envelope: the error names the least MaxPacketSize that works
// (usr29 F1: it named 525 for a 230-byte label, which then failed with a
// "WireOverhead" error; 539 is the first that works). Worked: 1 + 12 + 16
// bytes of sealed envelope, 8 of timestamp, 2 + 230 of label header: 269;
// the payload must exceed it, 270, so 539.
func TestMaxPacketSizeWithLongLabel(t *testing.T) {
	label := strings.Repeat("l", 230)
	_, err := Start(context.Background(), Config{Bind: "127.0.0.1:0", Keys: [][]byte{testKey}, Label: label, MaxPacketSize: 538, DisableStream: true})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "MaxPacketSize", ce.Field)
	assert.ErrorContains(t, err, "so at least 539 with this envelope (269 bytes, the 230-byte Label included; or a shorter Label)")
	a, err := Start(context.Background(), Config{Bind: "127.0.0.1:0", Keys: [][]byte{testKey}, Label: label, MaxPacketSize: 539, DisableStream: true})
	require.NoError(t, err, "the size the error named")
	_ = a.Close()
}
