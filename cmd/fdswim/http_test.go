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

// runHTTPAgent runs `fdswim agent --plain --http addr` in-process, its
// server within lim, until the test ends and returns the HTTP address it
// printed and its stderr.
func runHTTPAgent(t *testing.T, addr string, lim httpLimits) (string, *syncBuf) {
	t.Helper()
	var out, errb syncBuf
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runAgentEnv(ctx, []string{"--plain", "--bind", "127.0.0.1:0", "--http", addr, "--leave-timeout", "50ms"}, &out, &errb, agentEnv{http: lim, join: defaultJoinBackoff()})
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
	_, errb := runHTTPAgent(t, ":0", defaultHTTPLimits)
	assert.Contains(t, errb.String(), "not a loopback address")
	_, errb = runHTTPAgent(t, "127.0.0.1:0", defaultHTTPLimits)
	assert.NotContains(t, errb.String(), "warning")
}

// An idle keep-alive connection is closed by the server after the idle
// timeout, not left open as long as the client wishes.
func TestHTTPIdleConnectionClosed(t *testing.T) {
	lim := defaultHTTPLimits
	lim.idle = 100 * time.Millisecond
	addr, _ := runHTTPAgent(t, "127.0.0.1:0", lim)
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

// get sends a GET on c and reads the response; the caller sets deadlines.
func get(c net.Conn, path string) (*http.Response, error) {
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// A client gets the write timeout from the end of its request headers to
// read the response; past it the server gives up on the connection. With
// a timeout already over when the handler writes (1 ns), no response
// arrives (without a write timeout it would).
func TestHTTPWriteTimeout(t *testing.T) {
	assert.Greater(t, defaultHTTPLimits.write, 10*time.Second, "above Prometheus's default scrape timeout")
	lim := defaultHTTPLimits
	lim.write = time.Nanosecond
	addr, _ := runHTTPAgent(t, "127.0.0.1:0", lim)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	resp, err := get(c, "/metrics")
	assert.Error(t, err, "no response past the write timeout (got %v)", resp)
}

// At most maxConns connections are served at once: one more waits,
// unanswered, until an earlier one closes, then is served: idle clients
// cannot hold thousands of connections open.
func TestHTTPConnectionLimit(t *testing.T) {
	lim := defaultHTTPLimits
	lim.maxConns = 2
	addr, _ := runHTTPAgent(t, "127.0.0.1:0", lim)
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		held = append(held, c)
	}
	// Make sure the server has accepted both: a request on each is answered.
	for _, c := range held {
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		resp, err := get(c, "/healthz")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}
	third, err := net.Dial("tcp", addr) // queued by the kernel, not accepted
	require.NoError(t, err)
	defer third.Close()
	require.NoError(t, third.SetDeadline(time.Now().Add(300*time.Millisecond)))
	_, err = get(third, "/healthz")
	var ne net.Error
	require.ErrorAs(t, err, &ne, "the third connection is not served while two are open")
	assert.True(t, ne.Timeout())

	held[0].Close()
	// The request already sent on the third connection is read once the
	// server accepts it.
	require.NoError(t, third.SetDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	require.NoError(t, err, "served once a slot is free")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
