package transport

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rcvbuf reads the socket's SO_RCVBUF as the kernel holds it.
func rcvbuf(t *testing.T, u *UDP) int {
	t.Helper()
	rc, err := u.conn.SyscallConn()
	require.NoError(t, err)
	var v int
	var gerr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	}))
	require.NoError(t, gerr)
	return v
}

// sysctl reads an integer from /proc/sys, or skips the test.
func sysctl(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/core/" + name)
	if err != nil {
		t.Skipf("cannot read net.core.%s: %v", name, err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return v
}

// By default the socket asks for DefaultReadBuffer: Linux grants twice
// min(request, rmem_max), more than its default rmem_default whenever
// rmem_max is at least half of it (as on every stock kernel); a negative
// ReadBuffer keeps the kernel's default.
func TestReadBufferAsked(t *testing.T) {
	def, maxb := sysctl(t, "rmem_default"), sysctl(t, "rmem_max")
	u := listen(t, Config{})
	assert.Equal(t, DefaultReadBuffer, u.ReadBuffer())
	assert.Equal(t, 2*min(DefaultReadBuffer, maxb), rcvbuf(t, u))
	if 2*min(DefaultReadBuffer, maxb) > def {
		assert.Greater(t, rcvbuf(t, u), def)
	}

	k := listen(t, Config{ReadBuffer: -1})
	assert.Zero(t, k.ReadBuffer())
	assert.Equal(t, def, rcvbuf(t, k))

	s := listen(t, Config{ReadBuffer: 100 << 10})
	assert.Equal(t, 100<<10, s.ReadBuffer())
	assert.Equal(t, 2*min(100<<10, maxb), rcvbuf(t, s))
}
