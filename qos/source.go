package qos

import (
	"iter"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Source is a stream of heartbeats, in arrival order, that can be read
// any number of times, by several goroutines at once. Sweeps read it
// sequentially, once per pass, so a Source backed by a file (trace.Spool)
// replays a stream of any length without holding it in memory.
type Source interface {
	// Len returns the number of heartbeats.
	Len() int
	// Bounds returns the first and the last arrival (zero when empty).
	Bounds() (first, last time.Duration)
	// Pass returns one read of the heartbeats in order and a function,
	// to call after the read, reporting what ended it early (nil after a
	// complete read).
	Pass() (iter.Seq[detector.Heartbeat], func() error)
}

// SliceSource returns the Source reading hbs, which must be in arrival
// order.
func SliceSource(hbs []detector.Heartbeat) Source { return sliceSource(hbs) }

type sliceSource []detector.Heartbeat

func (s sliceSource) Len() int { return len(s) }

func (s sliceSource) Bounds() (first, last time.Duration) {
	if len(s) == 0 {
		return 0, 0
	}
	return s[0].Arrival, s[len(s)-1].Arrival
}

func (s sliceSource) Pass() (iter.Seq[detector.Heartbeat], func() error) {
	return func(yield func(detector.Heartbeat) bool) {
		for _, hb := range s {
			if !yield(hb) {
				return
			}
		}
	}, func() error { return nil }
}

// source returns the stream's heartbeats: Source when set, else
// Heartbeats.
func (s *Stream) source() Source {
	if s.Source != nil {
		return s.Source
	}
	return sliceSource(s.Heartbeats)
}

// heartbeatsOf returns src's heartbeats as a slice: src's own slice, or
// a copy when src is not a slice and has at most limit heartbeats. ok is
// false when src is longer than that.
func heartbeatsOf(src Source, limit int) (hbs []detector.Heartbeat, ok bool, err error) {
	if s, isSlice := src.(sliceSource); isSlice {
		return s, true, nil
	}
	if src.Len() > limit {
		return nil, false, nil
	}
	hbs = make([]detector.Heartbeat, 0, src.Len())
	seq, done := src.Pass()
	for hb := range seq {
		hbs = append(hbs, hb)
	}
	if err := done(); err != nil {
		return nil, false, err
	}
	return hbs, true, nil
}
