//go:build !linux

package transport

import "net"

// firstFrameWaiting is false where the kernel's receive buffer is not
// looked into (Linux only, framewaiting_linux.go): a stream whose handler
// has not read yet is evicted as any other.
func firstFrameWaiting(net.Conn, int) bool { return false }
