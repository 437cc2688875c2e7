//go:build !linux

package transport

import "syscall"

// bindNoPort is nil where IP_BIND_ADDRESS_NO_PORT is not known: a stream
// dialled from a given address binds its port at once.
var bindNoPort func(network, address string, c syscall.RawConn) error
