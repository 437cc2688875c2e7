package spec

import (
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/twowfd"
)

const (
	src2W      = "Tomsic et al., IPDPS 2015"
	srcSatzger = "Satzger et al., ACM SAC 2007"
	srcKappa   = "Hayashibara, Défago, Katayama, JAIST IS-RR-2004-006"
)

func init() {
	define(Family{Name: "2w-fd", Aliases: []string{"2wfd"}, Swept: "alpha", Doc: "2W-FD: the later of two NFD-E expected arrivals plus α (" + src2W + ")"},
		twowfd.New,
		func(c twowfd.Config, v []float64) qos.Family { return qos.TwoWFDFamily(c, durations(v)) },
		func(c twowfd.Config) float64 {
			return ms(detector.OrDefault(c.Margin, orDur(c.Interval, chen.DefaultInterval)))
		},
		dur(meta{"interval", "duration", "100ms", src2W, "nominal heartbeat interval Δ", "Interval", "250ms"}, 0, false,
			func(c *twowfd.Config) *time.Duration { return &c.Interval }),
		intPlain(meta{"short-window", "heartbeats", "1", src2W, "short window n1", "ShortWindow", "2"}, 1,
			func(c *twowfd.Config) *int { return &c.ShortWindow }),
		intPlain(meta{"window", "heartbeats", "1000", src2W, "long window n2", "LongWindow", "64"}, 1,
			func(c *twowfd.Config) *int { return &c.LongWindow }),
		durPtr(meta{"alpha", "duration", "Δ", src2W, "safety margin α", "Margin", "0s"}, 0, true,
			func(c *twowfd.Config) **time.Duration { return &c.Margin }),
		intPtr(meta{"min-samples", "samples", "the long window", srcChen + " (full windows)", "warm-up: samples needed before QoS is measured (0: none)", "MinSamples", "0"}, 0,
			func(c *twowfd.Config) **int { return &c.MinSamples }),
		uintPtr(meta{"restart-jump", "sequence numbers", "100", srcFdkit, "a backwards jump larger than this is a sender restart", "RestartJump", "0"},
			func(c *twowfd.Config) **uint64 { return &c.RestartJump }),
	)

	define(Family{Name: "satzger", Swept: "threshold", Doc: "Satzger et al.'s accrual detector on the empirical distribution (" + srcSatzger + ")"},
		satzger.New,
		func(c satzger.Config, v []float64) qos.Family { return qos.SatzgerFamily(c, v) },
		func(c satzger.Config) float64 { return orFloat(c.Threshold, satzger.DefaultThreshold) },
		atMost(floatPlain(meta{"threshold", "", "0.99", srcSatzger, "threshold θ on the level, in (0, 1]", "Threshold", "0.9"}, 0, false,
			func(c *satzger.Config) *float64 { return &c.Threshold }), 1),
		intPlain(meta{"window", "intervals", "1000", srcSatzger, "window size N", "WindowSize", "200"}, 1,
			func(c *satzger.Config) *int { return &c.WindowSize }),
		floatPlain(meta{"scale", "", "0.9", srcSatzger, "scale c on the elapsed time", "Scale", "1"}, 0, false,
			func(c *satzger.Config) *float64 { return &c.Scale }),
		dur(meta{"first-estimate", "duration", "1s", srcFdkit, "sample assumed while the window is empty", "BootstrapInterval", "100ms"}, 0, false,
			func(c *satzger.Config) *time.Duration { return &c.BootstrapInterval }),
		intPtr(meta{"min-samples", "intervals", "the window size", srcSatzger, "warm-up: intervals needed before QoS is measured (0: none)", "MinSamples", "0"}, 0,
			func(c *satzger.Config) **int { return &c.MinSamples }),
		uintPtr(meta{"restart-jump", "sequence numbers", "100", srcFdkit, "a backwards jump larger than this is a sender restart", "RestartJump", "0"},
			func(c *satzger.Config) **uint64 { return &c.RestartJump }),
	)

	define(Family{Name: "kappa", Aliases: []string{"κ", "κ-fd", "kappa-fd"}, Swept: "threshold", Doc: "κ-FD: accrual over the expected arrivals of missed heartbeats (" + srcKappa + ")"},
		kappa.New,
		func(c kappa.Config, v []float64) qos.Family { return qos.KappaFamily(c, v) },
		func(c kappa.Config) float64 { return orFloat(c.Threshold, kappa.DefaultThreshold) },
		append(chenEstimator(func(c *kappa.Config) *chen.EstimatorConfig { return &c.Estimator }),
			floatPlain(meta{"threshold", "", "2.5", srcKappa, "threshold K on κ", "Threshold", "4"}, 0, false,
				func(c *kappa.Config) *float64 { return &c.Threshold }),
			enum(meta{"contribution", "", "normal", srcKappa, "contribution of a missed heartbeat: normal or step", "Contribution", "step"},
				[]string{"normal", "step"}, func(c *kappa.Config) *kappa.Contribution { return &c.Contribution }),
			durPtr(meta{"min-std", "duration", "Δ/100", srcFdkit, "σ floor of the normal contribution; 0: 1 ns", "MinStdDev", "0s"}, 0, true,
				func(c *kappa.Config) **time.Duration { return &c.MinStdDev }),
			minSamples(func(c *kappa.Config) **int { return &c.MinSamples }))...,
	)
}
