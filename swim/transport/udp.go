// Package transport carries SWIM packets over UDP: one socket per member,
// datagrams of at most a configured size, received packets delivered on a
// channel; and, for what a datagram cannot carry, over TCP streams of
// length-prefixed frames with a size cap, a byte budget, a deadline and a
// bound on concurrent connections (ListenStream, DialStream). It knows
// nothing about the packet contents; the wire package encodes and seals
// them and the agent package drives the protocol.
package transport

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// DefaultMaxPacketSize is the default largest datagram sent or accepted, in
// bytes: below the 1,500-byte Ethernet MTU with room for IP and UDP headers.
const DefaultMaxPacketSize = 1400

// DefaultReadBuffer is the default socket receive buffer asked of the
// kernel, in bytes: 2 MiB, as memberlist's NetTransport asks. The kernel's
// default (212,992 bytes on Linux) holds about 150 datagrams of 1,400
// bytes: a member whose reader is starved of CPU for a moment while a
// group joins (views in MsgSync packets, announcements) overflows it and
// loses datagrams, which the kernel drops without a trace in Stats.
const DefaultReadBuffer = 2 << 20

// minReadBuffer is the smallest receive buffer Listen asks for when the
// kernel refuses larger ones (Config.ReadBuffer).
const minReadBuffer = 64 << 10

// Packet is one received datagram.
type Packet struct {
	From netip.AddrPort
	Data []byte
	// At is the arrival instant read from the monotonic clock.
	At time.Time
}

// Transport is what the agent needs from a network: unreliable datagrams.
// The UDP type implements it; tests and the benchmark wrap it to drop, delay
// or hold packets.
type Transport interface {
	// LocalAddr is the address other members send to.
	LocalAddr() netip.AddrPort
	// Send transmits one datagram; it returns an error for packets larger
	// than the maximum size and for socket errors, and never blocks for long.
	Send(to netip.AddrPort, pkt []byte) error
	// Packets delivers received datagrams; it is closed by Close.
	Packets() <-chan Packet
	// Close releases the socket and closes the Packets channel.
	Close() error
}

// Config configures a UDP transport. The zero value means the defaults.
type Config struct {
	// Bind is the local address, host:port. Default "127.0.0.1:0" (loopback,
	// a port chosen by the kernel).
	Bind string
	// MaxPacketSize is the largest datagram, in bytes, sent or accepted;
	// larger incoming datagrams are dropped and counted. Default 1,400;
	// must be between 64 and 65,507.
	MaxPacketSize int
	// QueueLen is the capacity of the Packets channel; when it is full,
	// received packets are dropped and counted, as a kernel would. Default 1,024.
	QueueLen int
	// Source, when set, is the source IP address of every datagram sent
	// by a socket bound to a wildcard address (0.0.0.0, ::). Without it
	// the kernel takes, per destination, the address of the route, which
	// on a host with several addresses need not be the one the member
	// advertises (and members answer a join only when it comes from the
	// address it claims). It must be an address of this host (IsLocal);
	// it is set per datagram with IP_PKTINFO or IPV6_PKTINFO where the
	// platform has them (Linux, the BSDs, macOS) and ignored elsewhere.
	// With a specific Bind it must equal Bind's address or be unset.
	Source netip.Addr
	// ReadBuffer is the socket receive buffer to ask the kernel for, in
	// bytes (SO_RCVBUF). Default DefaultReadBuffer. When the kernel
	// refuses it, Listen asks for half as much while that is at least
	// 64 KiB, and then keeps the kernel's default, as memberlist does.
	// Linux caps a request at net.core.rmem_max without refusing it, so
	// no halving happens there; ReadBuffer on the UDP tells what the
	// socket holds. Negative: keep the kernel's default.
	ReadBuffer int
}

