package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// How a -procs group formed, told on stderr for every run: a join column
// that includes starting N processes one after another cannot by itself
// say whether a slow run waited on the host (processes started late) or
// on the protocol (a member that missed a joiner), nor whether datagrams
// were lost on the way (a receiver's socket buffer full while its process
// did not run).

// maxLacks is the most members a member process names when it lacks them
// ("lacks"): a forming group's last misses, not every view on the way.
const maxLacks = 4

// lacking returns the names (as StartOne gives them, Params.memberName) of
// the first n members that are not in seen.
func lacking(seen []string, n int, p Params) []string {
	var l []string
	for i := 0; i < n; i++ {
		if name := p.memberName(i); !slices.Contains(seen, name) {
			l = append(l, name)
		}
	}
	return l
}

// joinReport is the line a -procs run prints once its group has formed:
// when the last member process was up (started and joined through its
// seed: up after t0), when every member saw all N (all), which member saw
// all last and whom it lacked last, and how many datagrams the kernel
// dropped at the group's UDP sockets meanwhile (their receive buffers
// full).
func joinReport(lib string, run int, t0 time.Time, up, all time.Duration, procs []*memberProc, addrs []string) string {
	last := procs[0]
	for _, p := range procs[1:] {
		if p.fullAt.Load() > last.fullAt.Load() {
			last = p
		}
	}
	lacked := "saw all at once"
	if l := last.lacks.Load(); l != nil {
		lacked = "lacked " + *l + " last"
	}
	drops := "datagrams dropped at the group's full UDP receive buffers: "
	if d, err := udpDrops(addrs); err != nil {
		drops += "unknown (" + err.Error() + ")"
	} else {
		drops += strconv.FormatUint(d, 10)
	}
	return fmt.Sprintf("join %s run %d: %d member processes up after %.2f s, all see all at %.2f s; last %s at %.2f s (%s); %s",
		lib, run, len(procs), up.Seconds(), all.Seconds(), last.name,
		time.Unix(0, last.fullAt.Load()).Sub(t0).Seconds(), lacked, drops)
}

// udpDrops returns the datagrams the kernel dropped at the UDP sockets
// bound to the ports of addrs (ip:port), from the drops column of
// /proc/net/udp and /proc/net/udp6 (a system without IPv6 has no udp6).
func udpDrops(addrs []string) (uint64, error) {
	ports := map[uint16]bool{}
	for _, a := range addrs {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			return 0, fmt.Errorf("member address %q: %w", a, err)
		}
		ports[ap.Port()] = true
	}
	var sum uint64
	for _, name := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) && name != "/proc/net/udp" {
			continue
		}
		if err != nil {
			return 0, err
		}
		d, err := parseUDPDrops(f, ports)
		_ = f.Close()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		sum += d
	}
	return sum, nil
}

// parseUDPDrops sums the drops column (the 13th, last) of the sockets in
// a /proc/net/udp table whose local port (local_address, hexadecimal
// ADDR:PORT) is in ports. The first line is the header.
func parseUDPDrops(r io.Reader, ports map[uint16]bool) (uint64, error) {
	sc := bufio.NewScanner(r)
	var sum uint64
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 13 {
			return 0, fmt.Errorf("line %d: %d fields, want 13 (sl local_address ... drops)", line, len(f))
		}
		i := strings.LastIndexByte(f[1], ':')
		if i < 0 {
			return 0, fmt.Errorf("line %d: local_address %q: want ADDR:PORT in hexadecimal", line, f[1])
		}
		port, err := strconv.ParseUint(f[1][i+1:], 16, 16)
		if err != nil {
			return 0, fmt.Errorf("line %d: local_address %q: port: %w", line, f[1], err)
		}
		if !ports[uint16(port)] {
			continue
		}
		d, err := strconv.ParseUint(f[12], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("line %d: drops %q: %w", line, f[12], err)
		}
		sum += d
	}
	return sum, sc.Err()
}
