package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/internal/tmpfile"
)

// SpoolReorder is how many heartbeats a Spool holds back to put them in
// arrival order: a heartbeat may arrive (in the input) after up to
// SpoolReorder−1 heartbeats with later arrivals; one further behind is an
// error (ErrSpoolOrder). Reception logs are written in arrival order, so
// the window is small: with its 16 KiB write buffer a spool takes about
// 64 KiB of memory, whatever the stream's length.
const SpoolReorder = 1 << 10

// ErrSpoolOrder is returned (wrapped) by Spool.Add for a heartbeat that is
// further out of arrival order than SpoolReorder allows.
var ErrSpoolOrder = errors.New("trace: heartbeat too far out of arrival order to sort in bounded memory")

// Spool holds one stream's heartbeats in a compact temporary file, in
// arrival order (stable: equal arrivals keep their input order), so that
// they can be read again, any number of times and by several readers at
// once, without keeping them in memory. Each heartbeat takes 3 to 30 bytes
// (a flag byte and varint differences: the arrival from the previous
// arrival, the sequence number from the previous one, the send time from
// the arrival), about 6 bytes on a regular stream.
//
// The file has no name in the file system (internal/tmpfile: created with
// O_TMPFILE on Linux, so it disappears when the process ends, however it
// ends; elsewhere unlinked as soon as it is created, where the system
// allows it); Close releases it earlier. A Spool is written by one goroutine (Add, then
// Finish) and then read by any number (Pass).
type Spool struct {
	f    *os.File
	name string // removed by Close when the system kept it linked
	w    *bufio.Writer
	buf  [32]byte
	size int64

	pend  reorderBuf // by (arrival, input position)
	order uint64     // input position, for a stable order
	last  time.Duration
	emit  bool // a heartbeat was written

	n           int
	first, lAst time.Duration
	prevA       time.Duration
	prevSeq     uint64
	done        bool
}

// NewSpool creates an empty spool in dir ("" for the system's temporary
// directory).
func NewSpool(dir string) (*Spool, error) {
	f, name, err := tmpfile.Create(dir, "fdkit-spool-*")
	if err != nil {
		return nil, fmt.Errorf("trace: spool: %w", err)
	}
	return &Spool{f: f, name: name, w: bufio.NewWriterSize(f, 16<<10)}, nil
}

// Add appends hb. Heartbeats may come slightly out of arrival order (see
// SpoolReorder).
func (s *Spool) Add(hb detector.Heartbeat) error {
	if s.done {
		return errors.New("trace: spool: Add after Finish")
	}
	if s.emit && hb.Arrival < s.last {
		return fmt.Errorf("%w: arrival %v after a heartbeat arriving at %v was already placed (more than %d heartbeats in between)",
			ErrSpoolOrder, hb.Arrival, s.last, SpoolReorder-1)
	}
	s.pend.push(pendHB{hb: hb, at: s.order})
	s.order++
	if s.pend.len() < SpoolReorder {
		return nil
	}
	return s.write(s.pend.pop().hb)
}

// Finish writes the held-back heartbeats; the spool can then be read.
func (s *Spool) Finish() error {
	if s.done {
		return nil
	}
	for s.pend.len() > 0 {
		if err := s.write(s.pend.pop().hb); err != nil {
			return err
		}
	}
	s.pend = reorderBuf{}
	s.done = true
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("trace: spool: %w", err)
	}
	s.w = nil // 16 KiB per stream, kept for nothing while the spool is read
	return nil
}

func (s *Spool) write(hb detector.Heartbeat) error {
	b := s.buf[:1]
	b[0] = 0
	if hb.HasSeq {
		b[0] |= 1
	}
	if hb.HasSent {
		b[0] |= 2
	}
	b = binary.AppendVarint(b, int64(hb.Arrival-s.prevA))
	if hb.HasSeq {
		b = binary.AppendVarint(b, int64(hb.Seq-s.prevSeq))
		s.prevSeq = hb.Seq
	}
	if hb.HasSent {
		b = binary.AppendVarint(b, int64(hb.Arrival-hb.Sent))
	}
	s.prevA = hb.Arrival
	if s.n == 0 {
		s.first = hb.Arrival
	}
	s.lAst, s.last, s.emit = hb.Arrival, hb.Arrival, true
	s.n++
	s.size += int64(len(b))
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("trace: spool: %w", err)
	}
	return nil
}

