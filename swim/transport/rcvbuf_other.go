//go:build !unix

package transport

import "net"

// heldReadBuffer reports that the receive buffer cannot be read back on
// this platform (ok false): ReadBuffer is then the size asked.
func heldReadBuffer(*net.UDPConn) (size int, ok bool) { return 0, false }
