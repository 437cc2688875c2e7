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
// (they are "in the network") and returns. It checks cfg and builds the
// impairment models before it opens a socket.
func runSend(ctx context.Context, cfg sendConfig, log *slog.Logger) (sendStats, error) {
	switch {
	case len(cfg.Targets) == 0:
		return sendStats{}, errors.New("send: no target address")
	case cfg.Interval <= 0:
		return sendStats{}, fmt.Errorf("send: interval %v must be positive", cfg.Interval)
	case !validName(cfg.Name):
		return sendStats{}, fmt.Errorf("--name %.64q: %w", cfg.Name, errNameInvalid)
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	ts, err := newTargets(cfg, seed)
	if err != nil {
		return sendStats{}, err
	}
	defer func() {
		for _, t := range ts {
			if t.conn != nil {
				t.conn.Close()
			}
		}
	}()
	for i, addr := range cfg.Targets {
		if ts[i].conn, err = dialTarget(addr); err != nil {
			return sendStats{}, err
		}
	}
	s := &sender{cfg: cfg, log: log, ts: ts, start: time.Now()}
	s.wall = s.start.UnixNano()
	if s.cfg.Incarnation == 0 {
		s.cfg.Incarnation = uint64(s.wall)
	}
	s.st.Incarnation = s.cfg.Incarnation
	log.Info("sending heartbeats", "targets", cfg.Targets, "interval", cfg.Interval, "name", cfg.Name,
		"incarnation", s.cfg.Incarnation, "delay", cfg.DelayDist, "mean", cfg.Delay, "jitter", cfg.Jitter,
		"loss", cfg.Loss, "loss_burst", cfg.LossBurst, "pauses", len(cfg.Pauses), "seed", seed)
	if inc := s.cfg.Incarnation; inc > uint64(s.wall) && inc-uint64(s.wall) > uint64(defaultMaxIncarnationAhead) {
		log.Warn("--incarnation is ahead of this host's clock by more than a receiver's default --max-incarnation-ahead: receivers refuse every heartbeat (fdbeat send's default incarnation is its start time in Unix ns)",
			"incarnation", inc, "ahead_ns", inc-uint64(s.wall), "max_incarnation_ahead", defaultMaxIncarnationAhead)
	}
	return s.run(ctx)
}

// newTargets builds each target's delay and loss models, each target
// drawing from its own stream of seed; no socket is opened yet.
func newTargets(cfg sendConfig, seed uint64) ([]*target, error) {
	ts := make([]*target, len(cfg.Targets))
	for i := range cfg.Targets {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		t := &target{}
		var err error
		if t.delay, err = newDelay(cfg.DelayDist, cfg.Delay, cfg.Jitter, rng); err != nil {
			return nil, fmt.Errorf("send: %w", err)
		}
		if t.loss, err = newLoss(cfg.Loss, cfg.LossBurst, rng); err != nil {
			return nil, fmt.Errorf("send: %w", err)
		}
		ts[i] = t
	}
	return ts, nil
}

// dialTarget resolves a target address and opens a UDP socket to it.
func dialTarget(addr string) (*net.UDPConn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("send: target %q: %w", addr, err)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		return nil, fmt.Errorf("send: target %q: %w", addr, err)
	}
	return c, nil
}

// sender is one run of the send loop: its targets, the instant it
// started (wall: the same in Unix ns), the heartbeats still in flight and
// the counts.
type sender struct {
	cfg      sendConfig
	log      *slog.Logger
	ts       []*target
	start    time.Time
	wall     int64
	inflight sync.WaitGroup
	pending  atomic.Int64 // heartbeats in inflight, for the log
	mu       sync.Mutex   // guards st.Errors from delayed sends
	st       sendStats
}

// run sends one heartbeat at each instant of the schedule.
func (s *sender) run(ctx context.Context) (sendStats, error) {
	sched := schedule{interval: s.cfg.Interval, pauses: s.cfg.Pauses}
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	buf := make([]byte, 0, maxPacketSize)
	for seq := uint64(0); s.cfg.Count == 0 || seq < s.cfg.Count; seq++ {
		at, resumed := sched.next()
		if s.cfg.Duration > 0 && at >= s.cfg.Duration {
			break
		}
		timer.Reset(time.Until(s.start.Add(at)))
		select {
		case <-ctx.Done():
			if n := s.pending.Load(); n > 0 {
				s.log.Info("waiting for delayed heartbeats still in flight; interrupt again to abort", "in_flight", n)
			}
			s.inflight.Wait()
			return s.st, nil
		case <-timer.C:
		}
		if s.cfg.stall != nil {
			s.cfg.stall(seq)
		}
		if resumed {
			s.st.Pauses++
			s.log.Info("sender resumes after a pause", "at", at, "seq", seq)
		}
		// A sender that ran a whole interval late (a stall of this
		// process) sends one heartbeat now and skips the ticks it missed,
		// like a stopped process and like --pause, instead of sending them
		// all at once: a burst of near-zero inter-arrival times would
		// enter the recorded trace and the receivers' windows.
		if late := time.Since(s.start) - at; late >= s.cfg.Interval {
			s.st.Stalls++
			sched.skipTo(at + late)
			s.log.Debug("sender stalled; missed ticks skipped", "late", late, "seq", seq)
		}
		if err := s.beat(buf, seq); err != nil {
			return s.st, err
		}
	}
	s.inflight.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st, nil
}

// beat builds heartbeat seq, stamped now, and hands it to each target's
// impaired path: dropped by the loss model, written at once, or written
// after the delay model's delay.
func (s *sender) beat(buf []byte, seq uint64) error {
	sent := time.Duration(s.wall) + time.Since(s.start)
	pkt, err := appendPacket(buf[:0], packet{Name: s.cfg.Name, Incarnation: s.cfg.Incarnation, Seq: seq, Sent: sent, Signed: s.cfg.Key != nil})
	if err != nil {
		return err
	}
	if s.cfg.Key != nil {
		pkt = signPacket(pkt, s.cfg.Key)
	}
	s.st.Sent++
	s.st.LastSent = sent
	for _, t := range s.ts {
		if t.loss.lost() {
			s.st.Dropped++
			continue
		}
		d := t.delay.next()
		if d == 0 {
			s.write(t, pkt)
			continue
		}
		cp := append([]byte(nil), pkt...)
		s.inflight.Add(1)
		s.pending.Add(1)
		time.AfterFunc(d, func() {
			defer s.inflight.Done()
			defer s.pending.Add(-1)
			s.write(t, cp)
		})
	}
	return nil
}

// write sends pkt to t, counting a failure.
func (s *sender) write(t *target, pkt []byte) {
	if _, err := t.conn.Write(pkt); err != nil {
		s.mu.Lock()
		s.st.Errors++
		s.mu.Unlock()
	}
}
