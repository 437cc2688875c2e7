package spec

import (
	"cmp"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/sfd"
	"github.com/fdkit/fdkit/twowfd"
)

// Sources cited in the parameter table.
const (
	srcAkka      = "Akka reference.conf, akka.cluster.failure-detector"
	srcCassandra = "Cassandra gms/FailureDetector.java (fd_initial_value_ms, fd_max_interval_ms; phi_convict_threshold in cassandra.yaml)"
	srcPhi       = "Hayashibara et al., SRDS 2004"
	srcChen      = "Chen, Toueg, Aguilera, IEEE TC 51(5), 2002"
	srcRFC6298   = "RFC 6298 §2"
	srcBertier   = "Bertier, Marin, Sens, DSN 2002"
	srcSFD       = "Xiong et al., IPDPS 2012"
	srcFdkit     = "fdkit"
	src2W        = "Tomsic et al., IPDPS 2015"
	srcSatzger   = "Satzger et al., ACM SAC 2007"
	srcKappa     = "Hayashibara, Défago, Katayama, JAIST IS-RR-2004-006"
)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// chenEstimator returns the parameters of a chen.EstimatorConfig inside C.
func chenEstimator[C any](f func(*C) *chen.EstimatorConfig) []param {
	return []param{
		dur(meta{"interval", "duration", "100ms", srcChen, "nominal heartbeat interval Δ", "Estimator.Interval", "250ms"}, 0, false,
			func(c *C) *time.Duration { return &f(c).Interval }),
		intPlain(meta{"window", "heartbeats", "1000", srcChen, "window size n of arrival offsets", "Estimator.WindowSize", "64"}, 1,
			func(c *C) *int { return &f(c).WindowSize }),
		uintPtr(meta{"restart-jump", "sequence numbers", "100", srcFdkit, "a backwards jump larger than this is a sender restart", "Estimator.RestartJump", "0"},
			func(c *C) **uint64 { return &f(c).RestartJump }),
	}
}

func minSamples[C any](f func(*C) **int) param {
	return intPtr(meta{"min-samples", "samples", "the window size", srcChen + " (full windows)", "warm-up: samples needed before QoS is measured (0: none)", "MinSamples", "0"}, 0, f)
}

