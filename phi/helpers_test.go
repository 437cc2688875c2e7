package phi_test

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/assert"
)

// commonArrivals is the six-heartbeat trace of docs/algorithms.md,
// “Conventions and the common trace” (Δ = 100 ms):
// intervals 105, 93, 122, 82, 108 ms, μ = 102 ms, σ = 13.608821 ms.
var commonArrivals = []float64{120, 225, 318, 440, 522, 630}

// ms converts milliseconds to a Duration, rounding to the nanosecond.
func ms(x float64) time.Duration { return time.Duration(math.Round(x * 1e6)) }

// hb is a heartbeat with sequence number seq arriving at a ms.
func hb(seq uint64, a float64) detector.Heartbeat {
	return detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: ms(a)}
}

// feedCommon observes the common trace with sequence numbers 1..6.
func feedCommon(d detector.Detector) {
	for i, a := range commonArrivals {
		d.Observe(hb(uint64(i+1), a))
	}
}

// relEq asserts |got − want| ≤ 1e-9·|want| (the tolerance of
// docs/algorithms.md).
func relEq(t *testing.T, want, got float64, msgAndArgs ...any) {
	t.Helper()
	assert.InEpsilon(t, want, got, 1e-9, msgAndArgs...)
}

// durEq asserts that a Duration is within 1 ns of want nanoseconds: crossing
// times are rounded up to the nanosecond, so a relative tolerance finer than
// 1 ns cannot apply to them.
func durEq(t *testing.T, wantNs float64, got time.Duration, msgAndArgs ...any) {
	t.Helper()
	assert.InDelta(t, wantNs, float64(got), 1, msgAndArgs...)
}

// displayEq asserts that got rounds to the value docs/algorithms.md prints with
// the given number of decimals.
func displayEq(t *testing.T, printed float64, decimals int, got float64, msgAndArgs ...any) {
	t.Helper()
	assert.InDelta(t, printed, got, 0.5*math.Pow(10, -float64(decimals))+1e-12, msgAndArgs...)
}
