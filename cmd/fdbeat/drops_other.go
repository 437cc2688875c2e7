//go:build !linux

package main

import "net"

// enableDropCount: kernel receive drops are reported on Linux only
// (SO_RXQ_OVFL); elsewhere recv says they are not counted.
func enableDropCount(*net.UDPConn) bool { return false }

func dropCount([]byte) (uint32, bool) { return 0, false }
