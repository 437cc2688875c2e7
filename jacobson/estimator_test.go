package jacobson_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/jacobson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tol = 1e-9 // relative, docs/algorithms.md, “Conventions and the common trace”

func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// docs/algorithms.md, “Jacobson's estimator” table: samples 105, 93, 122, 82,
// 108 ms.
func TestEstimatorRFC6298Table(t *testing.T) {
	e, err := jacobson.NewEstimator(jacobson.EstimatorConfig{})
	require.NoError(t, err)
	rows := []struct{ r, srtt, rttvar, to float64 }{
		{105, 105, 52.5, 315},
		{93, 103.5, 42.375, 273},
		{122, 105.8125, 36.40625, 251.4375},
		{82, 102.8359375, 33.2578125, 235.8671875},
		{108, 103.4814453125, 26.234375, 208.4189453125},
	}
	for i, row := range rows {
		e.Update(ms(row.r))
		assert.Equal(t, i+1, e.Samples())
		assert.InEpsilon(t, row.srtt*1e6, e.SRTTNanos(), tol, "SRTT after %v", row.r)
		assert.InEpsilon(t, row.rttvar*1e6, e.RTTVARNanos(), tol, "RTTVAR after %v", row.r)
		assert.InEpsilon(t, row.to*1e6, e.SRTTNanos()+4*e.RTTVARNanos(), tol, "TO after %v", row.r)
		assert.InDelta(t, row.to*1e6, float64(e.Timeout(4)), 0.5)
	}
	assert.Equal(t, time.Duration(103481445), e.SRTT()) // 103.4814453125 ms rounded
	assert.Equal(t, ms(26.234375), e.RTTVAR())
}

// RFC order uses the old SRTT in the deviation: after 105 then 93 the
// deviation term is |105 − 93| = 12, not |103.5 − 93| = 10.5.
func TestEstimatorDeviationUsesOldSRTT(t *testing.T) {
	e, _ := jacobson.NewEstimator(jacobson.EstimatorConfig{})
	e.Update(ms(105))
	e.Update(ms(93))
	assert.InEpsilon(t, (0.75*52.5+0.25*12)*1e6, e.RTTVARNanos(), tol)
}

// Zero initial state with one gain γ = 0.1: Bertier's error filter
// (docs/algorithms.md, “Bertier's adaptive margin”: samples A_k − EA_k = 5,
// −4.5, 19 ms, i.e. errors 5, −5, 19, give delay 0.5, 0, 1.9 and var 0.5, 0.95,
// 2.755).
func TestEstimatorZeroInit(t *testing.T) {
	e, err := jacobson.NewEstimator(jacobson.EstimatorConfig{Gain: 0.1, DevGain: 0.1, Init: jacobson.InitZero})
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), e.SRTT())
	for _, row := range []struct{ r, delay, dev float64 }{{5, 0.5, 0.5}, {-4.5, 0, 0.95}, {19, 1.9, 2.755}} {
		e.Update(ms(row.r))
		assert.InDelta(t, row.delay*1e6, e.SRTTNanos(), 1e-9*1e6)
		assert.InEpsilon(t, row.dev*1e6, e.RTTVARNanos(), tol)
	}
}

// A constant input converges to the exact mean (no integer truncation) and
// the deviation to 0 without going negative or NaN.
func TestEstimatorConvergesExactly(t *testing.T) {
	e, _ := jacobson.NewEstimator(jacobson.EstimatorConfig{})
	e.Update(ms(300))
	for range 2000 {
		e.Update(ms(100))
	}
	assert.Equal(t, ms(100), e.SRTT())
	assert.GreaterOrEqual(t, e.RTTVARNanos(), 0.0)
	assert.Less(t, e.RTTVARNanos(), 1e-6)
	e.UpdateNanos(nan())
	assert.Equal(t, ms(100), e.SRTT(), "a NaN sample is ignored")
	e.Reset()
	assert.Equal(t, 0, e.Samples())
}

func TestEstimatorConfigErrors(t *testing.T) {
	for _, cfg := range []jacobson.EstimatorConfig{
		{Gain: -0.1}, {Gain: 1.5}, {DevGain: 2}, {Gain: nan()}, {Init: 7},
	} {
		_, err := jacobson.NewEstimator(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
	_, err := jacobson.NewEstimator(jacobson.EstimatorConfig{Gain: 1, DevGain: 1})
	assert.NoError(t, err)
}

func nan() float64 { z := 0.0; return z / z }
