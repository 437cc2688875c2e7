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

// By default the socket asks for DefaultReadBuffer: Linux grants
// min(request, rmem_max) and holds twice that, more than its default
// rmem_default whenever rmem_max is at least half of it (as on every
// stock kernel); a negative ReadBuffer keeps the kernel's default.
// ReadBuffer reports half of what the socket holds, in every case.
func TestReadBufferAsked(t *testing.T) {
	def, maxb := sysctl(t, "rmem_default"), sysctl(t, "rmem_max")
	u := listen(t, Config{})
	assert.Equal(t, min(DefaultReadBuffer, maxb), u.ReadBuffer())
	assert.Equal(t, 2*min(DefaultReadBuffer, maxb), rcvbuf(t, u))
	if 2*min(DefaultReadBuffer, maxb) > def {
		assert.Greater(t, rcvbuf(t, u), def)
	}

	k := listen(t, Config{ReadBuffer: -1})
	assert.Equal(t, def/2, k.ReadBuffer())
	assert.Equal(t, def, rcvbuf(t, k))

	s := listen(t, Config{ReadBuffer: 100 << 10})
	assert.Equal(t, min(100<<10, maxb), s.ReadBuffer())
	assert.Equal(t, 2*min(100<<10, maxb), rcvbuf(t, s))
}

// A request above net.core.rmem_max is not refused but capped: ReadBuffer
// reports the cap, not the size asked.
func TestReadBufferCapped(t *testing.T) {
	maxb := sysctl(t, "rmem_max")
	if 2*maxb > 1<<30 {
		t.Skipf("net.core.rmem_max is %d: asking twice as much is not a sane test", maxb)
	}
	u := listen(t, Config{ReadBuffer: 2 * maxb})
	assert.Equal(t, maxb, u.ReadBuffer(), "capped at rmem_max")
	assert.Equal(t, 2*maxb, rcvbuf(t, u))
}
