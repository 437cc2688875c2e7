package jacobson

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Default gains of RFC 6298 §2 (Jacobson's α = 1/8 and β = 1/4).
const (
	DefaultGain    = 1.0 / 8 // g, gain of the smoothed mean SRTT
	DefaultDevGain = 1.0 / 4 // h, gain of the mean deviation RTTVAR
)

// Init selects how an Estimator starts.
type Init int

const (
	// InitFirstSample is RFC 6298 §2.2: the first sample R sets SRTT = R and
	// RTTVAR = R/2; later samples are filtered. The default.
	InitFirstSample Init = iota
	// InitZero starts from SRTT = RTTVAR = 0 and filters every sample, the
	// first included. Bertier et al. (DSN 2002) start their error filter this
	// way (docs/algorithms.md, “Bertier's adaptive margin”: delay and var
	// initially 0).
	InitZero
)

// EstimatorConfig configures an Estimator. The zero value means RFC 6298:
// gains 1/8 and 1/4, initialised from the first sample.
type EstimatorConfig struct {
	// Gain g of SRTT, in (0, 1]. Default DefaultGain (1/8).
	Gain float64
	// DevGain h of RTTVAR, in (0, 1]. Default DefaultDevGain (1/4).
	DevGain float64
	// Init is the initial state. Default InitFirstSample.
	Init Init
}

func (c *EstimatorConfig) normalize() error {
	c.Gain = cmp.Or(c.Gain, DefaultGain)
	c.DevGain = cmp.Or(c.DevGain, DefaultDevGain)
	if !(c.Gain > 0 && c.Gain <= 1) {
		return fmt.Errorf("jacobson: gain %v is not in (0, 1]", c.Gain)
	}
	if !(c.DevGain > 0 && c.DevGain <= 1) {
		return fmt.Errorf("jacobson: deviation gain %v is not in (0, 1]", c.DevGain)
	}
	if c.Init != InitFirstSample && c.Init != InitZero {
		return fmt.Errorf("jacobson: unknown Init %d", c.Init)
	}
	return nil
}

// Estimator is the Jacobson/Karels mean and mean-deviation filter (V. Jacobson,
// "Congestion avoidance and control", SIGCOMM 1988, appendix A; update order of
// RFC 6298 §2.3; docs/algorithms.md, “Jacobson's estimator”). For each sample R
// after the first:
//
//	RTTVAR = (1−h)·RTTVAR + h·|SRTT − R|   (deviation first, old SRTT)
//	SRTT   = (1−g)·SRTT   + g·R
//
// The state is kept in float64 nanoseconds, so there is no integer
// truncation and the filter converges to the exact mean of a constant input.
// Samples may be negative (Bertier filters a signed prediction error).
//
// The Estimator is reused: jacobson.Detector filters heartbeat inter-arrival
// times with it, bertier its expected-arrival error, swim its ping RTTs.
// It is not safe for concurrent use.
type Estimator struct {
	g, h    float64
	init    Init
	srtt    float64 // ns
	rttvar  float64 // ns
	samples int
}

// NewEstimator returns an estimator, or an error for a gain outside (0, 1]
// or an unknown Init.
func NewEstimator(cfg EstimatorConfig) (*Estimator, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	return &Estimator{g: cfg.Gain, h: cfg.DevGain, init: cfg.Init}, nil
}

// Update filters the sample r.
func (e *Estimator) Update(r time.Duration) { e.UpdateNanos(float64(r)) }

// UpdateNanos filters a sample given in nanoseconds, for callers whose
// samples have a fractional nanosecond (an average, a ratio). A NaN or
// infinite sample is ignored.
func (e *Estimator) UpdateNanos(r float64) {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return
	}
	if e.samples == 0 && e.init == InitFirstSample {
		e.srtt, e.rttvar = r, math.Abs(r)/2
	} else {
		e.rttvar = (1-e.h)*e.rttvar + e.h*math.Abs(e.srtt-r)
		e.srtt = (1-e.g)*e.srtt + e.g*r
	}
	e.samples++
}

// Samples returns the number of samples filtered since creation or Reset.
func (e *Estimator) Samples() int { return e.samples }

// Reset returns to the initial state.
func (e *Estimator) Reset() { e.srtt, e.rttvar, e.samples = 0, 0, 0 }

// SRTT returns the smoothed mean rounded to the nanosecond (0 before the
// first sample).
func (e *Estimator) SRTT() time.Duration { return detector.RoundNanos(e.srtt) }

// RTTVAR returns the smoothed mean deviation rounded to the nanosecond,
// never negative (0 before the first sample).
func (e *Estimator) RTTVAR() time.Duration { return detector.RoundNanos(e.rttvar) }

// SRTTNanos returns the smoothed mean in nanoseconds, unrounded.
func (e *Estimator) SRTTNanos() float64 { return e.srtt }

// RTTVARNanos returns the smoothed mean deviation in nanoseconds, unrounded.
func (e *Estimator) RTTVARNanos() float64 { return e.rttvar }

// Timeout returns SRTT + k·RTTVAR rounded to the nanosecond (RFC 6298's RTO
// before its clamp, with K = k).
func (e *Estimator) Timeout(k float64) time.Duration {
	return detector.RoundNanos(e.srtt + k*e.rttvar)
}
