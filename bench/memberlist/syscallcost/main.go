//go:build unix

// Command syscallcost prints, once a second, the CPU time a fixed workload
// of system calls and thread wakeups costs on this machine: two OS threads
// pass one byte back and forth through two pipes, 20 round trips every
// 10 ms, and each line gives the second, the round trips done and the
// process's CPU time (user and system, getrusage) per round trip in
// microseconds.
//
// The workload never changes, so on an idle machine its cost should not
// either; on the virtual machine bench/memberlist was measured on it
// changed by up to 6 times from one second to the next, which is why
// bench/memberlist runs the libraries side by side (see its README):
//
//	cd bench/memberlist && go run ./syscallcost -for 40s
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "syscallcost: getrusage:", err)
		os.Exit(1)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	total := flag.Duration("for", 30*time.Second, "how long to measure")
	flag.Parse()
	if *total <= 0 {
		fmt.Fprintf(os.Stderr, "syscallcost: -for %v: want a positive duration\n", *total)
		os.Exit(2)
	}
	var ping, pong [2]int
	if err := syscall.Pipe(ping[:]); err != nil {
		fmt.Fprintln(os.Stderr, "syscallcost:", err)
		os.Exit(1)
	}
	if err := syscall.Pipe(pong[:]); err != nil {
		fmt.Fprintln(os.Stderr, "syscallcost:", err)
		os.Exit(1)
	}
	go func() {
		runtime.LockOSThread()
		b := make([]byte, 1)
		for {
			if _, err := syscall.Read(ping[0], b); err != nil {
				return
			}
			if _, err := syscall.Write(pong[1], b); err != nil {
				return
			}
		}
	}()
	runtime.LockOSThread()
	b := []byte{1}
	start := time.Now()
	fmt.Println("second round-trips cpu-us/round-trip")
	for time.Since(start) < *total {
		c0, t0, n := cpu(), time.Now(), 0
		for time.Since(t0) < time.Second {
			for range 20 {
				if _, err := syscall.Write(ping[1], b); err != nil {
					fmt.Fprintln(os.Stderr, "syscallcost:", err)
					os.Exit(1)
				}
				if _, err := syscall.Read(pong[0], b); err != nil {
					fmt.Fprintln(os.Stderr, "syscallcost:", err)
					os.Exit(1)
				}
				n++
			}
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Printf("%.0f %d %.2f\n", time.Since(start).Seconds(), n, float64(cpu()-c0)/float64(time.Microsecond)/float64(n))
	}
}