// Len returns the number of heartbeats written.
func (s *Spool) Len() int { return s.n }

// Bounds returns the first and last arrival (zero for an empty spool).
func (s *Spool) Bounds() (first, last time.Duration) { return s.first, s.lAst }

// Size returns the bytes the heartbeats take in the file.
func (s *Spool) Size() int64 { return s.size }

// Pass returns one read of the heartbeats in arrival order and a function
// that reports what ended the read early (nil after a complete read). It
// must be called after Finish; passes may run concurrently. A pass reads the
// file sequentially in blocks of spoolBlock bytes and decodes each block in
// memory.
func (s *Spool) Pass() (iter.Seq[detector.Heartbeat], func() error) {
	var err error
	seq := func(yield func(detector.Heartbeat) bool) {
		if !s.done {
			err = errors.New("trace: spool: read before Finish")
			return
		}
		b := spoolBlocks{f: s.f, size: s.size, buf: make([]byte, spoolBlock)}
		var hb detector.Heartbeat
		var prevA time.Duration
		var prevSeq uint64
		for range s.n {
			if err = b.fill(); err != nil {
				return
			}
			fl := b.buf[b.i]
			b.i++
			d, e := b.varint()
			if e != nil {
				err = e
				return
			}
			hb.Arrival = prevA + time.Duration(d)
			prevA = hb.Arrival
			hb.HasSeq, hb.HasSent = fl&1 != 0, fl&2 != 0
			hb.Seq, hb.Sent = 0, 0
			if hb.HasSeq {
				d, e := b.varint()
				if e != nil {
					err = e
					return
				}
				prevSeq += uint64(d)
				hb.Seq = prevSeq
			}
			if hb.HasSent {
				d, e := b.varint()
				if e != nil {
					err = e
					return
				}
				hb.Sent = hb.Arrival - time.Duration(d)
			}
			if !yield(hb) {
				return
			}
		}
	}
	return seq, func() error { return err }
}

// spoolBlock is the size of a Pass's read buffer.
const spoolBlock = 64 << 10

// spoolRecordMax bounds one spooled heartbeat: a flag byte and three
// varints of at most binary.MaxVarintLen64 bytes.
const spoolRecordMax = 1 + 3*binary.MaxVarintLen64

// spoolBlocks reads a spool file sequentially into buf and decodes from it.
type spoolBlocks struct {
	f    io.ReaderAt
	size int64 // bytes of the file that hold heartbeats
	off  int64 // file offset of the byte after buf[:n]
	buf  []byte
	i, n int // the undecoded bytes are buf[i:n]
}

// fill makes buf[i:n] hold a whole record, or everything left in the file.
func (b *spoolBlocks) fill() error {
	if b.n-b.i >= spoolRecordMax || b.off == b.size {
		if b.i == b.n {
			return spoolReadErr(io.EOF)
		}
		return nil
	}
	b.n = copy(b.buf, b.buf[b.i:b.n])
	b.i = 0
	want := min(int64(len(b.buf)-b.n), b.size-b.off)
	m, err := b.f.ReadAt(b.buf[b.n:b.n+int(want)], b.off)
	b.n += m
	b.off += int64(m)
	if m < int(want) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return spoolReadErr(err)
	}
	if b.i == b.n {
		return spoolReadErr(io.EOF)
	}
	return nil
}

// varint decodes the next signed varint of the record in buf[i:n].
func (b *spoolBlocks) varint() (int64, error) {
	v, k := binary.Varint(b.buf[b.i:b.n])
	switch {
	case k == 0:
		return 0, spoolReadErr(io.EOF)
	case k < 0:
		return 0, fmt.Errorf("trace: spool: reading back: varint overflows 64 bits")
	}
	b.i += k
	return v, nil
}

func spoolReadErr(e error) error {
	if e == io.EOF {
		e = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("trace: spool: reading back: %w", e)
}

// Close releases the file.
func (s *Spool) Close() error {
	err := s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
	return err
}

type pendHB struct {
	hb detector.Heartbeat
	at uint64
}

// before orders the heartbeats waiting to be spooled: by arrival, then
// input position.
func (a pendHB) before(b pendHB) bool {
	if a.hb.Arrival != b.hb.Arrival {
		return a.hb.Arrival < b.hb.Arrival
	}
	return a.at < b.at
}