func init() {
	define(Family{Name: "fixed", Aliases: []string{"timeout"}, Swept: "timeout",
		Doc: "fixed timeout: τ = T_last + T (Chen, Toueg, Aguilera 2002)"},
		detectorNewFixed,
		func(c detector.FixedConfig, v []float64) qos.Family { return qos.FixedFamily(durations(v)) },
		func(c detector.FixedConfig) float64 {
			return ms(detector.OrDefault(c.Timeout, detector.DefaultTimeout))
		},
		durPtr(meta{"timeout", "duration", "1s", srcFdkit, "timeout T", "Timeout", "0s"}, 0, true,
			func(c *detector.FixedConfig) **time.Duration { return &c.Timeout }),
		uintPtr(meta{"restart-jump", "sequence numbers", "100", srcFdkit, "a backwards jump larger than this is a sender restart", "RestartJump", "7"},
			func(c *detector.FixedConfig) **uint64 { return &c.RestartJump }),
	)

	define(Family{Name: "jacobson", Swept: "k", Doc: "Jacobson/Karels timeout on inter-arrival times (SIGCOMM 1988; RFC 6298)"},
		jacobson.New,
		func(c jacobson.Config, v []float64) qos.Family { return qos.JacobsonFamily(c, v) },
		func(c jacobson.Config) float64 { return detector.OrDefault(c.K, jacobson.DefaultK) },
		floatPtr(meta{"k", "", "4", srcRFC6298, "deviation multiplier K", "K", "0"}, 0, true,
			func(c *jacobson.Config) **float64 { return &c.K }),
		floatPlain(meta{"gain", "", "0.125", srcRFC6298, "gain g of SRTT", "Estimator.Gain", "0.25"}, 0, false,
			func(c *jacobson.Config) *float64 { return &c.Estimator.Gain }),
		floatPlain(meta{"dev-gain", "", "0.25", srcRFC6298, "gain h of RTTVAR", "Estimator.DevGain", "0.5"}, 0, false,
			func(c *jacobson.Config) *float64 { return &c.Estimator.DevGain }),
		enum(meta{"init", "", "first-sample", srcRFC6298, "initial state: first-sample (RFC 6298) or zero", "Estimator.Init", "zero"},
			[]string{"first-sample", "zero"}, func(c *jacobson.Config) *jacobson.Init { return &c.Estimator.Init }),
		durPtr(meta{"initial-timeout", "duration", "1s", srcRFC6298, "TO_init before the first sample", "InitialTimeout", "0s"}, 0, true,
			func(c *jacobson.Config) **time.Duration { return &c.InitialTimeout }),
		dur(meta{"min-timeout", "duration", "0 (none)", srcFdkit, "floor TO_min on the timeout", "MinTimeout", "200ms"}, 0, true,
			func(c *jacobson.Config) *time.Duration { return &c.MinTimeout }),
		dur(meta{"max-timeout", "duration", "0 (none)", srcFdkit, "ceiling TO_max on the timeout", "MaxTimeout", "5s"}, 0, true,
			func(c *jacobson.Config) *time.Duration { return &c.MaxTimeout }),
		boolPlain(meta{"divide-by-gap", "", "false", srcFdkit, "divide an interval by the sequence gap", "DivideBySeqGap", "true"},
			func(c *jacobson.Config) *bool { return &c.DivideBySeqGap }),
		uintPtr(meta{"restart-jump", "sequence numbers", "100", srcFdkit, "a backwards jump larger than this is a sender restart", "RestartJump", "3"},
			func(c *jacobson.Config) **uint64 { return &c.RestartJump }),
	)

	define(Family{Name: "phi-normal", Aliases: []string{"phi", "normal"}, Swept: "threshold",
		Doc: "φ accrual, normal model (Hayashibara et al., SRDS 2004)"},
		phi.NewNormal,
		func(c phi.NormalConfig, v []float64) qos.Family { return qos.PhiNormalFamily(c, v) },
		func(c phi.NormalConfig) float64 { return cmp.Or(c.Threshold, phi.DefaultThreshold) },
		floatPlain(meta{"threshold", "", "8", srcPhi, "threshold Θ on φ", "Threshold", "10"}, 0, false,
			func(c *phi.NormalConfig) *float64 { return &c.Threshold }),
		intPlain(meta{"window", "intervals", "1000", srcPhi, "window size n of inter-arrival times", "WindowSize", "200"}, 1,
			func(c *phi.NormalConfig) *int { return &c.WindowSize }),
		durPtr(meta{"min-std", "duration", "μ/100", srcFdkit, "σ floor: σ_eff = max(σ, min-std); 0 turns it off", "MinStdDev", "0s"}, 0, true,
			func(c *phi.NormalConfig) **time.Duration { return &c.MinStdDev }),
		durPtr(meta{"pause", "duration", "0", srcAkka + " (acceptable-heartbeat-pause)", "acceptable pause added to the mean", "AcceptablePause", "3s"}, 0, true,
			func(c *phi.NormalConfig) **time.Duration { return &c.AcceptablePause }),
		durPtr(meta{"first-estimate", "duration", "1s", srcAkka + " (heartbeat-interval)", "interval assumed before two intervals are known", "BootstrapInterval", "100ms"}, 0, false,
			func(c *phi.NormalConfig) **time.Duration { return &c.BootstrapInterval }),
		intPtr(meta{"min-samples", "intervals", "2", srcFdkit, "warm-up: intervals needed before QoS is measured (0: none)", "MinSamples", "0"}, 0,
			func(c *phi.NormalConfig) **int { return &c.MinSamples }),
		boolPtr(meta{"skip-suspected", "", "true", srcAkka + " (PhiAccrualFailureDetector)", "do not record an interval that ends after τ (outages are not learnt)", "SkipIfSuspected", "false"},
			func(c *phi.NormalConfig) **bool { return &c.SkipIfSuspected }),
		durPtr(meta{"max-interval", "duration", "0 (no cap)", srcCassandra, "intervals longer than this are not recorded", "MaxInterval", "2s"}, 0, true,
			func(c *phi.NormalConfig) **time.Duration { return &c.MaxInterval }),
		intPtr(meta{"relearn-after", "intervals", "10", srcFdkit, "record a run of this many intervals left out, fewer recorded in a row between two (a rate change, not an outage); 0: never", "RelearnAfter", "0"}, 0,
			func(c *phi.NormalConfig) **int { return &c.RelearnAfter }),
		boolPlain(meta{"divide-by-gap", "", "false", srcFdkit, "divide an interval by the sequence gap", "DivideBySeqGap", "true"},
			func(c *phi.NormalConfig) *bool { return &c.DivideBySeqGap }),
	)

	define(Family{Name: "phi-akka", Swept: "threshold", Doc: "φ accrual as in Akka's PhiAccrualFailureDetector (logistic approximation)"},
		phi.NewAkka,
		func(c phi.AkkaConfig, v []float64) qos.Family { return qos.PhiAkkaFamily(c, v) },
		func(c phi.AkkaConfig) float64 { return cmp.Or(c.Threshold, phi.DefaultThreshold) },
		floatPlain(meta{"threshold", "", "8", srcAkka, "threshold Θ on φ", "Threshold", "10"}, 0, false,
			func(c *phi.AkkaConfig) *float64 { return &c.Threshold }),
		intPlain(meta{"window", "intervals", "1000", srcAkka + " (max-sample-size)", "history size", "WindowSize", "200"}, 1,
			func(c *phi.AkkaConfig) *int { return &c.WindowSize }),
		durPtr(meta{"min-std", "duration", "100ms", srcAkka + " (min-std-deviation)", "σ floor; 0 turns it off", "MinStdDev", "0s"}, 0, true,
			func(c *phi.AkkaConfig) **time.Duration { return &c.MinStdDev }),
		durPtr(meta{"pause", "duration", "3s", srcAkka + " (acceptable-heartbeat-pause)", "acceptable pause added to the mean; 0 is none", "AcceptablePause", "0s"}, 0, true,
			func(c *phi.AkkaConfig) **time.Duration { return &c.AcceptablePause }),
		durPtr(meta{"first-estimate", "duration", "1s", srcAkka + " (heartbeat-interval)", "first heartbeat seeds m ± m/4", "BootstrapInterval", "100ms"}, 0, false,
			func(c *phi.AkkaConfig) **time.Duration { return &c.BootstrapInterval }),
		intPtr(meta{"min-samples", "intervals", "0", srcFdkit, "warm-up: real intervals needed before QoS is measured", "MinSamples", "5"}, 0,
			func(c *phi.AkkaConfig) **int { return &c.MinSamples }),
		intPtr(meta{"relearn-after", "intervals", "10", srcFdkit, "record a run of this many intervals left out, fewer recorded in a row between two (a rate change, not an outage); 0: never", "RelearnAfter", "0"}, 0,
			func(c *phi.AkkaConfig) **int { return &c.RelearnAfter }),
	)

	define(Family{Name: "phi-cassandra", Swept: "threshold", Doc: "φ accrual as in Cassandra's FailureDetector (exponential model)"},
		phi.NewCassandra,
		func(c phi.CassandraConfig, v []float64) qos.Family { return qos.PhiCassandraFamily(c, v) },
		func(c phi.CassandraConfig) float64 { return cmp.Or(c.Threshold, phi.DefaultThreshold) },
		floatPlain(meta{"threshold", "", "8", srcCassandra, "threshold Θ on φ (phi_convict_threshold)", "Threshold", "10"}, 0, false,
			func(c *phi.CassandraConfig) *float64 { return &c.Threshold }),
		intPlain(meta{"window", "intervals", "1000", srcCassandra + " (ArrivalWindow)", "window size", "WindowSize", "200"}, 1,
			func(c *phi.CassandraConfig) *int { return &c.WindowSize }),
		durPtr(meta{"initial-interval", "duration", "2s", srcCassandra, "seed interval recorded at the first heartbeat (fd_initial_value_ms); 0: none", "BootstrapInterval", "0s"}, 0, true,
			func(c *phi.CassandraConfig) **time.Duration { return &c.BootstrapInterval }),
		durPtr(meta{"max-interval", "duration", "2s", srcCassandra, "longer intervals are not recorded (fd_max_interval_ms); 0: no cap", "MaxInterval", "0s"}, 0, true,
			func(c *phi.CassandraConfig) **time.Duration { return &c.MaxInterval }),
		intPtr(meta{"min-samples", "intervals", "0", srcFdkit, "warm-up: real intervals needed before QoS is measured", "MinSamples", "5"}, 0,
			func(c *phi.CassandraConfig) **int { return &c.MinSamples }),
		intPtr(meta{"relearn-after", "intervals", "10", srcFdkit, "record a run of this many intervals left out, fewer recorded in a row between two (a rate change, not an outage); 0: never", "RelearnAfter", "0"}, 0,
			func(c *phi.CassandraConfig) **int { return &c.RelearnAfter }),
	)

	define(Family{Name: "chen", Swept: "alpha", Doc: "Chen's NFD-E: τ = EA + α (IEEE TC 2002)"},
		chen.New,
		func(c chen.Config, v []float64) qos.Family { return qos.ChenFamily(c, durations(v)) },
		func(c chen.Config) float64 {
			return ms(detector.OrDefault(c.Margin, cmp.Or(c.Estimator.Interval, chen.DefaultInterval)))
		},
		append(chenEstimator(func(c *chen.Config) *chen.EstimatorConfig { return &c.Estimator }),
			durPtr(meta{"alpha", "duration", "Δ", srcChen, "safety margin α", "Margin", "0s"}, 0, true,
				func(c *chen.Config) **time.Duration { return &c.Margin }),
			minSamples(func(c *chen.Config) **int { return &c.MinSamples }))...,
	)

	define(Family{Name: "bertier", Doc: "Bertier, Marin, Sens: NFD-E with a Jacobson margin (DSN 2002)"},
		bertier.New, nil, nil,
		append(chenEstimator(func(c *bertier.Config) *chen.EstimatorConfig { return &c.Estimator }),
			floatPlain(meta{"gain", "", "0.1", srcBertier, "gain γ", "Gain", "0.2"}, 0, false,
				func(c *bertier.Config) *float64 { return &c.Gain }),
			floatPlain(meta{"beta", "", "1", srcBertier, "weight β of the smoothed error", "Beta", "2"}, 0, false,
				func(c *bertier.Config) *float64 { return &c.Beta }),
			floatPlain(meta{"phi", "", "4", srcBertier, "weight φ of the mean deviation", "Phi", "2"}, 0, false,
				func(c *bertier.Config) *float64 { return &c.Phi }),
			minSamples(func(c *bertier.Config) **int { return &c.MinSamples }),
			enum(meta{"loss-rule", "", "vs-received", srcFdkit, "error after a loss: vs-received or vs-next", "LossRule", "vs-next"},
				[]string{"vs-received", "vs-next"}, func(c *bertier.Config) *bertier.LossRule { return &c.LossRule }))...,
	)

	define(Family{Name: "sfd", Swept: "sm1", Doc: "SFD, self-tuning safety margin (Xiong et al., IPDPS 2012)"},
		sfd.New,
		func(c sfd.Config, v []float64) qos.Family { return qos.SFDFamily(c, durations(v)) },
		func(c sfd.Config) float64 {
			return ms(detector.OrDefault(c.InitialMargin, max(cmp.Or(c.Estimator.Interval, chen.DefaultInterval), c.MinMargin)))
		},
		append(chenEstimator(func(c *sfd.Config) *chen.EstimatorConfig { return &c.Estimator }),
			minSamples(func(c *sfd.Config) **int { return &c.MinSamples }),
			durPtr(meta{"sm1", "duration", "max(Δ, min-margin)", srcSFD, "initial safety margin SM_1", "InitialMargin", "0s"}, 0, true,
				func(c *sfd.Config) **time.Duration { return &c.InitialMargin }),
			dur(meta{"step", "duration", "Δ/10", srcSFD, "adjustment rate β", "Step", "5ms"}, 0, false,
				func(c *sfd.Config) *time.Duration { return &c.Step }),
			dur(meta{"min-margin", "duration", "0", srcFdkit, "floor SM_min on the margin", "MinMargin", "10ms"}, 0, true,
				func(c *sfd.Config) *time.Duration { return &c.MinMargin }),
			intPlain(meta{"slot", "heartbeats", "100", srcSFD, "slot length between adjustments", "SlotHeartbeats", "50"}, 1,
				func(c *sfd.Config) *int { return &c.SlotHeartbeats }),
			dur(meta{"td-max", "duration", "none", srcSFD, "target TD_U", "Targets.MaxTD", "1s"}, 0, true,
				func(c *sfd.Config) *time.Duration { return &c.Targets.MaxTD }),
			floatPlain(meta{"mr-max", "1/s", "none", srcSFD, "target MR_U (mistakes per second)", "Targets.MaxMistakesPerSecond", "0.01"}, 0, true,
				func(c *sfd.Config) *float64 { return &c.Targets.MaxMistakesPerSecond }),
			floatPlain(meta{"qap-min", "", "none", srcSFD, "target QAP_L", "Targets.MinQAP", "0.999"}, 0, true,
				func(c *sfd.Config) *float64 { return &c.Targets.MinQAP }),
			boolPlain(meta{"send-time", "", "false", srcFdkit, "measure TD from send times (synchronized clocks)", "UseSendTime", "true"},
				func(c *sfd.Config) *bool { return &c.UseSendTime }),
			dur(meta{"one-way-delay", "duration", "0", srcFdkit, "d̄ added to the arrival-based TD", "OneWayDelay", "20ms"}, 0, true,
				func(c *sfd.Config) *time.Duration { return &c.OneWayDelay }))...,
	)
}

