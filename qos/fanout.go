package qos

import (
	"iter"
	"sync"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// fanBlock is how many heartbeats a shared read hands to its readers at a
// time, and fanDepth how many blocks a reader may lag behind the read:
// the read's memory is about (fanDepth + 2) blocks of 32-byte heartbeats
// (about 0.8 MB), whatever the number of readers.
const (
	fanBlock = 4096
	fanDepth = 4
)

// fanSource is a Source whose passes, made by a known set of members
// (the sweeps of one stream, each on its own goroutine), share reads of
// the underlying Source: a read starts when every member still running
// has asked for a pass, and each decoded block goes to all of them. A
// stream read by F families at P points is thus read as many times as
// the member making the most passes reads it (one to three), not F × P
// times.
//
// A member must not start a pass inside another pass of the same source,
// nor wait for another member while it holds a pass open: the read waits
// for every member.
type fanSource struct {
	src Source

	mu      sync.Mutex
	members int          // members that may still ask for a pass
	waiting []*fanReader // members that asked for the next read
	reads   int          // reads of src started (for tests)
	widest  int          // most readers of one read (for tests)
}

// fanReader is one member's end of a shared read.
type fanReader struct {
	ch   chan []detector.Heartbeat
	quit chan struct{} // closed when the member stops reading
	err  error         // the read's error, set before ch is closed
}

func newFanSource(src Source, members int) *fanSource {
	return &fanSource{src: src, members: members}
}

func (f *fanSource) Len() int                            { return f.src.Len() }
func (f *fanSource) Bounds() (first, last time.Duration) { return f.src.Bounds() }

// Pass joins the next shared read; see fanSource.
func (f *fanSource) Pass() (iter.Seq[detector.Heartbeat], func() error) {
	var err error
	seq := func(yield func(detector.Heartbeat) bool) {
		rd := &fanReader{ch: make(chan []detector.Heartbeat, fanDepth), quit: make(chan struct{})}
		defer close(rd.quit)
		f.mu.Lock()
		f.waiting = append(f.waiting, rd)
		f.startIfAll()
		f.mu.Unlock()
		for blk := range rd.ch {
			for _, hb := range blk {
				if !yield(hb) {
					return
				}
			}
		}
		err = rd.err
	}
	return seq, func() error { return err }
}

// join adds n members. Called by a member that is not waiting for a read,
// the new members take part in every read from the next on (none starts
// without them); called by a goroutine that is not a member, in every read
// that starts after it (one in progress goes on without them).
func (f *fanSource) join(n int) {
	f.mu.Lock()
	f.members += n
	f.mu.Unlock()
}

// leave tells f that a member makes no more passes.
func (f *fanSource) leave() {
	f.mu.Lock()
	f.members--
	f.startIfAll()
	f.mu.Unlock()
}

// startIfAll starts a read when every remaining member waits for one.
// f.mu is held.
func (f *fanSource) startIfAll() {
	if len(f.waiting) == 0 || len(f.waiting) < f.members {
		return
	}
	rs := f.waiting
	f.waiting = nil
	f.reads++
	f.widest = max(f.widest, len(rs))
	go f.read(rs)
}

// read makes one pass over f.src, handing each block to the readers rs
// that are still reading.
func (f *fanSource) read(rs []*fanReader) {
	live := len(rs)
	gone := make([]bool, len(rs))
	send := func(blk []detector.Heartbeat) {
		for i, r := range rs {
			if gone[i] {
				continue
			}
			select {
			case r.ch <- blk:
			case <-r.quit:
				gone[i] = true
				live--
			}
		}
	}
	seq, done := f.src.Pass()
	blk := make([]detector.Heartbeat, 0, fanBlock)
	for hb := range seq {
		blk = append(blk, hb)
		if len(blk) == fanBlock {
			send(blk)
			if live == 0 {
				break
			}
			blk = make([]detector.Heartbeat, 0, fanBlock)
		}
	}
	if len(blk) > 0 && live > 0 {
		send(blk)
	}
	err := done()
	for i, r := range rs {
		if !gone[i] {
			r.err = err
		}
		close(r.ch)
	}
}