func (c Config) withDefaults() (Config, error) {
	if c.Bind == "" {
		c.Bind = "127.0.0.1:0"
	}
	if c.MaxPacketSize == 0 {
		c.MaxPacketSize = DefaultMaxPacketSize
	}
	if c.MaxPacketSize < 64 || c.MaxPacketSize > 65507 {
		return c, fmt.Errorf("transport: MaxPacketSize %d out of range [64, 65507]", c.MaxPacketSize)
	}
	if c.QueueLen == 0 {
		c.QueueLen = 1024
	}
	if c.QueueLen < 0 {
		return c, fmt.Errorf("transport: QueueLen %d is negative", c.QueueLen)
	}
	if c.ReadBuffer == 0 {
		c.ReadBuffer = DefaultReadBuffer
	}
	return c, nil
}

// IsLocal reports whether ip is an address of this host: one a socket can
// be bound to (on Linux every address of 127.0.0.0/8 is).
func IsLocal(ip netip.Addr) bool {
	if !ip.IsValid() || ip.IsUnspecified() {
		return false
	}
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, 0)))
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// sourceOOB is the control message that makes a datagram leave from src:
// nil when src is unset or the platform cannot say it.
func sourceOOB(src netip.Addr) []byte {
	switch {
	case !src.IsValid():
		return nil
	case src.Unmap().Is4():
		return (&ipv4.ControlMessage{Src: src.Unmap().AsSlice()}).Marshal()
	default:
		return (&ipv6.ControlMessage{Src: src.AsSlice()}).Marshal()
	}
}

// Stats counts traffic through a transport. Bytes are datagram payload bytes
// (without IP and UDP headers).
type Stats struct {
	PacketsSent, BytesSent         uint64
	PacketsReceived, BytesReceived uint64
	// DroppedOversize counts received datagrams larger than MaxPacketSize;
	// DroppedQueueFull those that found the Packets channel full.
	DroppedOversize, DroppedQueueFull uint64
}

// UDP is a Transport over one UDP socket.
type UDP struct {
	conn  *net.UDPConn
	addr  netip.AddrPort
	max   int
	oob   []byte // sets the source address of each datagram (Config.Source); nil: the kernel's choice
	rbuf  int    // the receive buffer the socket holds, or the size asked (UDP.ReadBuffer)
	ch    chan Packet
	done  chan struct{}
	close sync.Once
	wg    sync.WaitGroup

	sent, sentBytes, recv, recvBytes, oversize, full atomic.Uint64
}

// ErrTooLarge is returned by Send for a datagram larger than MaxPacketSize.
var ErrTooLarge = errors.New("transport: packet larger than MaxPacketSize")

// Listen opens a UDP socket and starts reading from it.
func Listen(cfg Config) (*UDP, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ap, err := netip.ParseAddrPort(cfg.Bind)
	if err != nil {
		return nil, fmt.Errorf("transport: Bind %q: want ip:port: %w", cfg.Bind, err)
	}
	var oob []byte
	if src := cfg.Source; src.IsValid() {
		switch {
		case !ap.Addr().IsUnspecified():
			if src.Unmap() != ap.Addr().Unmap() {
				return nil, fmt.Errorf("transport: Source %v with Bind %v: a socket bound to one address sends from it; Source is for a wildcard Bind", src, ap)
			}
		case !IsLocal(src):
			return nil, fmt.Errorf("transport: Source %v is not an address of this host", src)
		default:
			oob = sourceOOB(src)
		}
	}
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap))
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	local := conn.LocalAddr().(*net.UDPAddr).AddrPort()
	u := &UDP{
		rbuf: readBuffer(conn, cfg.ReadBuffer),
		conn: conn,
		addr: netip.AddrPortFrom(local.Addr().Unmap(), local.Port()),
		max:  cfg.MaxPacketSize,
		oob:  oob,
		ch:   make(chan Packet, cfg.QueueLen),
		done: make(chan struct{}),
	}
	u.wg.Add(1)
	go u.readLoop()
	return u, nil
}

