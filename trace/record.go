package trace

import (
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Record is one heartbeat of a trace.
//
// Sender names the monitored process (LIP6 node ids are kept as their
// decimal text, "0".."9"); it is "" when the trace has a single unnamed
// sender. Seq is valid only when HasSeq is true (0 is a valid sequence
// number). Sent is the send instant on the sender's clock, valid only when
// HasSent; Arrival is the arrival instant on the monitor's clock, valid only
// when HasArrival (emission logs have send times only). Both are exact
// nanosecond offsets from the origin of their clock, as recorded in the file.
type Record struct {
	Sender     string
	Seq        uint64
	HasSeq     bool
	Sent       time.Duration
	HasSent    bool
	Arrival    time.Duration
	HasArrival bool
}

// Heartbeat converts the record to the detector's heartbeat. A record
// without arrival time yields Arrival 0.
func (r Record) Heartbeat() detector.Heartbeat {
	return detector.Heartbeat{
		Seq:     r.Seq,
		HasSeq:  r.HasSeq,
		Sent:    r.Sent,
		HasSent: r.HasSent,
		Arrival: r.Arrival,
	}
}
