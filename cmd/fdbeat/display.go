package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"
)

// liveRegion keeps a redrawn block of lines (the table) at the bottom of a
// terminal and prints log lines above it, as progress-bar libraries keep
// their bars under the program's output: each redraw moves the cursor up
// over the block drawn last, erases to the end of the screen, writes the
// log lines that came since, then the new block. Log lines are held for at
// most logDelay and written with one redraw, so a burst of them costs one
// redraw, and neither the table nor a log line ever overwrites the other.
// Safe for concurrent use.
type liveRegion struct {
	out  io.Writer // the terminal: the block and the erase sequences
	logs io.Writer // where log lines go when shown (the same terminal); nil: out
	// size returns the terminal's width and height in cells; ok false when
	// unknown (then lines are taken not to wrap and the block is not cut).
	size func() (cols, rows int, ok bool)

	mu      sync.Mutex
	drawn   int    // physical rows of the block on screen (0: none)
	last    []byte // the block drawn last, redrawn under new log lines
	pending []byte // log lines not yet shown
	timer   *time.Timer
	closed  bool
}

// logDelay bounds how long a log line waits for the redraw that shows it.
const logDelay = 50 * time.Millisecond

func newLiveRegion(out, logs io.Writer, size func() (int, int, bool)) *liveRegion {
	if logs == nil {
		logs = out
	}
	if size == nil {
		size = func() (int, int, bool) { return 0, 0, false }
	}
	return &liveRegion{out: out, logs: logs, size: size}
}

// Write takes log output (whole lines, as slog writes them) and shows it
// above the block within logDelay; after Close it writes straight through.
func (d *liveRegion) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return d.logs.Write(p)
	}
	d.pending = append(d.pending, p...)
	if d.timer == nil {
		d.timer = time.AfterFunc(logDelay, d.flushLogs)
	}
	return len(p), nil
}

func (d *liveRegion) flushLogs() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.timer = nil
	if !d.closed && len(d.pending) > 0 {
		d.redraw()
	}
}

// Draw replaces the block with frame (lines ending in '\n'), showing the
// pending log lines above it.
func (d *liveRegion) Draw(frame []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.last = append(d.last[:0], frame...)
	d.redraw()
}

// Close shows the pending log lines under the last block, which stays on
// screen; later log lines are written straight through.
func (d *liveRegion) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.closed = true
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if len(d.pending) > 0 {
		_, _ = d.logs.Write(d.pending)
		d.pending = nil
	}
}

// redraw erases the block, writes the pending log lines and draws the last
// block again, cut to the terminal's height. Called with d.mu held.
func (d *liveRegion) redraw() {
	if d.drawn > 0 {
		fmt.Fprintf(d.out, "\r\x1b[%dA\x1b[J", d.drawn)
	}
	if len(d.pending) > 0 {
		_, _ = d.logs.Write(d.pending)
		d.pending = d.pending[:0]
	}
	cols, height, ok := d.size()
	block := d.last
	if ok && height > 2 {
		block = cutBlock(block, cols, height-1)
	}
	_, _ = d.out.Write(block)
	d.drawn = physicalRows(block, cols)
}

// physicalRows returns the terminal rows text (lines ending in '\n') takes
// at cols cells a row (0: unknown, each line one row).
func physicalRows(text []byte, cols int) int {
	n := 0
	for line := range strings.Lines(string(text)) {
		w := runewidth.StringWidth(strings.TrimRight(line, "\n"))
		if cols <= 0 || w <= cols {
			n++
		} else {
			n += (w + cols - 1) / cols
		}
	}
	return n
}

// cutBlock returns the first lines of text that fit in rows terminal rows
// less one, and a last line saying how many were left out: a block taller
// than the screen could not be moved over and erased.
func cutBlock(text []byte, cols, rows int) []byte {
	if physicalRows(text, cols) <= rows {
		return text
	}
	var out bytes.Buffer
	used, total, kept, full := 0, 0, 0, false
	for line := range strings.Lines(string(text)) {
		total++
		r := physicalRows([]byte(line), cols)
		if full = full || used+r > rows-1; full {
			continue
		}
		used += r
		kept++
		out.WriteString(line)
	}
	msg := fmt.Sprintf("… %d more line(s) (a taller terminal, or a smaller --table-senders, shows them)", total-kept)
	out.WriteString(runewidth.Truncate(msg, max(cols, 1), "") + "\n")
	return out.Bytes()
}
