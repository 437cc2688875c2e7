package main

import (
	"fmt"
	"net/netip"
)

// advertiseWarning returns the start-up warning for an advertised address
// the bound socket does not receive, or "" when there is none to give. The
// other members send to --advertise and answer a join only when it comes
// from that address (swim/agent's joinFromClaimed), so an advertised IP
// that is not the socket's is reachable only through a NAT or port mapping
// that forwards it there; without one the join times out with nothing to
// say why. The socket's addresses are --bind's IP, or, bound to a wildcard
// (0.0.0.0, ::), every address of this host (isLocal; the agent then sends
// from the advertised one). Addresses that do not parse are left to the
// agent's own checks.
func advertiseWarning(bind, advertise string, isLocal func(netip.Addr) bool) string {
	b, err1 := netip.ParseAddrPort(bind)
	ad, err2 := netip.ParseAddrPort(advertise)
	if advertise == "" || err1 != nil || err2 != nil {
		return ""
	}
	bip, aip := b.Addr().Unmap(), ad.Addr().Unmap()
	switch {
	case !bip.IsUnspecified() && bip != aip:
		return fmt.Sprintf("--advertise %s is not the address --bind %s listens on: the other members send to %v, and answer a join only "+
			"when it comes from there, but this agent receives on %v and sends from it; unless a NAT or port mapping forwards %v here, "+
			"--bind the advertised address (or 0.0.0.0 with its port)", advertise, bind, aip, bip, aip)
	case bip.IsUnspecified() && !isLocal(aip):
		return fmt.Sprintf("--advertise %s is not an address of this host, which --bind %s listens on: the other members send to %v and answer "+
			"a join only when it comes from there, so this agent is reached only if a NAT or port mapping forwards %v here and translates "+
			"its packets to it", advertise, bind, aip, aip)
	}
	return ""
}
