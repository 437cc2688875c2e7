//go:build linux || darwin

package agent

import (
	"net"
	"syscall"
)

// peerState tells, from the kernel, whether the dialler of the accepted
// stream c has closed it, without reading from it: a recv of one byte
// with MSG_PEEK and MSG_DONTWAIT returns 0 once the dialler's FIN has
// arrived and nothing is left to read, EAGAIN while the stream is open and
// idle, and the byte while data waits for c's reader.
func peerState(c net.Conn) streamPeer {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return peerUnknown
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return peerUnknown
	}
	st := peerUnknown
	var b [1]byte
	err = rc.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			st = peerOpen
		case err == syscall.ECONNRESET:
			st = peerClosed
		case err != nil:
		case n == 0:
			st = peerClosed
		default:
			st = peerData
		}
	})
	if err != nil {
		return peerUnknown
	}
	return st
}
