package main

import (
	"fmt"
	"math"
	"time"

	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/sfd"
)

// sfdConfig is SFD at fdreplay's defaults: SM_1 = Δ, β = Δ/10, the targets
// of settings, and TD measured the way the replay measures it (send-based
// when the clocks look synchronized, else arrival-based with d̄).
func (s settings) sfdConfig() sfd.Config {
	return sfd.Config{
		Estimator:     s.chenEst(),
		InitialMargin: new(s.sfdMargin),
		Step:          s.sfdStep,
		Targets: sfd.Targets{
			MaxTD:                s.targets.MaxTD,
			MaxMistakesPerSecond: s.sfdMaxMR(),
			MinQAP:               s.targets.MinQAP,
		},
		UseSendTime: s.sync,
		OneWayDelay: s.delay,
	}
}

// sfdMaxMR is SFD's MR_U: the tuner's bound, or for --mr-max 0 (MR = 0)
// the smallest positive rate, since SFD reads 0 as "no MR target" and any
// observed mistake exceeds the smallest positive rate.
func (s settings) sfdMaxMR() float64 {
	if s.targets.NoMistakes {
		return math.SmallestNonzeroFloat64
	}
	return s.targets.MaxMRPerSecond
}

// sfdTargets returns the SFD targets: the tuner's when any is set, else
// TD ≤ 10Δ, MR ≤ 1 per minute, QAP ≥ 0.999.
func sfdTargets(t qos.Targets, interval time.Duration) qos.Targets {
	if t != (qos.Targets{}) {
		return t
	}
	return qos.Targets{MaxTD: 10 * interval, MaxMRPerSecond: 1.0 / 60, MinQAP: 0.999}
}

// sfdTableFamily is SFD at the default initial margin, with its description.
func sfdTableFamily(s settings) (qos.Family, string) {
	f := qos.SFDFamily(s.sfdConfig(), []time.Duration{s.sfdMargin})
	return f, fmt.Sprintf("SM1=%v β=%v", s.sfdMargin, s.sfdStep)
}
