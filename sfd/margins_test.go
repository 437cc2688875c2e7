package sfd_test

import (
	"math/rand/v2"
	"testing"
	"time"

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
	got, err := sfd.Margins(cfg, initial, hbs)
	require.NoError(t, err)
	require.Len(t, got, len(initial))
	moved, gaveUp := false, 0
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
	assert.True(t, moved, "SM never adapted: the test does not test the control")
	assert.Positive(t, gaveUp, "no margin gave up: the test does not test dropping them")

	_, err = sfd.Margins(cfg, []time.Duration{-1}, hbs)
	assert.Error(t, err)
}
