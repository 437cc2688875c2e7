package agent

import (
	"errors"
	"net"

	"github.com/fdkit/fdkit/swim/transport"
)

// listenUDP opens a UDP socket for a test as transport.Listen does, and
// when cfg asks for any port, one whose number is also free on TCP: an
// agent given the socket as Config.Transport opens its stream listener on
// the same port number, which another process may hold on TCP (a test
// failed that way on a loaded machine). The TCP port is probed and
// released, so a later bind can still lose a race, but only within
// microseconds.
func listenUDP(cfg transport.Config) (*transport.UDP, error) {
	if _, port, _ := net.SplitHostPort(cfg.Bind); port != "" && port != "0" {
		return transport.Listen(cfg) // a fixed port: the caller's choice
	}
	for range 16 {
		u, err := transport.Listen(cfg)
		if err != nil {
			return nil, err
		}
		probe, err := net.Listen("tcp", u.LocalAddr().String())
		if err == nil {
			_ = probe.Close()
			return u, nil
		}
		_ = u.Close()
	}
	return nil, errors.New("listenUDP: no port free on both UDP and TCP in 16 tries")
}
