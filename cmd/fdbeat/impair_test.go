package main

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDelayModels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200_000
	stats := func(d *delayModel) (mean, sd float64, min time.Duration) {
		var s, ss float64
		min = time.Hour
		for range n {
			x := d.next()
			s += float64(x)
			ss += float64(x) * float64(x)
			min = minDur(min, x)
		}
		mean = s / n
		return mean, math.Sqrt(ss/n - mean*mean), min
	}
	c, err := newDelay("constant", 5*time.Millisecond, 0, rng)
	require.NoError(t, err)
	assert.Equal(t, 5*time.Millisecond, c.next())
	// Normal 80 ms ± 60 ms, clamped at 0: P(x<0) = Φ(-4/3) ≈ 9.1 %; the
	// clamped variable has mean μΦ(a)+σφ(a) = 82.54 ms (a = μ/σ) and s.d.
	// 55.30 ms.
	nm, err := newDelay("normal", 80*time.Millisecond, 60*time.Millisecond, rng)
	require.NoError(t, err)
	mean, sd, mn := stats(nm)
	assert.InDelta(t, 82.54e6, mean, 0.5e6)
	assert.InDelta(t, 55.30e6, sd, 0.5e6)
	assert.Equal(t, time.Duration(0), mn)
	u, _ := newDelay("uniform", 10*time.Millisecond, 5*time.Millisecond, rng)
	mean, sd, mn = stats(u)
	assert.InDelta(t, 10e6, mean, 0.05e6)
	assert.InDelta(t, 5e6/math.Sqrt(3), sd, 0.05e6)
	assert.GreaterOrEqual(t, mn, 5*time.Millisecond)
	e, _ := newDelay("exponential", 10*time.Millisecond, 0, rng)
	mean, sd, _ = stats(e)
	assert.InDelta(t, 10e6, mean, 0.1e6)
	assert.InDelta(t, 10e6, sd, 0.2e6)

	_, err = newDelay("pareto", 0, 0, rng)
	assert.ErrorContains(t, err, "unknown delay distribution")
	_, err = newDelay("normal", -1, 0, rng)
	assert.Error(t, err)
	_, err = newDelay("exponential", 0, 0, rng)
	assert.Error(t, err)
}

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

func TestLossModels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 400_000
	run := func(l *lossModel) (rate, meanBurst float64) {
		lost, bursts, prev := 0, 0, false
		for range n {
			x := l.lost()
			if x {
				lost++
				if !prev {
					bursts++
				}
			}
			prev = x
		}
		return float64(lost) / n, float64(lost) / float64(bursts)
	}
	b, err := newLoss(0.15, 0, rng)
	require.NoError(t, err)
	rate, burst := run(b)
	assert.InDelta(t, 0.15, rate, 0.003)
	assert.InDelta(t, 1/(1-0.15), burst, 0.02, "Bernoulli bursts are geometric with mean 1/(1-p)")
	g, err := newLoss(0.15, 4, rng)
	require.NoError(t, err)
	rate, burst = run(g)
	assert.InDelta(t, 0.15, rate, 0.01)
	assert.InDelta(t, 4, burst, 0.15)
	z, _ := newLoss(0, 0, rng)
	rate, _ = run(z)
	assert.Equal(t, 0.0, rate)

	for _, c := range [][2]float64{{1, 0}, {-0.1, 0}, {math.NaN(), 0}, {0.1, 0.5}, {0.9, 1}} {
		_, err := newLoss(c[0], c[1], rng)
		assert.Error(t, err, "%v", c)
	}
}