func detectorNewFixed(c detector.FixedConfig) (detector.Detector, error) { return detector.NewFixed(c) }

// durations converts qos values in milliseconds to durations.
func durations(v []float64) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x * float64(time.Millisecond))
	}
	return out
}

// The three families of later papers (2W-FD, Satzger, κ) are defined after
// the first eight so that tables keep their order.
func init() {
	define(Family{Name: "2w-fd", Aliases: []string{"2wfd"}, Swept: "alpha", Doc: "2W-FD: the later of two NFD-E expected arrivals plus α (" + src2W + ")"},
		twowfd.New,
		func(c twowfd.Config, v []float64) qos.Family { return qos.TwoWFDFamily(c, durations(v)) },
		func(c twowfd.Config) float64 {
			return ms(detector.OrDefault(c.Margin, cmp.Or(c.Interval, chen.DefaultInterval)))
		},
		dur(meta{"interval", "duration", "100ms", src2W, "nominal heartbeat interval Δ", "Interval", "250ms"}, 0, false,
			func(c *twowfd.Config) *time.Duration { return &c.Interval }),
		intPlain(meta{"short-window", "heartbeats", "1", src2W, "short window n1", "ShortWindowSize", "2"}, 1,
			func(c *twowfd.Config) *int { return &c.ShortWindowSize }),
		intPlain(meta{"window", "heartbeats", "1000", src2W, "long window n2", "LongWindowSize", "64"}, 1,
			func(c *twowfd.Config) *int { return &c.LongWindowSize }),
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
		func(c satzger.Config) float64 { return cmp.Or(c.Threshold, satzger.DefaultThreshold) },
		atMost(floatPlain(meta{"threshold", "", "0.99", srcSatzger + "; default 0.99: fdkit (the ports use 0.5)", "threshold θ on the level, in (0, 1]", "Threshold", "0.9"}, 0, false,
			func(c *satzger.Config) *float64 { return &c.Threshold }), 1),
		intPlain(meta{"window", "intervals", "1000", srcSatzger, "window size N", "WindowSize", "200"}, 1,
			func(c *satzger.Config) *int { return &c.WindowSize }),
		floatPlain(meta{"scale", "", "0.9", "the Akka port's scaling factor (the paper's formula has c = 1)", "scale c on the elapsed time", "Scale", "1"}, 0, false,
			func(c *satzger.Config) *float64 { return &c.Scale }),
		durPtr(meta{"first-estimate", "duration", "1s", srcFdkit, "sample assumed while the window is empty", "BootstrapInterval", "100ms"}, 0, false,
			func(c *satzger.Config) **time.Duration { return &c.BootstrapInterval }),
		intPtr(meta{"min-samples", "intervals", "the window size", srcSatzger, "warm-up: intervals needed before QoS is measured (0: none)", "MinSamples", "0"}, 0,
			func(c *satzger.Config) **int { return &c.MinSamples }),
		uintPtr(meta{"restart-jump", "sequence numbers", "100", srcFdkit, "a backwards jump larger than this is a sender restart", "RestartJump", "0"},
			func(c *satzger.Config) **uint64 { return &c.RestartJump }),
	)

	define(Family{Name: "kappa", Aliases: []string{"κ", "κ-fd", "kappa-fd"}, Swept: "threshold", Doc: "κ-FD: accrual over the expected arrivals of missed heartbeats (" + srcKappa + ")"},
		kappa.New,
		func(c kappa.Config, v []float64) qos.Family { return qos.KappaFamily(c, v) },
		func(c kappa.Config) float64 { return cmp.Or(c.Threshold, kappa.DefaultThreshold) },
		append(chenEstimator(func(c *kappa.Config) *chen.EstimatorConfig { return &c.Estimator }),
			floatPlain(meta{"threshold", "", "2.5", srcKappa + "; default 2.5: fdkit", "threshold K on κ", "Threshold", "4"}, 0, false,
				func(c *kappa.Config) *float64 { return &c.Threshold }),
			enum(meta{"contribution", "", "normal", "fdkit (the paper leaves the function open; step is NFD-E)", "contribution of a missed heartbeat: normal or step", "Contribution", "step"},
				[]string{"normal", "step"}, func(c *kappa.Config) *kappa.Contribution { return &c.Contribution }),
			durPtr(meta{"min-std", "duration", "Δ/100", srcFdkit, "σ floor of the normal contribution; 0: 1 ns", "MinStdDev", "0s"}, 0, true,
				func(c *kappa.Config) **time.Duration { return &c.MinStdDev }),
			minSamples(func(c *kappa.Config) **int { return &c.MinSamples }))...,
	)
}
