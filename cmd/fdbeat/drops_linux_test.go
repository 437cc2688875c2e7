package main

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The kernel's receive drops reach recv through SO_RXQ_OVFL: a socket with
// a small receive buffer that is not read while 2,000 datagrams come drops
// most of them, and the next datagram read carries the count.
func TestKernelDropsCounted(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer pc.Close()
	uc := pc.(*net.UDPConn)
	require.True(t, enableDropCount(uc), "SO_RXQ_OVFL is supported on Linux")
	require.NoError(t, uc.SetReadBuffer(4096))
	conn, err := net.Dial("udp", uc.LocalAddr().String())
	require.NoError(t, err)
	defer conn.Close()
	pkt, _ := appendPacket(nil, packet{Name: "x"})
	for range 2000 {
		_, _ = conn.Write(pkt)
	}
	buf, oob := make([]byte, 2048), make([]byte, 64)
	var drops uint32
	for range 2 { // drain, then one more datagram stamped with the count
		for {
			require.NoError(t, uc.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
			_, oobn, _, _, err := uc.ReadMsgUDP(buf, oob)
			if err != nil {
				break
			}
			if d, ok := dropCount(oob[:oobn]); ok {
				drops = d
			}
		}
		_, _ = conn.Write(pkt)
	}
	require.Positive(t, drops)
	t.Logf("%d of 2000 datagrams dropped by the kernel", drops)
}
