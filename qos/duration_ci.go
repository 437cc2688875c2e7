// JSON of confidence intervals of durations: unbounded ends and absent
// intervals are null.

package qos

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// DurationCI is a confidence interval of durations [lo, hi]. An end at
// math.MinInt64 or math.MaxInt64 is unbounded (−∞ or +∞: a bootstrap
// resample in which the quantity has no finite value). In JSON an
// unbounded end is null, as the other undefined metrics are (WriteJSON):
// [lo, null]; the nanosecond numbers of the ends otherwise.
type DurationCI [2]time.Duration

// MarshalJSON writes [lo, hi] in nanoseconds, null for an unbounded end.
func (c DurationCI) MarshalJSON() ([]byte, error) {
	end := func(d time.Duration) string {
		if d == math.MinInt64 || d == math.MaxInt64 {
			return "null"
		}
		return strconv.FormatInt(int64(d), 10)
	}
	return []byte("[" + end(c[0]) + "," + end(c[1]) + "]"), nil
}

// UnmarshalJSON reads what MarshalJSON writes; null (the whole interval
// absent) leaves c as it is.
func (c *DurationCI) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var ends [2]*int64
	if err := json.Unmarshal(b, &ends); err != nil {
		return err
	}
	c[0], c[1] = math.MinInt64, math.MaxInt64
	if ends[0] != nil {
		c[0] = time.Duration(*ends[0])
	}
	if ends[1] != nil {
		c[1] = time.Duration(*ends[1])
	}
	return nil
}

// MarshalJSON writes the operating point with its fields' tags, and
// td_ci_ns null when no setting meets the targets (not Found: there is no
// operating point whose TD to bound; user48 F32: it read [0, 0]).
func (op OperatingPoint) MarshalJSON() ([]byte, error) {
	type fields OperatingPoint // without this method
	v := struct {
		fields
		TDCI *DurationCI `json:"td_ci_ns"`
	}{fields: fields(op)}
	if op.Found {
		v.TDCI = &op.TDCI
	}
	return json.Marshal(v)
}
