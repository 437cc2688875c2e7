package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runHTTPAgent runs `fdswim agent --plain --http addr` in-process until the
// test ends and returns the HTTP address it printed and its stderr.
func runHTTPAgent(t *testing.T, addr string) (string, *syncBuf) {
	t.Helper()
	var out, errb syncBuf
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runAgent(ctx, []string{"--plain", "--bind", "127.0.0.1:0", "--http", addr, "--leave-timeout", "50ms"}, &out, &errb)
	}()
	t.Cleanup(func() { cancel(); <-done })
	var got string
	require.Eventually(t, func() bool {
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, " msg=http ") {
				got = field(line, "addr")
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond)
	return got, &errb
}

// --http on a non-loopback address is served, with a warning on stderr
// that the endpoints are open to anyone who can reach it; on loopback there
// is no warning.
func TestHTTPNonLoopbackWarns(t *testing.T) {
	_, errb := runHTTPAgent(t, ":0")
	assert.Contains(t, errb.String(), "not a loopback address")
	_, errb = runHTTPAgent(t, "127.0.0.1:0")
	assert.NotContains(t, errb.String(), "warning")
}

// An idle keep-alive connection is closed by the server after the idle
// timeout (before, it stayed open as long as the client wished).
func TestHTTPIdleConnectionClosed(t *testing.T) {
	old := httpIdleTimeout
	httpIdleTimeout = 100 * time.Millisecond
	t.Cleanup(func() { httpIdleTimeout = old })
	addr, _ := runHTTPAgent(t, "127.0.0.1:0")
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	// Idle now: the server closes the connection; generous deadline.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = r.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the server closed the idle connection")
}
