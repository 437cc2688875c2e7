package main

import (
	"encoding/binary"
	"net"
	"syscall"
)

// enableDropCount asks the kernel to attach to each datagram the number of
// datagrams the socket dropped so far because its receive buffer was full
// (SO_RXQ_OVFL, Linux ≥ 2.6.33, socket(7)). It reports whether the count is
// available.
func enableDropCount(c *net.UDPConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RXQ_OVFL, 1)
	}); err != nil || serr != nil {
		return false
	}
	return true
}

// dropCount returns the drop count of SO_RXQ_OVFL in a datagram's control
// messages (a uint32 in host byte order), and whether there was one.
func dropCount(oob []byte) (uint32, bool) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, false
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SO_RXQ_OVFL && len(m.Data) >= 4 {
			return binary.NativeEndian.Uint32(m.Data), true
		}
	}
	return 0, false
}
