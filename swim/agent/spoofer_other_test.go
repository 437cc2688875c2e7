//go:build !unix

package agent

import (
	"net/netip"
	"testing"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// spoofer needs a raw IPv4 socket (spoofer_unix_test.go); elsewhere the
// tests that use it skip.
type spoofer struct{ sent int }

func newSpoofer(t *testing.T, _ *wire.Codec) *spoofer {
	t.Skip("spoofing a source address needs a raw socket: Unix only")
	return nil
}

func (s *spoofer) send(*testing.T, netip.AddrPort, swim.Node, swim.Packet) {}

func (s *spoofer) write(_, _ netip.AddrPort, _ []byte) error { return nil }
