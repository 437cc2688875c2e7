package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// sendConfig configures "fdbeat send".
type sendConfig struct {
	Targets     []string      // UDP addresses host:port
	Interval    time.Duration // Δ, default 100 ms
	Name        string        // sender name in the packets ("" = source address)
	Incarnation uint64        // 0 = start time in Unix nanoseconds
	Key         []byte        // HMAC-SHA256 key: send authenticated (version-2) packets; nil = plain
	Duration    time.Duration // stop ("crash") after this long; 0 = until cancelled
	Count       uint64        // stop after this many heartbeats; 0 = no limit
	DelayDist   string
	Delay       time.Duration
	Jitter      time.Duration
	Loss        float64
	LossBurst   float64
	Pauses      []pause
	Seed        uint64 // 0 = random

	stall func(seq uint64) // test hook: called before sending heartbeat seq
}

// sendStats counts what the sender did.
type sendStats struct {
	Sent    uint64 // heartbeats numbered and handed to the (impaired) path, per target
	Dropped uint64 // dropped by the loss model, summed over targets
	Errors  uint64 // UDP write errors
	Pauses  int
	// Stalls counts the times the sender itself ran a whole interval late
	// (host scheduling, SIGSTOP): the ticks it missed are skipped, not sent
	// in a burst.
	Stalls int
	// LastSent is the send instant of the last heartbeat (Unix ns on the
	// sender's clock): the crash instant when the run ends by Duration.
	LastSent time.Duration
	// Incarnation is the incarnation used (Unix ns of the start by default).
	Incarnation uint64
}

// target is one destination with its own impairment state.
type target struct {
	conn  *net.UDPConn
	delay *delayModel
	loss  *lossModel
}

// runSend sends heartbeats until ctx is done, Duration has passed or Count
// heartbeats were sent, then waits for delayed heartbeats still in flight
// (they are "in the network") and returns.
func runSend(ctx context.Context, cfg sendConfig, log *slog.Logger) (sendStats, error) {
	var st sendStats
	if len(cfg.Targets) == 0 {
		return st, errors.New("send: no target address")
	}
	if cfg.Interval <= 0 {
		return st, fmt.Errorf("send: interval %v must be positive", cfg.Interval)
	}
	if !validName(cfg.Name) {
		return st, errNameInvalid
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	start := time.Now()
	wall := start.UnixNano()
	if cfg.Incarnation == 0 {
		cfg.Incarnation = uint64(wall)
	}
	st.Incarnation = cfg.Incarnation
	var ts []*target
	defer func() {
		for _, t := range ts {
			t.conn.Close()
		}
	}()
	for i, addr := range cfg.Targets {
		ua, err := net.ResolveUDPAddr("udp", addr)
		if err != nil {
			return st, fmt.Errorf("send: target %q: %w", addr, err)
		}
		c, err := net.DialUDP("udp", nil, ua)
		if err != nil {
			return st, fmt.Errorf("send: target %q: %w", addr, err)
		}
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		t := &target{conn: c}
		ts = append(ts, t)
		if t.delay, err = newDelay(cfg.DelayDist, cfg.Delay, cfg.Jitter, rng); err != nil {
			return st, fmt.Errorf("send: %w", err)
		}
		if t.loss, err = newLoss(cfg.Loss, cfg.LossBurst, rng); err != nil {
			return st, fmt.Errorf("send: %w", err)
		}
	}
	log.Info("sending heartbeats", "targets", cfg.Targets, "interval", cfg.Interval, "name", cfg.Name,
		"incarnation", cfg.Incarnation, "delay", cfg.DelayDist, "mean", cfg.Delay, "jitter", cfg.Jitter,
		"loss", cfg.Loss, "loss_burst", cfg.LossBurst, "pauses", len(cfg.Pauses), "seed", seed)
	if ahead := cfg.Incarnation - uint64(wall); cfg.Incarnation > uint64(wall) && ahead > uint64(defaultMaxIncarnationAhead) {
		log.Warn("--incarnation is ahead of this host's clock by more than a receiver's default --max-incarnation-ahead: receivers refuse every heartbeat (fdbeat send's default incarnation is its start time in Unix ns)",
			"incarnation", cfg.Incarnation, "ahead_ns", ahead, "max_incarnation_ahead", defaultMaxIncarnationAhead)
	}

	var inflight sync.WaitGroup
	var pending atomic.Int64 // heartbeats in inflight, for the log
	var mu sync.Mutex        // guards st.Errors from delayed sends
	sched := schedule{interval: cfg.Interval, pauses: cfg.Pauses}
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	buf := make([]byte, 0, maxPacketSize)
	for seq := uint64(0); cfg.Count == 0 || seq < cfg.Count; seq++ {
		at, resumed := sched.next()
		if cfg.Duration > 0 && at >= cfg.Duration {
			break
		}
		timer.Reset(time.Until(start.Add(at)))
		select {
		case <-ctx.Done():
			if n := pending.Load(); n > 0 {
				log.Info("waiting for delayed heartbeats still in flight; interrupt again to abort", "in_flight", n)
			}
			inflight.Wait()
			return st, nil
		case <-timer.C:
		}
		if cfg.stall != nil {
			cfg.stall(seq)
		}
		if resumed {
			st.Pauses++
			log.Info("sender resumes after a pause", "at", at, "seq", seq)
		}
		// A sender that ran a whole interval late (a stall of this
		// process) sends one heartbeat now and skips the ticks it missed,
		// like a stopped process and like --pause, instead of sending them
		// all at once: a burst of near-zero inter-arrival times would
		// enter the recorded trace and the receivers' windows.
		if late := time.Since(start) - at; late >= cfg.Interval {
			st.Stalls++
			sched.skipTo(at + late)
			log.Debug("sender stalled; missed ticks skipped", "late", late, "seq", seq)
		}
		sent := time.Duration(wall) + time.Since(start)
		pkt, err := appendPacket(buf[:0], packet{Name: cfg.Name, Incarnation: cfg.Incarnation, Seq: seq, Sent: sent, Signed: cfg.Key != nil})
		if err != nil {
			return st, err
		}
		if cfg.Key != nil {
			pkt = signPacket(pkt, cfg.Key)
		}
		st.Sent++
		st.LastSent = sent
		for _, t := range ts {
			if t.loss.lost() {
				st.Dropped++
				continue
			}
			d := t.delay.next()
			if d == 0 {
				if _, err := t.conn.Write(pkt); err != nil {
					mu.Lock()
					st.Errors++
					mu.Unlock()
				}
				continue
			}
			cp := append([]byte(nil), pkt...)
			inflight.Add(1)
			pending.Add(1)
			time.AfterFunc(d, func() {
				defer inflight.Done()
				defer pending.Add(-1)
				if _, err := t.conn.Write(cp); err != nil {
					mu.Lock()
					st.Errors++
					mu.Unlock()
				}
			})
		}
	}
	inflight.Wait()
	mu.Lock()
	defer mu.Unlock()
	return st, nil
}
