package agent

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
)

// startErr starts an agent with cfg (plain) and returns its error as a
// *ConfigError, failing when it is none.
func startErr(t *testing.T, cfg Config) *ConfigError {
	t.Helper()
	cfg.Plain = true
	a, err := Start(context.Background(), cfg)
	if err == nil {
		_ = a.Close()
	}
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	return ce
}

// usr27 F6: Start's errors for a field that cannot work name the field,
// the value as the application gave it (or the field its default came
// from) and the fields that would fix it, in a *ConfigError a command can
// translate into its flags: the stream listener's port taken (by default
// Bind's, or StreamBind's), Bind's UDP port taken, an advertised address
// defaulted from a Bind of 0.0.0.0 (said as given, not as the socket's
// [::]), an ID or address over 255 bytes (said which, and its length; it
// was swim's "Self.ID or Self.Addr longer than 255 bytes").
func TestConfigErrorNamesTheField(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer tcp.Close()
	taken := tcp.Addr().String()

	ce := startErr(t, Config{Bind: taken})
	assert.Equal(t, "StreamBind", ce.Field)
	assert.Equal(t, "Bind", ce.From)
	assert.Equal(t, taken, ce.Value)
	assert.Equal(t, []string{"DisableStream"}, ce.Or)
	assert.ErrorContains(t, ce, "agent: StreamBind (by default Bind "+taken+"): stream listener: the TCP port "+addrPort(taken)+" is in use (the UDP port is free): ")
	assert.True(t, strings.HasSuffix(ce.Error(), ": set StreamBind, or DisableStream"), ce.Error())

	ce = startErr(t, Config{Bind: "127.0.0.1:0", StreamBind: taken})
	assert.Equal(t, ConfigError{Field: "StreamBind", Value: taken, Err: ce.Err, Or: []string{"DisableStream"}}, *ce)
	assert.ErrorContains(t, ce, "agent: StreamBind "+taken+": stream listener: ")

	udp, err := listenUDP(transport.Config{Bind: "127.0.0.1:0"})
	require.NoError(t, err)
	defer udp.Close()
	ce = startErr(t, Config{Bind: udp.LocalAddr().String(), DisableStream: true})
	assert.Equal(t, "Bind", ce.Field)
	assert.Equal(t, udp.LocalAddr().String(), ce.Value)
	assert.Empty(t, ce.From)
	assert.ErrorContains(t, ce, "agent: Bind "+udp.LocalAddr().String()+": ")

	// usr28 F4: Bind's port taken, on UDP alone or on both (another
	// member there), is Bind's error, saying which; it blamed the stream
	// listener for both and advised StreamBind or DisableStream.
	busy := udp.LocalAddr().String()
	ce = startErr(t, Config{Bind: busy})
	assert.Equal(t, "Bind", ce.Field)
	assert.Empty(t, ce.From)
	assert.True(t, errors.Is(ce, syscall.EADDRINUSE), "%v", ce)
	assert.ErrorContains(t, ce, "agent: Bind "+busy+": the UDP port "+addrPort(busy)+" is in use (the TCP port is free): use another port: ")
	other := start(t, Config{Plain: true})
	busy = other.Self().Addr
	ce = startErr(t, Config{Bind: busy})
	assert.Equal(t, "Bind", ce.Field)
	assert.Empty(t, ce.From)
	assert.Empty(t, ce.Or)
	assert.True(t, errors.Is(ce, syscall.EADDRINUSE), "%v", ce)
	assert.ErrorContains(t, ce, "agent: Bind "+busy+": the port "+addrPort(busy)+" is in use, both UDP and TCP (another member running there?): use another port: ")

	for _, bind := range []string{"0.0.0.0:0", "[::]:0"} {
		l, lerr := net.Listen("tcp", bind)
		if lerr != nil {
			t.Logf("no %s here (%v): not tried", bind, lerr) // a host without IPv6
			continue
		}
		_ = l.Close()
		ce = startErr(t, Config{Bind: bind})
		assert.Equal(t, ConfigError{Field: "Advertise", Value: bind, From: "Bind", Err: ce.Err}, *ce, bind)
		assert.EqualError(t, ce, "agent: Advertise (by default Bind "+bind+"): names no host or port: not an address the other members can send to: set Advertise")
	}
	ce = startErr(t, Config{Advertise: "0.0.0.0:7946"})
	assert.EqualError(t, ce, "agent: Advertise 0.0.0.0:7946: names no host or port: not an address the other members can send to")

	long := strings.Repeat("x", 300)
	ce = startErr(t, Config{ID: swim.ID(long)})
	assert.Equal(t, ConfigError{Field: "ID", Value: long, Err: ce.Err}, *ce)
	assert.EqualError(t, ce, "agent: ID \""+long[:32]+"\"… (300 bytes): longer than 255 bytes (swim.MaxIDLen)")
	ce = startErr(t, Config{ID: "a\nb"})
	assert.EqualError(t, ce, "agent: ID \"a\\nb\": byte 1 is the control character U+000A")

	ce = startErr(t, Config{MaxPacketSize: 200})
	assert.Equal(t, ConfigError{Field: "MaxPacketSize", Value: "200", Err: ce.Err}, *ce)
	assert.ErrorContains(t, ce, "agent: MaxPacketSize 200: too small: the protocol needs ")

	zoned := "[fe80::1%" + strings.Repeat("z", 260) + "]:7946"
	ce = startErr(t, Config{Advertise: zoned})
	assert.Equal(t, "Advertise", ce.Field)
	assert.ErrorContains(t, ce, "(275 bytes): longer than 255 bytes (swim.MaxAddrLen)")
	assert.False(t, errors.Is(ce, swim.ErrConfig), "Start's own check, before the state machine's")
}

// addrPort is the port of the ip:port addr.
func addrPort(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
