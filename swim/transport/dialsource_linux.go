package transport

import "syscall"

// ipBindAddressNoPort is Linux's IP_BIND_ADDRESS_NO_PORT (ip(7)), which
// the syscall package does not name.
const ipBindAddressNoPort = 24

// bindNoPort lets a stream dialled from a given address (StreamConfig
// Source) take its port when it connects, not when it binds: the kernel
// then shares ports between connections to different peers, as it does
// for a dial from its own choice of address, instead of giving each dial a
// port of its own until the range (about 28,000) is exhausted, ports in
// TIME_WAIT included.
func bindNoPort(network, address string, c syscall.RawConn) error {
	// An older kernel without the option binds a port at once, as before.
	return c.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipBindAddressNoPort, 1)
	})
}
