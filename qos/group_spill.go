// The grouped φ pass's per-heartbeat data in files, past Spill.GroupBytes.

package qos

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// The records of the grouped pass's files: a fresh heartbeat's delay A − σ
// (int64) and time cell, and a group node's form (m, s) after a heartbeat.
const (
	freshRecord = 9
	formRecord  = 16
)

// addFresh records the delay and time cell of the next fresh heartbeat.
func (p *groupPass) addFresh(d int64, c uint8) {
	p.nFresh++
	p.lastDelay = d
	p.bMin, p.bMax = min(p.bMin, d), max(p.bMax, d)
	if p.freshSpill == nil {
		p.delay = append(p.delay, d)
		if p.cells != nil {
			p.freshCell = append(p.freshCell, c)
		}
		return
	}
	var b [freshRecord]byte
	binary.LittleEndian.PutUint64(b[:], uint64(d))
	b[8] = c
	p.freshSpill.put(b[:])
}

// addForm appends the form (m, s) after the current heartbeat to nd.
func (p *groupPass) addForm(nd *groupNode, m, s float64) {
	nd.n++
	if nd.file == nil {
		last := len(nd.m) - 1
		if last < 0 || len(nd.m[last]) == groupBlockLen {
			nd.m = append(nd.m, make([]float64, 0, groupBlockLen))
			nd.s = append(nd.s, make([]float64, 0, groupBlockLen))
			last++
		}
		nd.m[last], nd.s[last] = append(nd.m[last], m), append(nd.s[last], s)
		return
	}
	var b [formRecord]byte
	binary.LittleEndian.PutUint64(b[:], math.Float64bits(m))
	binary.LittleEndian.PutUint64(b[8:], math.Float64bits(s))
	nd.file.put(b[:])
}

// spill moves the pass's per-heartbeat data to files (the fresh
// heartbeats' delays and cells to one, each node's forms to one of its
// own), where the rest of the pass appends it, so that its memory no longer
// grows with the stream.
func (p *groupPass) spill() error {
	f, err := newSpillFile(p.cfg.Spill.Dir)
	if err != nil {
		return err
	}
	p.freshSpill = &f
	delay, cells := p.delay, p.freshCell
	p.delay, p.freshCell = nil, nil
	for k, d := range delay {
		var b [freshRecord]byte
		binary.LittleEndian.PutUint64(b[:], uint64(d))
		if cells != nil {
			b[8] = cells[k]
		}
		p.freshSpill.put(b[:])
	}
	for _, nd := range p.all {
		f, err := newSpillFile(p.cfg.Spill.Dir)
		if err != nil {
			return err
		}
		nd.file = &f
		ms, ss := nd.m, nd.s
		nd.m, nd.s, nd.n = nil, nil, 0
		for c, mc := range ms {
			for k := range mc {
				p.addForm(nd, mc[k], ss[c][k])
			}
		}
	}
	return nil
}

// closeFiles removes the pass's files.
func (p *groupPass) closeFiles() {
	if p.freshSpill != nil {
		p.freshSpill.close()
		p.freshSpill = nil
	}
	for _, nd := range p.all {
		if nd.file != nil {
			nd.file.close()
			nd.file = nil
		}
	}
}

// groupBlock is a run of consecutive evaluated heartbeats of a group: their
// forms, TD bases' delays and time cells (nil without cells).
type groupBlock struct {
	m, s []float64
	d    []int64
	c    []uint8
}

// groupBlockLen is the number of heartbeats a groupBlock holds at most.
const groupBlockLen = 4096

// blocks calls fn with the heartbeats of nodes in order, groupBlockLen at
// a time at most (the block's slices are reused by the next call), from
// memory or from the pass's files.
func (p *groupPass) blocks(nodes []*groupNode, fn func(b groupBlock)) error {
	if p.freshSpill == nil {
		for _, nd := range nodes {
			for c, mc := range nd.m {
				a, e := c*groupBlockLen, c*groupBlockLen+len(mc)
				b := groupBlock{m: mc, s: nd.s[c], d: p.delay[nd.from+a : nd.from+e]}
				if p.freshCell != nil {
					b.c = p.freshCell[nd.from+a : nd.from+e]
				}
				fn(b)
			}
		}
		return nil
	}
	buf := groupBlock{m: make([]float64, groupBlockLen), s: make([]float64, groupBlockLen), d: make([]int64, groupBlockLen), c: make([]uint8, groupBlockLen)}
	raw := make([]byte, groupBlockLen*formRecord)
	fr, err := p.freshSpill.reader()
	if err != nil {
		return err
	}
	at := 0 // fresh heartbeats read
	for _, nd := range nodes {
		if _, err := fr.Discard((nd.from - at) * freshRecord); err != nil {
			return fmt.Errorf("qos: reading back replay data: %w", err)
		}
		at = nd.from
		nr, err := nd.file.reader()
		if err != nil {
			return err
		}
		for a := 0; a < nd.n; a += groupBlockLen {
			m := min(groupBlockLen, nd.n-a)
			if _, err := io.ReadFull(nr, raw[:m*formRecord]); err != nil {
				return fmt.Errorf("qos: reading back replay data: %w", err)
			}
			for k := range m {
				buf.m[k] = math.Float64frombits(binary.LittleEndian.Uint64(raw[k*formRecord:]))
				buf.s[k] = math.Float64frombits(binary.LittleEndian.Uint64(raw[k*formRecord+8:]))
			}
			if _, err := io.ReadFull(fr, raw[:m*freshRecord]); err != nil {
				return fmt.Errorf("qos: reading back replay data: %w", err)
			}
			for k := range m {
				buf.d[k] = int64(binary.LittleEndian.Uint64(raw[k*freshRecord:]))
				buf.c[k] = raw[k*freshRecord+8]
			}
			at += m
			b := groupBlock{m: buf.m[:m], s: buf.s[:m], d: buf.d[:m]}
			if p.cells != nil {
				b.c = buf.c[:m]
			}
			fn(b)
		}
	}
	return nil
}
