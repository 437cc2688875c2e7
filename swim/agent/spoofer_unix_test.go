//go:build unix

package agent

import (
	"encoding/binary"
	"net/netip"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// spoofer writes UDP datagrams with an IPv4 source address and port of
// its choice, over a raw socket: what anyone on a network without source
// address filtering can send. A raw socket needs root (CAP_NET_RAW);
// without it newSpoofer skips the test.
type spoofer struct {
	fd    int
	codec *wire.Codec
	sent  int // UDP payload bytes written
}

// newSpoofer opens the raw socket, closed when t ends, or skips t.
func newSpoofer(t *testing.T, codec *wire.Codec) *spoofer {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_RAW)
	if err != nil {
		t.Skipf("spoofing a source address needs a raw socket, which needs root (CAP_NET_RAW): %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	return &spoofer{fd: fd, codec: codec}
}

// send encodes pk, addressed to to, and writes it to to's address as a
// UDP datagram from src. The UDP checksum is left 0 (none, for IPv4);
// the kernel fills in the IP header's checksum and ID.
func (s *spoofer) send(t *testing.T, src netip.AddrPort, to swim.Node, pk swim.Packet) {
	t.Helper()
	data, dst, err := encodeTo(s.codec, to, pk)
	require.NoError(t, err)
	require.NoError(t, s.write(src, dst, data))
	s.sent += len(data)
}

// write writes data to dst as a UDP datagram from src; it may be called
// from any goroutine (send's require may not).
func (s *spoofer) write(src, dst netip.AddrPort, data []byte) error {
	const ipLen, udpLen = 20, 8
	b := make([]byte, ipLen+udpLen+len(data))
	b[0] = 4<<4 | ipLen/4 // IPv4, header of 5 words
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	b[8] = 64 // TTL
	b[9] = syscall.IPPROTO_UDP
	from, dest := src.Addr().As4(), dst.Addr().As4()
	copy(b[12:16], from[:])
	copy(b[16:20], dest[:])
	u := b[ipLen:]
	binary.BigEndian.PutUint16(u[0:], src.Port())
	binary.BigEndian.PutUint16(u[2:], dst.Port())
	binary.BigEndian.PutUint16(u[4:], uint16(udpLen+len(data)))
	copy(u[udpLen:], data)
	return syscall.Sendto(s.fd, b, 0, &syscall.SockaddrInet4{Addr: dest})
}
