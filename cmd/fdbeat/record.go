package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fdkit/fdkit/trace"
)

func (r *receiver) openTrace(specs []detSpec) error {
	if r.cfg.Out == "" {
		return nil
	}
	comp := trace.CompressionFor(r.cfg.Out)
	if fi, err := os.Stat(r.cfg.Out); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 && !r.cfg.Force {
		return fmt.Errorf("recv: --out %s already exists (%d bytes, an earlier recording?): give --force to overwrite it, or another name", r.cfg.Out, fi.Size())
	}
	f, err := os.Create(r.cfg.Out)
	if err != nil {
		return fmt.Errorf("recv: %w", err)
	}
	meta := map[string]string{"source": "fdbeat-recv", "clock": "unix-ns"}
	for k, v := range r.cfg.Meta {
		meta[k] = v
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	h := trace.Header{Interval: r.cfg.Interval, Meta: meta, Comments: []string{
		"recorded by fdbeat recv: sent = sender's clock, arrival = receiver's monotonic clock + wall time at start, both Unix ns",
		"live detectors: " + strings.Join(names, ", "),
	}}
	tw, err := trace.NewWriter(f, h, comp)
	if err != nil {
		f.Close()
		return fmt.Errorf("recv: %w", err)
	}
	if err := tw.Flush(); err != nil { // the header, at once
		f.Close()
		return fmt.Errorf("recv: %w", err)
	}
	r.file, r.tw = f, tw
	return nil
}

// flushPeriod is how often the trace is flushed to the file (a gzip sync
// flush, a new xz stream, or the buffer of a plain file; trace.Writer.Flush),
// so that a receiver killed at any instant leaves every heartbeat it recorded
// more than a second before, readable with --lenient (or fdreplay
// --lenient). Half a second leaves half a second for the flush itself on a
// loaded machine. The file is not fsynced: the guarantee is for a crash of
// the process, not of the operating system.
const flushPeriod = 500 * time.Millisecond

// flushTrace flushes the trace; a failure stops the receiver as a failed
// write does.
func (r *receiver) flushTrace() {
	r.eval.Lock()
	defer r.eval.Unlock()
	if err := r.tw.Flush(); err != nil && r.recErr == nil {
		r.recErr = err
	}
}

// record writes one heartbeat to the trace (if any).
func (r *receiver) record(rec trace.Record) error {
	if r.tw == nil {
		return nil
	}
	if err := r.tw.Write(rec); err != nil {
		return err
	}
	r.mu.Lock()
	r.stats.Recorded++
	r.mu.Unlock()
	return nil
}

func (r *receiver) closeTrace() error {
	if r.tw == nil {
		return nil
	}
	err := r.tw.Close()
	if cerr := r.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("recv: closing trace: %w", err)
	}
	return nil
}
