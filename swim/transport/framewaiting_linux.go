package transport

import (
	"encoding/binary"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// firstFrameWaiting reports whether a whole frame of at most maxFrame
// bytes waits unread at the head of c's kernel receive buffer: its 4-byte
// length, read without consuming it (recv with MSG_PEEK), and that many
// bytes after it (ioctl SIOCINQ, tcp(7)). The listener calls it only for
// a stream its handler has read nothing from, whose buffer therefore
// starts with the first frame. False when c is not a socket or the
// kernel does not say.
func firstFrameWaiting(c net.Conn, maxFrame int) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	whole := false
	_ = raw.Control(func(fd uintptr) {
		var h [FrameHeaderSize]byte
		n, _, err := unix.Recvfrom(int(fd), h[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		if err != nil || n < FrameHeaderSize {
			return
		}
		size := binary.BigEndian.Uint32(h[:])
		if size < 1 || uint64(size) > uint64(maxFrame) {
			return
		}
		queued, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ)
		whole = err == nil && uint64(queued) >= FrameHeaderSize+uint64(size)
	})
	return whole
}
