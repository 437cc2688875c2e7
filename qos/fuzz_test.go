package qos

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
)

// decodeHeartbeats turns fuzz bytes into a stream in arrival order: each
// 4-byte group gives an arrival increment (0–65535 µs), a sequence step
// (−8..+7, so duplicates and stale numbers occur) and flags.
func decodeHeartbeats(data []byte) []detector.Heartbeat {
	var hbs []detector.Heartbeat
	var at time.Duration
	seq := int64(100)
	for len(data) >= 4 {
		inc := binary.LittleEndian.Uint16(data)
		step := int64(data[2]&0x0f) - 8
		flags := data[3]
		data = data[4:]
		at += time.Duration(inc) * time.Microsecond
		seq = max(seq+step, 0)
		hb := detector.Heartbeat{Arrival: at, HasSeq: flags&1 == 0, Seq: uint64(seq)}
		if flags&2 == 0 {
			hb.Sent, hb.HasSent = at-time.Duration(flags>>2)*time.Millisecond, true
		}
		hbs = append(hbs, hb)
	}
	return hbs
}

// checkInvariants asserts what must hold for any stream.
func checkInvariants(t *testing.T, res Result) {
	t.Helper()
	switch {
	case math.IsNaN(res.MRPerSecond) || res.MRPerSecond < 0:
		t.Fatalf("MR %v", res.MRPerSecond)
	case math.IsNaN(res.QAP) || res.QAP < 0 || res.QAP > 1:
		t.Fatalf("QAP %v", res.QAP)
	case res.Suspected < 0 || res.Suspected > res.Span:
		t.Fatalf("suspected %v outside [0, span %v]", res.Suspected, res.Span)
	case res.Mistakes < 0 || res.Mistakes > res.Records:
		t.Fatalf("%d mistakes for %d records", res.Mistakes, res.Records)
	case res.Evaluated+res.WarmUp+res.Stale != res.Records:
		t.Fatalf("evaluated %d + warm-up %d + stale %d ≠ records %d", res.Evaluated, res.WarmUp, res.Stale, res.Records)
	case res.Evaluated > 0 && !(res.TD.P50 <= res.TD.P99 && res.TD.P99 <= res.TD.Max && res.TD.Mean <= res.TD.Max):
		t.Fatalf("TD stats out of order: %+v", res.TD)
	case res.Evaluated > 0 && (res.TD.P50 < 0 || res.TD.Mean < 0 || res.LastTD < 0):
		// TD_k ≥ A_k − σ_k ≥ 0 (send-based) or ≥ d̄ ≥ 0 (arrival-based).
		t.Fatalf("negative TD: %+v, last %v", res.TD, res.LastTD)
	case res.Mistakes > 0 && res.MeanTM > res.MeanTMR:
		t.Fatalf("E[TM] %v > E[TMR] %v", res.MeanTM, res.MeanTMR)
	}
}

func FuzzReplay(f *testing.F) {
	f.Add([]byte{0x10, 0x27, 0x09, 0x00, 0x10, 0x27, 0x09, 0x00, 0x30, 0x75, 0x09, 0x00, 0x10, 0x27, 0x07, 0x01})
	f.Add([]byte{0xa0, 0x86, 0x09, 0x02, 0x00, 0x00, 0x08, 0x00, 0xff, 0xff, 0x0f, 0xfc})
	f.Fuzz(func(t *testing.T, data []byte) {
		hbs := decodeHeartbeats(data)
		fixed, _ := detector.NewFixed(detector.FixedConfig{Timeout: new(50 * time.Millisecond)})
		ch, _ := chen.New(chen.Config{Estimator: chen.EstimatorConfig{Interval: 20 * time.Millisecond, WindowSize: 4}, Margin: new(time.Millisecond)})
		nm, _ := phi.NewNormal(phi.NormalConfig{WindowSize: 4, Threshold: 1})
		for _, d := range []detector.Detector{fixed, ch, nm} {
			res, err := ReplaySlice(d, hbs, Config{RecordMistakes: true})
			if err != nil {
				continue // too short for warm-up
			}
			checkInvariants(t, res)
			if len(res.MistakeIntervals) != res.Mistakes {
				t.Fatalf("%d intervals for %d mistakes", len(res.MistakeIntervals), res.Mistakes)
			}
			var sum time.Duration
			for _, iv := range res.MistakeIntervals {
				if iv.End < iv.Start {
					t.Fatalf("interval %+v ends before it starts", iv)
				}
				sum += iv.End - iv.Start
			}
			if sum != res.Suspected {
				t.Fatalf("intervals sum to %v, suspected %v", sum, res.Suspected)
			}
		}
	})
}

// Invariants on generated traces for every detector.
func TestInvariantsAllDetectors(t *testing.T) {
	for name, hbs := range agreementTraces() {
		for dname, mk := range allDetectors(t) {
			res, err := ReplaySlice(mk(), hbs, Config{})
			if err != nil {
				t.Fatalf("%s/%s: %v", name, dname, err)
			}
			checkInvariants(t, res)
		}
	}
}
