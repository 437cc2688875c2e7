package sfd

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
)

// MarginChange says that from heartbeat From (an index in the stream) on,
// the freshness point is computed with safety margin SM.
type MarginChange struct {
	From int
	SM   time.Duration
}

// Margins runs SFD with the settings of cfg and each initial margin SM_1 of
// initial over hbs (in arrival order), and returns, per initial margin, the
// safety margins its detector used: SM_1 from heartbeat 0, then one change
// per slot that moved SM. The expected arrivals do not depend on SM, so one
// NFD-E estimator serves every margin: this costs one estimator pass plus
// the control of each margin, where replaying each margin costs an
// estimator pass per margin. A detector with initial margin initial[i] fed
// hbs has, after heartbeat k, τ = EA_{ℓ+1} + SM with SM that of the last
// change whose From ≤ k (τ moves only at Fresh and Restart heartbeats). A
// zero initial margin means the default, as in Config.
//
// Errors: those of New for cfg with each initial margin.
func Margins(cfg Config, initial []time.Duration, hbs []detector.Heartbeat) ([][]MarginChange, error) {
	est, err := chen.NewEstimator(cfg.Estimator)
	if err != nil {
		return nil, err
	}
	dets := make([]*Detector, len(initial))
	out := make([][]MarginChange, len(initial))
	for i, m := range initial {
		c := cfg
		c.InitialMargin = &m
		d, err := New(c)
		if err != nil {
			return nil, fmt.Errorf("sfd: initial margin %v: %w", m, err)
		}
		d.est = est // shared: only the estimator's own update below writes it
		dets[i] = d
		out[i] = []MarginChange{{From: 0, SM: d.sm}}
	}
	// The detectors still adapting, with their index: one that cannot
	// meet the targets keeps its margin for good (endSlot), so its
	// changes are complete and it leaves the loop.
	live := make([]int, len(dets))
	for i := range live {
		live[i] = i
	}
	for k, hb := range hbs {
		if len(live) == 0 {
			break
		}
		kind := est.Classify(hb)
		moves := kind == chen.Fresh || kind == chen.Restart // as before reports
		for _, i := range live {
			dets[i].before(hb, kind)
		}
		if kind == chen.Late || moves {
			est.Observe(hb)
		}
		if !moves {
			continue
		}
		next := est.Next()
		j := 0
		for _, i := range live {
			d := dets[i]
			d.after(hb, next)
			if last := out[i][len(out[i])-1]; d.sm != last.SM {
				out[i] = append(out[i], MarginChange{From: k, SM: d.sm})
			}
			if d.state != CannotMeet {
				live[j] = i
				j++
			}
		}
		live = live[:j]
	}
	return out, nil
}