func TestPausesAndSchedule(t *testing.T) {
	ps, err := parsePauses("2s:600ms, 1s:250ms")
	require.NoError(t, err)
	assert.Equal(t, []pause{{time.Second, 250 * time.Millisecond}, {2 * time.Second, 600 * time.Millisecond}}, ps)
	s := schedule{interval: 100 * time.Millisecond, pauses: ps}
	var got []time.Duration
	var resumed []time.Duration
	for {
		at, r := s.next()
		if at > 3*time.Second {
			break
		}
		got = append(got, at)
		if r {
			resumed = append(resumed, at)
		}
	}
	assert.Equal(t, []time.Duration{1250 * time.Millisecond, 2600 * time.Millisecond}, resumed)
	assert.Contains(t, got, 900*time.Millisecond)
	assert.NotContains(t, got, time.Second, "the tick at the pause start is not sent")
	assert.NotContains(t, got, 1200*time.Millisecond)
	assert.Contains(t, got, 1300*time.Millisecond)
	assert.Contains(t, got, 2700*time.Millisecond)
	// 31 ticks in [0, 3 s], minus 3 and 6 in the pauses, plus the resume at
	// 1.25 s (the one at 2.6 s falls on a tick).
	assert.Len(t, got, 31-3-6+1)

	for _, bad := range []string{"1s", "x:1s", "1s:0s", "1s:-1s", "1s:1s,1500ms:1s"} {
		_, err := parsePauses(bad)
		assert.Error(t, err, bad)
	}
	ps, err = parsePauses("")
	assert.NoError(t, err)
	assert.Nil(t, ps)

	// Back-to-back pauses: nothing is sent at 1.5 s, where the second starts
	// (the first's resume instant was sent inside the second pause).
	ps, err = parsePauses("1s:500ms,1500ms:500ms")
	require.NoError(t, err)
	s = schedule{interval: 100 * time.Millisecond, pauses: ps}
	got = got[:0]
	for at, _ := s.next(); at <= 2500*time.Millisecond; at, _ = s.next() {
		got = append(got, at)
	}
	assert.NotContains(t, got, 1500*time.Millisecond)
	assert.Contains(t, got, 900*time.Millisecond)
	assert.Contains(t, got, 2000*time.Millisecond)
	assert.Len(t, got, 10+1+5, "0–0.9 s, the resume at 2 s, 2.1–2.5 s")
}

// A sender that stalls (here for 10 intervals before heartbeat 3) sends one
// heartbeat when it resumes and skips the missed ticks rather than send
// them all at once, a burst of near-zero inter-arrival times in the trace.
func TestSendStallSkipsMissedTicks(t *testing.T) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer conn.Close()
	const interval = 20 * time.Millisecond
	cfg := sendConfig{Targets: []string{conn.LocalAddr().String()}, Name: "st", Interval: interval, Count: 12,
		DelayDist: "constant", Seed: 1, stall: func(seq uint64) {
			if seq == 3 {
				time.Sleep(10 * interval)
			}
		}}
	st, err := runSend(context.Background(), cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, st.Stalls, 1)
	var sent []time.Duration
	buf := make([]byte, 2048)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(2*time.Second)))
	for range 12 {
		n, _, err := conn.ReadFrom(buf)
		require.NoError(t, err)
		p, err := decodePacket(buf[:n])
		require.NoError(t, err)
		sent = append(sent, p.Sent)
	}
	bursts := 0
	for i := 1; i < len(sent); i++ {
		if sent[i]-sent[i-1] < interval/4 {
			bursts++
		}
	}
	assert.LessOrEqual(t, bursts, 2, "send gaps %v", sent)
}

// TestSendChecksBeforeDialling: an impairment runSend refuses is reported
// as such before any target is resolved or dialled, so a bad --delay is
// not hidden behind a target's name-resolution error.
func TestSendChecksBeforeDialling(t *testing.T) {
	_, err := runSend(context.Background(), sendConfig{Targets: []string{"no-such-host.invalid:1"}, Interval: time.Millisecond,
		DelayDist: "normal", Delay: -time.Millisecond}, slog.New(slog.DiscardHandler))
	require.Error(t, err)
	assert.ErrorContains(t, err, "must not be negative")
	assert.NotContains(t, err.Error(), "no-such-host")
}