// readBuffer asks the kernel for a receive buffer of size bytes (none
// when size is negative) and returns the size the socket then holds
// (UDP.ReadBuffer).
func readBuffer(conn *net.UDPConn, size int) int {
	asked := setReadBuffer(conn, size)
	if held, ok := heldReadBuffer(conn); ok {
		return held
	}
	return asked
}

// setReadBuffer asks the kernel for a receive buffer of size bytes, then
// for half as much while it refuses, as long as that is at least
// minReadBuffer; it returns the size whose request the kernel accepted, 0
// when it accepted none (the kernel's default stays).
func setReadBuffer(conn *net.UDPConn, size int) int {
	for size > 0 {
		if conn.SetReadBuffer(size) == nil {
			return size
		}
		if size /= 2; size < minReadBuffer {
			break
		}
	}
	return 0
}

func (u *UDP) readLoop() {
	defer u.wg.Done()
	defer close(u.ch)
	buf := make([]byte, u.max+1)
	for {
		n, from, err := u.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			select {
			case <-u.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // transient error (e.g. ICMP port unreachable): keep reading
		}
		at := time.Now()
		if n > u.max {
			u.oversize.Add(1)
			continue
		}
		u.recv.Add(1)
		u.recvBytes.Add(uint64(n))
		p := Packet{From: netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), Data: append([]byte(nil), buf[:n]...), At: at}
		select {
		case u.ch <- p:
		default:
			u.full.Add(1)
		}
	}
}

// LocalAddr returns the bound address (with the kernel-chosen port).
func (u *UDP) LocalAddr() netip.AddrPort { return u.addr }

// ReadBuffer returns the receive buffer the socket holds, in bytes, read
// back from the kernel after Listen asked for Config.ReadBuffer: what
// getsockopt(SO_RCVBUF) reports on Unix systems, halved on Linux, which
// reports twice the size it grants (the other half is its bookkeeping).
// On Linux that is the size asked capped at net.core.rmem_max (a request
// above it is not refused), or half of net.core.rmem_default when the
// kernel's default was kept (a negative Config.ReadBuffer). Where the
// socket cannot be read back (Windows, Plan 9) it is the size whose
// request the kernel accepted, 0 when the kernel's default was kept.
func (u *UDP) ReadBuffer() int { return u.rbuf }

// MaxPacketSize returns the configured maximum datagram size in bytes.
func (u *UDP) MaxPacketSize() int { return u.max }

// Send writes one datagram to to.
func (u *UDP) Send(to netip.AddrPort, pkt []byte) error {
	if len(pkt) > u.max {
		return fmt.Errorf("%w: %d > %d bytes", ErrTooLarge, len(pkt), u.max)
	}
	var err error
	if u.oob != nil {
		_, _, err = u.conn.WriteMsgUDPAddrPort(pkt, u.oob, to)
	} else {
		_, err = u.conn.WriteToUDPAddrPort(pkt, to)
	}
	if err != nil {
		return fmt.Errorf("transport: send to %s: %w", to, err)
	}
	u.sent.Add(1)
	u.sentBytes.Add(uint64(len(pkt)))
	return nil
}

// Packets returns the channel of received datagrams.
func (u *UDP) Packets() <-chan Packet { return u.ch }

// Close closes the socket, waits for the reader to stop and closes Packets.
// It is safe to call more than once.
func (u *UDP) Close() error {
	var err error
	u.close.Do(func() {
		close(u.done)
		err = u.conn.Close()
		u.wg.Wait()
	})
	return err
}

// Stats returns the traffic counters.
func (u *UDP) Stats() Stats {
	return Stats{
		PacketsSent: u.sent.Load(), BytesSent: u.sentBytes.Load(),
		PacketsReceived: u.recv.Load(), BytesReceived: u.recvBytes.Load(),
		DroppedOversize: u.oversize.Load(), DroppedQueueFull: u.full.Load(),
	}
}
