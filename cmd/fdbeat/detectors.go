package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/spec"
)

// defaultPhiMinStdDivisor sets recv's default σ floor of its φ detectors to
// the heartbeat interval divided by it: Akka's min-std-deviation of 100 ms
// at 1 s heartbeats (swim.DefaultPeerMinStdDevDivisor is the same ratio),
// 10 ms at Δ = 100 ms, where the phi package's μ/100 (1 ms) is below a
// loaded host's own scheduling jitter (docs/experiments.md, “Host lateness
// on a loaded loopback host”). Trace replay keeps the phi package's default.
const defaultPhiMinStdDivisor = 10

// detSpec is one of the detectors recv runs side by side.
type detSpec struct {
	Name    string
	Factory monitor.Factory
}

// fieldDetectors returns the [Field-vi] detectors (docs/algorithms.md,
// “Published field measurements”): fixed timeouts and normal-model φ with the
// given thresholds and window.
func fieldDetectors(timeouts []time.Duration, phis []float64, window int, minStd, interval time.Duration) ([]detSpec, error) {
	var ds []detSpec
	for _, t := range timeouts {
		if t <= 0 {
			return nil, fmt.Errorf("timeout %v must be positive", t)
		}
		ds = append(ds, detSpec{"timeout-" + t.String(), func() (detector.Detector, error) {
			return detector.NewFixed(detector.FixedConfig{Timeout: &t})
		}})
	}
	for _, th := range phis {
		// phi.NormalConfig takes 0 as "the default threshold (8)", which
		// would run φ 8 under the name phi-0.
		if !(th > 0) || math.IsInf(th, 1) {
			return nil, fmt.Errorf("φ threshold %v must be finite and positive", th)
		}
		cfg := phi.NormalConfig{WindowSize: window, Threshold: th, BootstrapInterval: new(interval)}
		if minStd != 0 { // 0: the default floor μ/100
			cfg.MinStdDev = &minStd
		}
		if _, err := phi.NewNormal(cfg); err != nil {
			return nil, err
		}
		ds = append(ds, detSpec{"phi-" + strconv.FormatFloat(th, 'g', -1, 64), func() (detector.Detector, error) {
			return phi.NewNormal(cfg)
		}})
	}
	if len(ds) == 0 {
		return nil, errors.New("no detector: give --timeouts or --phi")
	}
	return ds, nil
}

// specDetector checks one detector given in the textual form of package
// spec and returns it. A window larger than maxPhiWindow is refused: every
// sender keeps one per detector.
func specDetector(text string) (detSpec, error) {
	s, err := spec.Parse(text)
	if err != nil {
		return detSpec{}, fmt.Errorf("--detector: %w", err)
	}
	for _, p := range s.Algorithm().Params() {
		if !p.Window {
			continue
		}
		if v, ok := s.Value(p.Name); ok {
			if n, _ := strconv.Atoi(v); n > maxPhiWindow {
				return detSpec{}, fmt.Errorf("--detector %q: %s %d is above %d (each sender keeps that many samples per detector)", text, p.Name, n, maxPhiWindow)
			}
		}
	}
	if _, err := s.New(); err != nil {
		return detSpec{}, fmt.Errorf("--detector: %w", err)
	}
	return detSpec{strings.TrimSpace(text), func() (detector.Detector, error) { return s.New() }}, nil
}
