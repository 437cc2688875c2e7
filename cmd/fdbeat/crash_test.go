package main

import (
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A real "fdbeat recv" process killed with SIGKILL while heartbeats keep
// coming leaves a trace whose every heartbeat received more than a second
// before the kill reads back (leniently), in order and intact. Before the
// periodic flush, the gzip file held nothing but its header after hundreds
// of heartbeats.
//
// The test is not timed against the receiver: it learns from recv's own
// table (the monitors' heartbeat count, read under the lock that also
// guards the recording) how many heartbeats were recorded at an instant T,
// waits a second after T (longer, up to 3 s, until they read back from the
// file, on a machine so loaded that the flush itself lags), and kills;
// every one of those must be in the file after the kill.
func TestRecvSIGKILLKeepsRecordedHeartbeats(t *testing.T) {
	for _, name := range []string{"kill.fdk.gz", "kill.fdk", "kill.fdk.xz"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), name)
			recv, log := startMain(t, "receiving heartbeats", "recv", "--listen", "127.0.0.1:0", "--out", out,
				"--refresh", "50ms", "--plain")
			addr := listenAddr(t, log)
			conn, err := net.Dial("udp", addr)
			require.NoError(t, err)
			defer conn.Close()

			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() { // heartbeats every 2 ms until after the kill
				for seq := uint64(0); ; seq++ {
					b, _ := appendPacket(nil, packet{Name: "k", Incarnation: 1, Seq: seq, Sent: time.Duration(time.Now().UnixNano())})
					_, _ = conn.Write(b)
					select {
					case <-stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
				}
			})
			defer func() { close(stop); wg.Wait() }()

			row := regexp.MustCompile(`sender=k detector=timeout\S* status=\S+ level=\S+ heartbeats=(\d+)`)
			var recorded int
			deadline := time.Now().Add(30 * time.Second)
			for recorded < 200 {
				require.True(t, time.Now().Before(deadline), "recv recorded %d heartbeats in 30 s: %s", recorded, log.String())
				time.Sleep(20 * time.Millisecond)
				if m := row.FindAllStringSubmatch(log.String(), -1); len(m) > 0 {
					recorded, _ = strconv.Atoi(m[len(m)-1][1])
				}
			}
			// The periodic flush (every flushPeriod) puts them in the file
			// within a second; a receiver starved of CPU (load 12 under
			// -race) has taken longer, so the file is polled, and a wait
			// past a second is logged. Past three seconds (six flush
			// periods) the flush is broken, not late.
			t0 := time.Now()
			time.Sleep(time.Second)
			inFile := func() int {
				r, err := trace.Open(out, trace.ReaderConfig{Lenient: true})
				if err != nil {
					return 0
				}
				defer r.Close()
				recs, _ := r.ReadAll()
				return len(recs)
			}
			for inFile() < recorded {
				require.Less(t, time.Since(t0), 3*time.Second, "the %d heartbeats recorded were not all in the file 3 s later", recorded)
				time.Sleep(50 * time.Millisecond)
			}
			if waited := time.Since(t0); waited > 1100*time.Millisecond {
				t.Logf("%s: the recorded heartbeats reached the file after %v (machine loaded)", name, waited.Round(time.Millisecond))
			}
			require.NoError(t, recv.Process.Signal(syscall.SIGKILL))
			_ = waitExit(t, recv, 10*time.Second)

			r, err := trace.Open(out, trace.ReaderConfig{Lenient: true})
			require.NoError(t, err)
			defer r.Close()
			recs, err := r.ReadAll()
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(recs), recorded, "heartbeats recorded a second before the kill")
			lost := uint64(0)
			for i, rec := range recs {
				// The file is the stream in the order received, each
				// record intact. Loopback can still drop datagrams when
				// the receiver is starved of CPU (its socket buffer
				// overflows: seen at load 12 under -race), so sequence
				// numbers must increase, not follow one another.
				require.Equal(t, "k", rec.Sender)
				if i > 0 {
					require.Greater(t, rec.Seq, recs[i-1].Seq, "record %d", i)
					lost += rec.Seq - recs[i-1].Seq - 1
				}
				require.True(t, rec.HasSent && rec.HasArrival)
				require.Less(t, rec.Sent, rec.Arrival+time.Second)
			}
			assert.Zero(t, r.Skipped())
			t.Logf("%s: %d heartbeats recorded a second before SIGKILL, %d in the file (%d lost on loopback); cut: %v", name, recorded, len(recs), lost, r.Truncated())
		})
	}
}
