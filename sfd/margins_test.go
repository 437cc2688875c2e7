package sfd_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/sfd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Margins gives, for every initial margin, the safety margins a detector of
// its own uses after every heartbeat, and at each change τ is that
// detector's EA_{ℓ+1} plus the change's SM (Margins returns no EA: that
// the shared estimator's EA is the same is tested in qos, whose SFD sweep
// replays from it): on a stream with jitter, losses, late and duplicate
// heartbeats, a pause and a sender restart, with margins that adapt and
// margins that give up (CannotMeet, after which Margins stops running them).
func TestMarginsEqualsOneDetectorPerMargin(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var hbs []detector.Heartbeat
	at, seq := 0.0, uint64(100)
	for i := range 6000 {
		at += 100 + 15*rng.NormFloat64()
		if i == 3000 {
			at += 900 // a pause
		}
		if i == 4500 {
			seq = 3 // the sender restarts
		}
		seq++
		if rng.Float64() < 0.03 {
			continue // lost
		}
		h := hb(seq, max(at, 0))
		if len(hbs) > 0 && h.Arrival < hbs[len(hbs)-1].Arrival {
			h.Arrival = hbs[len(hbs)-1].Arrival
		}
		hbs = append(hbs, h)
		if rng.Float64() < 0.02 {
			hbs = append(hbs, h) // duplicate
		}
		if rng.Float64() < 0.02 && seq > 5 {
			l := hb(seq-3, max(at, 0)) // late
			l.Arrival = h.Arrival
			hbs = append(hbs, l)
		}
	}
	cfg := sfd.Config{Estimator: window(50), Step: ms(5), SlotHeartbeats: 20,
		Targets: sfd.Targets{MaxTD: ms(140), MaxMistakesPerSecond: 0.05, MinQAP: 0.999}}
	initial := []time.Duration{0, 1, ms(5), ms(40), ms(100), ms(300)}
	moved, gaveUp := requireMarginsMatch(t, cfg, initial, hbs)
	assert.True(t, moved, "SM never adapted: the test does not test the control")
	assert.Positive(t, gaveUp, "no margin gave up: the test does not test dropping them")

	_, err := sfd.Margins(cfg, []time.Duration{-1}, hbs)
	assert.Error(t, err)
}

// requireMarginsMatch checks that Margins gives, for every initial margin,
// the safety margin a detector of its own has after every heartbeat, and τ
// at each change; it reports whether some margin moved more than twice and
// how many gave up.
func requireMarginsMatch(t *testing.T, cfg sfd.Config, initial []time.Duration, hbs []detector.Heartbeat) (moved bool, gaveUp int) {
	t.Helper()
	got, err := sfd.Margins(cfg, initial, hbs)
	require.NoError(t, err)
	require.Len(t, got, len(initial))
	requireTraceMatch(t, cfg, initial, hbs, got)
	for i, m := range initial {
		c := cfg
		c.InitialMargin = new(m)
		d := newDet(t, c)
		j := 0
		for k, h := range hbs {
			d.Observe(h)
			for j+1 < len(got[i]) && got[i][j+1].From <= k {
				j++
			}
			require.Equal(t, d.SafetyMargin(), got[i][j].SM, "margin %v, heartbeat %d", m, k)
			if tau, ok := d.FreshnessPoint(); ok && j > 0 && got[i][j].From == k {
				ea := d.Estimator().Next()
				assert.Equal(t, ea+got[i][j].SM, tau, "margin %v, heartbeat %d", m, k)
			}
		}
		if len(got[i]) > 3 {
			moved = true
		}
		if d.State() == sfd.CannotMeet {
			gaveUp++
		}
	}
	return moved, gaveUp
}

// Margins skips the quiet stretches of a slot only where that is exact:
// it must agree with a detector per margin after a sender restart that
// some margin lives to see, on instants near the ends of time.Duration
// (2^61 ns and past, where the quiet test's differences could overflow),
// and where the TD_k are so large (2^50 ns) that their float64 sum stops
// being exact within a few slots.
func TestMarginsExactOffTheQuietPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	var hbs []detector.Heartbeat
	at, seq := 0.0, uint64(1000)
	for i := range 3000 {
		at += 100 + 10*rng.NormFloat64()
		if i == 1500 {
			seq = 1 // the sender restarts
		}
		seq++
		if rng.Float64() < 0.02 {
			continue // lost
		}
		hbs = append(hbs, hb(seq, max(at, hbs2ms(hbs))))
	}
	cfg := sfd.Config{Estimator: window(50), Step: ms(5), SlotHeartbeats: 20,
		Targets: sfd.Targets{MaxTD: ms(180), MinQAP: 0.97}}
	initial := []time.Duration{0, ms(1), ms(20), ms(60), ms(200)}
	moved, gaveUp := requireMarginsMatch(t, cfg, initial, hbs)
	assert.True(t, moved, "SM never adapted")
	assert.Less(t, gaveUp, len(initial), "every margin gave up before the restart")

	far := slices.Clone(hbs)
	for i := range far {
		far[i].Arrival += 1<<61 - ms(150_000)
	}
	requireMarginsMatch(t, cfg, initial, far)

	sent := slices.Clone(hbs)
	for i := range sent {
		sent[i].Sent, sent[i].HasSent = sent[i].Arrival-1<<50, true
	}
	cfg.UseSendTime = true
	cfg.Targets.MaxTD = 1<<50 + ms(160)
	moved, _ = requireMarginsMatch(t, cfg, initial, sent)
	assert.True(t, moved, "SM never adapted with large TD")
}

// hbs2ms is the arrival of the last heartbeat of hbs in ms, 0 if none.
func hbs2ms(hbs []detector.Heartbeat) float64 {
	if len(hbs) == 0 {
		return 0
	}
	return float64(hbs[len(hbs)-1].Arrival) / float64(time.Millisecond)
}

// requireTraceMatch checks that MarginsTrace gives Margins's changes and,
// heartbeat by heartbeat, what an estimator of its own makes of hbs.
func requireTraceMatch(t *testing.T, cfg sfd.Config, initial []time.Duration, hbs []detector.Heartbeat, want [][]sfd.MarginChange) {
	t.Helper()
	got, tr, err := sfd.MarginsTrace(cfg, initial, hbs)
	require.NoError(t, err)
	require.Equal(t, want, got)
	est, err := chen.NewEstimator(cfg.Estimator)
	require.NoError(t, err)
	for k, h := range hbs {
		kind := est.Classify(h)
		moves := kind == chen.Fresh || kind == chen.Restart
		if kind == chen.Late || moves {
			est.Observe(h)
		}
		require.Equal(t, moves, tr.Moves[k], "heartbeat %d", k)
		require.Equal(t, int32(est.Len()), tr.Lens[k], "heartbeat %d", k)
		if moves {
			require.Equal(t, est.Next(), tr.Next[k], "heartbeat %d", k)
		}
	}
}
