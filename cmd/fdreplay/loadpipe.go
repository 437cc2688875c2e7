// Reading a trace on three goroutines: decoding, the input check, and
// the streams.

package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/fdkit/fdkit/trace"
)

// loadBatch is how many records go from one stage of the load to the next
// at a time, and loadDepth how many batches a stage may run ahead of the
// next: the pipeline holds about 2·(loadDepth+2) batches of about 100
// bytes a record (about 1.3 MB).
const (
	loadBatch = 1024
	loadDepth = 4
)

// readRecord is a record as the Reader returned it, with where it was.
type readRecord struct {
	rec          trace.Record
	line         int
	unterminated bool
}

// stageBatch is what one stage of the load hands the next: records, then,
// when the stage stopped, its error (sent last, so that an earlier stage's
// error reaches the last stage after everything read before it: the run
// fails with the error of the first record, in file order, that has one,
// as a load on one goroutine would).
type stageBatch[T any] struct {
	items []T
	err   error
}

// stage is the channel between two stages of the load with its spare
// batches (so that batches are reused rather than collected) and the
// channel closed when the last stage stops early.
type stage[T any] struct {
	ch    chan stageBatch[T]
	spare chan []T
	quit  <-chan struct{}
}

func newStage[T any](quit <-chan struct{}) stage[T] {
	s := stage[T]{ch: make(chan stageBatch[T], loadDepth), spare: make(chan []T, loadDepth+2), quit: quit}
	for range loadDepth + 2 {
		s.spare <- make([]T, 0, loadBatch)
	}
	return s
}

// send hands items (and err) to the next stage; false when the load
// stopped.
func (s stage[T]) send(items []T, err error) bool {
	select {
	case s.ch <- stageBatch[T]{items, err}:
		return true
	case <-s.quit:
		return false
	}
}

// batch returns an empty batch to fill; false when the load stopped.
func (s stage[T]) batch() ([]T, bool) {
	select {
	case b := <-s.spare:
		return b[:0], true
	case <-s.quit:
		return nil, false
	}
}

// read passes r's records of the wanted senders through the sanity check
// into the streams, then finishes their spools. Decoding (r.Next), the
// check (trace.Checker) and the streams (l.checked) each run on their own
// goroutine, records flowing in file order from one to the next; the
// streams, the findings and the error are those of doing it all on one.
func (l *traceLoad) read(r *trace.Reader) error {
	quit := make(chan struct{})
	decoded, checked := newStage[readRecord](quit), newStage[trace.Checked](quit)
	var wg sync.WaitGroup
	defer wg.Wait() // r is the caller's again once the stages stopped
	defer close(quit)
	wg.Go(func() { l.decode(r, decoded) })
	wg.Go(func() { l.check(decoded, checked) })
	for b := range checked.ch {
		for _, c := range b.items {
			if l.checked(c); l.err != nil {
				return l.err
			}
		}
		checked.spare <- b.items
		if b.err != nil {
			return b.err
		}
	}
	for _, e := range l.all {
		if e.spool != nil {
			if err := e.spool.Finish(); err != nil {
				return fmt.Errorf("%s: sender %q: %w", l.name, e.sender, spoolErr(err, l.o.memHeartbeats))
			}
		}
	}
	return nil
}

// decode is the first stage: it reads r's records of the wanted senders.
func (l *traceLoad) decode(r *trace.Reader, out stage[readRecord]) {
	defer close(out.ch)
	want := map[string]bool{}
	for _, s := range l.o.senders {
		want[s] = true
	}
	for {
		b, ok := out.batch()
		if !ok {
			return
		}
		var err error
		for len(b) < loadBatch {
			select {
			case <-out.quit: // a later stage failed: read no further
				return
			default:
			}
			var rec trace.Record
			if rec, err = r.Next(); err != nil {
				break
			}
			if len(want) > 0 && !want[rec.Sender] {
				continue
			}
			b = append(b, readRecord{rec, r.Line(), r.Unterminated()})
		}
		if err == io.EOF {
			out.send(b, nil)
			return
		}
		if err != nil {
			err = readErr(err, l.o.lenient)
		}
		if !out.send(b, err) || err != nil {
			return
		}
	}
}

// check is the second stage: the sanity check of the records decoded, in
// file order.
func (l *traceLoad) check(in stage[readRecord], out stage[trace.Checked]) {
	defer close(out.ch)
	var b []trace.Checked
	ch := trace.NewChecker(trace.CheckerConfig{File: l.name}, func(c trace.Checked) { b = append(b, c) })
	var ok bool
	if b, ok = out.batch(); !ok {
		return
	}
	for rb := range in.ch {
		err := rb.err
		for _, x := range rb.items {
			// The checker holds a sender's records until it has seen
			// their neighbours: count the senders here, so that a trace
			// of too many is refused before they are all held. (The first
			// record of a sender emits nothing: Neighbours is at least 1.)
			ch.Add(x.rec, x.line, x.unterminated)
			if ch.Senders() > l.streamsLeft {
				err = tooManyStreams(l.o, fmt.Sprintf("%s:%d: sender %q", l.name, x.line, x.rec.Sender))
				break
			}
		}
		in.spare <- rb.items
		if err != nil {
			out.send(b, err)
			return
		}
		if len(b) >= loadBatch {
			if !out.send(b, nil) {
				return
			}
			if b, ok = out.batch(); !ok {
				return
			}
		}
	}
	ch.Flush()
	out.send(b, nil)
}
