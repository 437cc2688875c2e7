//go:build unix

package transport

import (
	"net"
	"runtime"
	"syscall"
)

// heldReadBuffer returns the receive buffer conn's socket holds, in bytes,
// as getsockopt(SO_RCVBUF) reports it, halved on Linux: Linux stores, and
// reports, twice the size it grants, the other half for its bookkeeping
// (socket(7)). ok is false when the socket cannot be read.
func heldReadBuffer(conn *net.UDPConn) (size int, ok bool) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return 0, false
	}
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		size, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	}); err != nil || gerr != nil || size <= 0 {
		return 0, false
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "android" {
		size /= 2
	}
	return size, true
}
