package spec

import (
	"cmp"
	"math"
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
		dur(Param{Name: "interval", Unit: "duration", Default: "100ms", Source: srcChen, Doc: "nominal heartbeat interval Δ", Field: "Estimator.Interval", Sample: "250ms", MinOpen: true},
			func(c *C) *time.Duration { return &f(c).Interval }),
		intPlain(Param{Name: "window", Symbol: "n", Unit: "heartbeats", Default: "1000", Source: srcChen, Doc: "window size n of arrival offsets", Field: "Estimator.WindowSize", Sample: "64", Min: 1},
			func(c *C) *int { return &f(c).WindowSize }),
		uintPtr(Param{Name: RestartJump, Unit: "sequence numbers", Default: "100", Source: srcFdkit, Doc: "a backwards jump larger than this is a sender restart", Field: "Estimator.RestartJump", Sample: "0"},
			func(c *C) **uint64 { return &f(c).RestartJump }),
	}
}

func minSamples[C any](f func(*C) **int) param {
	return intPtr(Param{Name: "min-samples", Unit: "samples", Default: "the window size", Source: srcChen + " (full windows)", Doc: "warm-up: samples needed before QoS is measured (0: none)", Field: "MinSamples", Sample: "0"}, f)
}

// The registry: one row per algorithm, in table order.
func init() {
	define(fixedRow)
	define(jacobsonRow)
	define(phiNormalRow)
	define(phiAkkaRow)
	define(phiCassandraRow)
	define(chenRow)
	define(bertierRow)
	define(sfdRow)
	define(twoWFDRow)
	define(satzgerRow)
	define(kappaRow)
}

// fixedRow is the row of fixed timeout.
var fixedRow = Row[detector.FixedConfig]{
	Algorithm: Algorithm{Name: "fixed", Aliases: []string{"timeout"}, Swept: "timeout",
		Doc: "fixed timeout: τ = T_last + T (Chen, Toueg, Aguilera 2002)"},
	New:   build(detector.NewFixed),
	Range: SweepRange{Lo: 1, Hi: 30, PerInterval: true, Log: true},
	ForStream: func(st Stream) detector.FixedConfig {
		return detector.FixedConfig{Timeout: new(cmp.Or(st.Timeout, 10*st.Interval))}
	},
	Brief: []string{"timeout"},
	Sweep: func(c detector.FixedConfig, v []float64) qos.Family { return qos.FixedFamilyWith(c, durations(v)) },
	Point: func(c detector.FixedConfig) float64 {
		return ms(detector.OrDefault(c.Timeout, detector.DefaultTimeout))
	},
	Params: []param{
		durPtr(Param{Name: "timeout", Symbol: "T", Unit: "duration", Default: "1s", Source: srcFdkit, Doc: "timeout T", Field: "Timeout", Sample: "250ms", MinOpen: true},
			func(c *detector.FixedConfig) **time.Duration { return &c.Timeout }),
		uintPtr(Param{Name: RestartJump, Unit: "sequence numbers", Default: "100", Source: srcFdkit, Doc: "a backwards jump larger than this is a sender restart", Field: "RestartJump", Sample: "7"},
			func(c *detector.FixedConfig) **uint64 { return &c.RestartJump }),
	},
}

// jacobsonRow is the row of Jacobson/Karels' timeout.
var jacobsonRow = Row[jacobson.Config]{
	Algorithm: Algorithm{Name: "jacobson", Aliases: []string{"jk"}, Swept: "k", Doc: "Jacobson/Karels timeout on inter-arrival times (SIGCOMM 1988; RFC 6298)"},
	New:       build(jacobson.New),
	Range:     SweepRange{Lo: 0.5, Hi: 64, Log: true},
	Brief:     []string{"k"},
	Sweep:     func(c jacobson.Config, v []float64) qos.Family { return qos.JacobsonFamily(c, v) },
	Point:     func(c jacobson.Config) float64 { return detector.OrDefault(c.K, jacobson.DefaultK) },
	Params: []param{
		floatPtr(Param{Name: "k", Symbol: "K", Default: "4", Source: srcRFC6298, Doc: "deviation multiplier K", Field: "K", Sample: "0"},
			func(c *jacobson.Config) **float64 { return &c.K }),
		floatPlain(Param{Name: "gain", Default: "0.125", Source: srcRFC6298, Doc: "gain g of SRTT", Field: "Estimator.Gain", Sample: "0.25", MinOpen: true},
			func(c *jacobson.Config) *float64 { return &c.Estimator.Gain }),
		floatPlain(Param{Name: "dev-gain", Default: "0.25", Source: srcRFC6298, Doc: "gain h of RTTVAR", Field: "Estimator.DevGain", Sample: "0.5", MinOpen: true},
			func(c *jacobson.Config) *float64 { return &c.Estimator.DevGain }),
		enum(Param{Name: "init", Default: "first-sample", Source: srcRFC6298, Doc: "initial state: first-sample (RFC 6298) or zero", Field: "Estimator.Init", Sample: "zero", Choices: []string{"first-sample", "zero"}},
			func(c *jacobson.Config) *jacobson.Init { return &c.Estimator.Init }),
		durPtr(Param{Name: "initial-timeout", Unit: "duration", Default: "1s", Source: srcRFC6298, Doc: "TO_init before the first sample", Field: "InitialTimeout", Sample: "0s"},
			func(c *jacobson.Config) **time.Duration { return &c.InitialTimeout }),
		dur(Param{Name: "min-timeout", Unit: "duration", Default: "0 (none)", Source: srcFdkit, Doc: "floor TO_min on the timeout", Field: "MinTimeout", Sample: "200ms"},
			func(c *jacobson.Config) *time.Duration { return &c.MinTimeout }),
		dur(Param{Name: "max-timeout", Unit: "duration", Default: "0 (none)", Source: srcFdkit, Doc: "ceiling TO_max on the timeout", Field: "MaxTimeout", Sample: "5s"},
			func(c *jacobson.Config) *time.Duration { return &c.MaxTimeout }),
		boolPlain(Param{Name: "divide-by-gap", Default: "false", Source: srcFdkit, Doc: "divide an interval by the sequence gap", Field: "DivideBySeqGap", Sample: "true"},
			func(c *jacobson.Config) *bool { return &c.DivideBySeqGap }),
		uintPtr(Param{Name: RestartJump, Unit: "sequence numbers", Default: "100", Source: srcFdkit, Doc: "a backwards jump larger than this is a sender restart", Field: "RestartJump", Sample: "3"},
			func(c *jacobson.Config) **uint64 { return &c.RestartJump }),
	},
}

// phiNormalRow is the row of φ accrual, normal model.
var phiNormalRow = Row[phi.NormalConfig]{
	Algorithm: Algorithm{Name: "phi-normal", Aliases: []string{"phi", "normal"}, Swept: "threshold", Outages: SkipSuspected,
		Doc: "φ accrual, normal model (Hayashibara et al., SRDS 2004)"},
	New:       build(phi.NewNormal),
	Range:     SweepRange{Lo: 0.5, Hi: 16},
	ForStream: func(st Stream) phi.NormalConfig { return phi.NormalConfig{WindowSize: st.Window} },
	Brief:     []string{"threshold", "window", "min-std"},
	Sweep:     func(c phi.NormalConfig, v []float64) qos.Family { return qos.PhiNormalFamily(c, v) },
	Point:     func(c phi.NormalConfig) float64 { return cmp.Or(c.Threshold, phi.DefaultThreshold) },
	Params: []param{
		floatPlain(Param{Name: "threshold", Symbol: "Φ", Default: "8", Source: srcPhi, Doc: "threshold Θ on φ", Field: "Threshold", Sample: "10", MinOpen: true},
			func(c *phi.NormalConfig) *float64 { return &c.Threshold }),
		intPlain(Param{Name: "window", Symbol: "n", Unit: "intervals", Default: "1000", Source: srcPhi, Doc: "window size n of inter-arrival times", Field: "WindowSize", Sample: "200", Min: 1},
			func(c *phi.NormalConfig) *int { return &c.WindowSize }),
		durPtr(Param{Name: "min-std", Symbol: "minσ", Unit: "duration", Default: "μ/100", Source: srcFdkit, Doc: "σ floor: σ_eff = max(σ, min-std); 0 turns it off", Field: "MinStdDev", Sample: "0s"},
			func(c *phi.NormalConfig) **time.Duration { return &c.MinStdDev }),
		durPtr(Param{Name: "pause", Unit: "duration", Default: "0", Source: srcAkka + " (acceptable-heartbeat-pause)", Doc: "acceptable pause added to the mean", Field: "AcceptablePause", Sample: "3s"},
			func(c *phi.NormalConfig) **time.Duration { return &c.AcceptablePause }),
		durPtr(Param{Name: "bootstrap-interval", Aliases: []string{"first-estimate"}, Unit: "duration", Default: "1s", Source: srcAkka + " (heartbeat-interval)", Doc: "interval assumed before two intervals are known", Field: "BootstrapInterval", Sample: "100ms", MinOpen: true},
			func(c *phi.NormalConfig) **time.Duration { return &c.BootstrapInterval }),
		intPtr(Param{Name: "min-samples", Unit: "intervals", Default: "2", Source: srcFdkit, Doc: "warm-up: intervals needed before QoS is measured (0: none)", Field: "MinSamples", Sample: "0"},
			func(c *phi.NormalConfig) **int { return &c.MinSamples }),
		boolPtr(Param{Name: "skip-suspected", Default: "true", Source: srcAkka + " (PhiAccrualFailureDetector)", Doc: "do not record an interval that ends after τ (outages are not learnt)", Field: "SkipIfSuspected", Sample: "false"},
			func(c *phi.NormalConfig) **bool { return &c.SkipIfSuspected }),
		durPtr(Param{Name: "max-interval", Unit: "duration", Default: "0 (no cap)", Source: srcCassandra, Doc: "intervals longer than this are not recorded", Field: "MaxInterval", Sample: "2s"},
			func(c *phi.NormalConfig) **time.Duration { return &c.MaxInterval }),
		intPtr(Param{Name: "relearn-after", Unit: "intervals", Default: "10", Source: srcFdkit, Doc: "record a run of this many intervals left out, fewer recorded in a row between two (a rate change, not an outage); 0: never", Field: "RelearnAfter", Sample: "0"},
			func(c *phi.NormalConfig) **int { return &c.RelearnAfter }),
		boolPlain(Param{Name: "divide-by-gap", Default: "false", Source: srcFdkit, Doc: "divide an interval by the sequence gap", Field: "DivideBySeqGap", Sample: "true"},
			func(c *phi.NormalConfig) *bool { return &c.DivideBySeqGap }),
	},
}

// phiAkkaRow is the row of Akka's φ.
var phiAkkaRow = Row[phi.AkkaConfig]{
	Algorithm: Algorithm{Name: "phi-akka", Swept: "threshold", Outages: SkipSuspected, Doc: "φ accrual as in Akka's PhiAccrualFailureDetector (logistic approximation)"},
	New:       build(phi.NewAkka),
	Range:     SweepRange{Lo: 0.5, Hi: 16},
	// Akka's time settings are for 1 s heartbeats: scaled by Δ/1s.
	ForStream: func(st Stream) phi.AkkaConfig {
		return phi.AkkaConfig{
			WindowSize:        st.Window,
			MinStdDev:         new(st.scale(phi.DefaultAkkaMinStdDev)),
			AcceptablePause:   new(st.scale(phi.DefaultAkkaAcceptablePause)),
			BootstrapInterval: new(max(st.scale(phi.DefaultAkkaBootstrapInterval), 1)),
		}
	},
	Brief: []string{"threshold", "pause", "min-std"},
	Sweep: func(c phi.AkkaConfig, v []float64) qos.Family { return qos.PhiAkkaFamily(c, v) },
	Point: func(c phi.AkkaConfig) float64 { return cmp.Or(c.Threshold, phi.DefaultThreshold) },
	Params: []param{
		floatPlain(Param{Name: "threshold", Symbol: "Φ", Default: "8", Source: srcAkka, Doc: "threshold Θ on φ", Field: "Threshold", Sample: "10", MinOpen: true},
			func(c *phi.AkkaConfig) *float64 { return &c.Threshold }),
		intPlain(Param{Name: "window", Symbol: "n", Unit: "intervals", Default: "1000", Source: srcAkka + " (max-sample-size)", Doc: "history size", Field: "WindowSize", Sample: "200", Min: 1},
			func(c *phi.AkkaConfig) *int { return &c.WindowSize }),
		durPtr(Param{Name: "min-std", Symbol: "minσ", Scaled: true, Unit: "duration", Default: "100ms", Source: srcAkka + " (min-std-deviation)", Doc: "σ floor; 0 turns it off", Field: "MinStdDev", Sample: "0s"},
			func(c *phi.AkkaConfig) **time.Duration { return &c.MinStdDev }),
		durPtr(Param{Name: "pause", Scaled: true, Unit: "duration", Default: "3s", Source: srcAkka + " (acceptable-heartbeat-pause)", Doc: "acceptable pause added to the mean; 0 is none", Field: "AcceptablePause", Sample: "0s"},
			func(c *phi.AkkaConfig) **time.Duration { return &c.AcceptablePause }),
		durPtr(Param{Name: "bootstrap-interval", Aliases: []string{"first-estimate"}, Scaled: true, Unit: "duration", Default: "1s", Source: srcAkka + " (heartbeat-interval)", Doc: "first heartbeat seeds m ± m/4", Field: "BootstrapInterval", Sample: "100ms", MinOpen: true},
			func(c *phi.AkkaConfig) **time.Duration { return &c.BootstrapInterval }),
		intPtr(Param{Name: "min-samples", Unit: "intervals", Default: "0", Source: srcFdkit, Doc: "warm-up: real intervals needed before QoS is measured", Field: "MinSamples", Sample: "5"},
			func(c *phi.AkkaConfig) **int { return &c.MinSamples }),
		intPtr(Param{Name: "relearn-after", Unit: "intervals", Default: "10", Source: srcFdkit, Doc: "record a run of this many intervals left out, fewer recorded in a row between two (a rate change, not an outage); 0: never", Field: "RelearnAfter", Sample: "0"},
			func(c *phi.AkkaConfig) **int { return &c.RelearnAfter }),
	},
}

// phiCassandraRow is the row of Cassandra's φ.
var phiCassandraRow = Row[phi.CassandraConfig]{
	Algorithm: Algorithm{Name: "phi-cassandra", Swept: "threshold", Outages: SkipAboveMax, Doc: "φ accrual as in Cassandra's FailureDetector (exponential model)"},
	New:       build(phi.NewCassandra),
	Range:     SweepRange{Lo: 0.25, Hi: 16, Log: true},
	// Twice the gossip interval Δ, as Cassandra's 2 s are for its 1 s
	// gossip.
	ForStream: func(st Stream) phi.CassandraConfig {
		return phi.CassandraConfig{WindowSize: st.Window, BootstrapInterval: new(2 * st.Interval), MaxInterval: new(2 * st.Interval)}
	},
	Brief: []string{"threshold", "max-interval"},
	Sweep: func(c phi.CassandraConfig, v []float64) qos.Family { return qos.PhiCassandraFamily(c, v) },
	Point: func(c phi.CassandraConfig) float64 { return cmp.Or(c.Threshold, phi.DefaultThreshold) },
	Params: []param{
		floatPlain(Param{Name: "threshold", Symbol: "Φ", Default: "8", Source: srcCassandra, Doc: "threshold Θ on φ (phi_convict_threshold)", Field: "Threshold", Sample: "10", MinOpen: true},
			func(c *phi.CassandraConfig) *float64 { return &c.Threshold }),
		intPlain(Param{Name: "window", Symbol: "n", Unit: "intervals", Default: "1000", Source: srcCassandra + " (ArrivalWindow)", Doc: "window size", Field: "WindowSize", Sample: "200", Min: 1},
			func(c *phi.CassandraConfig) *int { return &c.WindowSize }),
		durPtr(Param{Name: "bootstrap-interval", Aliases: []string{"initial-interval"}, Scaled: true, Unit: "duration", Default: "2s", Source: srcCassandra, Doc: "seed interval recorded at the first heartbeat (fd_initial_value_ms); 0: none", Field: "BootstrapInterval", Sample: "0s"},
			func(c *phi.CassandraConfig) **time.Duration { return &c.BootstrapInterval }),
		durPtr(Param{Name: "max-interval", Symbol: "cap", Scaled: true, Unit: "duration", Default: "2s", Source: srcCassandra, Doc: "longer intervals are not recorded (fd_max_interval_ms); 0: no cap", Field: "MaxInterval", Sample: "0s"},
			func(c *phi.CassandraConfig) **time.Duration { return &c.MaxInterval }),
		intPtr(Param{Name: "min-samples", Unit: "intervals", Default: "0", Source: srcFdkit, Doc: "warm-up: real intervals needed before QoS is measured", Field: "MinSamples", Sample: "5"},
			func(c *phi.CassandraConfig) **int { return &c.MinSamples }),
		intPtr(Param{Name: "relearn-after", Unit: "intervals", Default: "10", Source: srcFdkit, Doc: "record a run of this many intervals left out, fewer recorded in a row between two (a rate change, not an outage); 0: never", Field: "RelearnAfter", Sample: "0"},
			func(c *phi.CassandraConfig) **int { return &c.RelearnAfter }),
	},
}

// chenRow is the row of Chen's NFD-E.
var chenRow = Row[chen.Config]{
	Algorithm: Algorithm{Name: "chen", Aliases: []string{"nfd-e"}, Swept: "alpha", Doc: "Chen's NFD-E: τ = EA + α (IEEE TC 2002)"},
	New:       build(chen.New),
	Range:     SweepRange{Lo: 0.01, Hi: 20, PerInterval: true, Log: true},
	ForStream: func(st Stream) chen.Config { return chen.Config{Estimator: st.estimator()} },
	Brief:     []string{"alpha", "window"},
	Sweep:     func(c chen.Config, v []float64) qos.Family { return qos.ChenFamily(c, durations(v)) },
	Point: func(c chen.Config) float64 {
		return ms(detector.OrDefault(c.Margin, cmp.Or(c.Estimator.Interval, chen.DefaultInterval)))
	},
	Params: append(chenEstimator(func(c *chen.Config) *chen.EstimatorConfig { return &c.Estimator }),
		durPtr(Param{Name: "alpha", Symbol: "α", Unit: "duration", Default: "Δ", Source: srcChen, Doc: "safety margin α", Field: "Margin", Sample: "0s"},
			func(c *chen.Config) **time.Duration { return &c.Margin }),
		minSamples(func(c *chen.Config) **int { return &c.MinSamples })),
}

// bertierRow is the row of Bertier's detector.
var bertierRow = Row[bertier.Config]{
	Algorithm: Algorithm{Name: "bertier", Doc: "Bertier, Marin, Sens: NFD-E with a Jacobson margin (DSN 2002)"},
	New:       build(bertier.New),
	ForStream: func(st Stream) bertier.Config { return bertier.Config{Estimator: st.estimator()} },
	Brief:     []string{"gain", "beta", "phi"},
	Params: append(chenEstimator(func(c *bertier.Config) *chen.EstimatorConfig { return &c.Estimator }),
		floatPlain(Param{Name: "gain", Symbol: "γ", Default: "0.1", Source: srcBertier, Doc: "gain γ", Field: "Gain", Sample: "0.2", MinOpen: true},
			func(c *bertier.Config) *float64 { return &c.Gain }),
		floatPlain(Param{Name: "beta", Symbol: "β", Default: "1", Source: srcBertier, Doc: "weight β of the smoothed error", Field: "Beta", Sample: "2", MinOpen: true},
			func(c *bertier.Config) *float64 { return &c.Beta }),
		floatPlain(Param{Name: "phi", Symbol: "φ", Default: "4", Source: srcBertier, Doc: "weight φ of the mean deviation", Field: "Phi", Sample: "2", MinOpen: true},
			func(c *bertier.Config) *float64 { return &c.Phi }),
		minSamples(func(c *bertier.Config) **int { return &c.MinSamples }),
		enum(Param{Name: "loss-rule", Default: "vs-received", Source: srcFdkit, Doc: "error after a loss: vs-received or vs-next", Field: "LossRule", Sample: "vs-next", Choices: []string{"vs-received", "vs-next"}},
			func(c *bertier.Config) *bertier.LossRule { return &c.LossRule })),
}

// sfdRow is the row of SFD.
var sfdRow = Row[sfd.Config]{
	Algorithm: Algorithm{Name: "sfd", Swept: "sm1", UsesTargets: true, Doc: "SFD, self-tuning safety margin (Xiong et al., IPDPS 2012)"},
	New:       build(sfd.New),
	Range:     SweepRange{Lo: 0.01, Hi: 20, PerInterval: true, Log: true},
	ForStream: sfdForStream,
	Brief:     []string{"sm1", "step"},
	Sweep:     func(c sfd.Config, v []float64) qos.Family { return qos.SFDFamily(c, durations(v)) },
	Point: func(c sfd.Config) float64 {
		return ms(detector.OrDefault(c.InitialMargin, max(cmp.Or(c.Estimator.Interval, chen.DefaultInterval), c.MinMargin)))
	},
	Params: append(chenEstimator(func(c *sfd.Config) *chen.EstimatorConfig { return &c.Estimator }),
		minSamples(func(c *sfd.Config) **int { return &c.MinSamples }),
		durPtr(Param{Name: "sm1", Symbol: "SM1", Unit: "duration", Default: "max(Δ, min-margin)", Source: srcSFD, Doc: "initial safety margin SM_1", Field: "InitialMargin", Sample: "0s"},
			func(c *sfd.Config) **time.Duration { return &c.InitialMargin }),
		dur(Param{Name: "step", Aliases: []string{"beta"}, Symbol: "β", Unit: "duration", Default: "Δ/10", Source: srcSFD, Doc: "adjustment rate β", Field: "Step", Sample: "5ms", MinOpen: true},
			func(c *sfd.Config) *time.Duration { return &c.Step }),
		dur(Param{Name: "min-margin", Unit: "duration", Default: "0", Source: srcFdkit, Doc: "floor SM_min on the margin", Field: "MinMargin", Sample: "10ms"},
			func(c *sfd.Config) *time.Duration { return &c.MinMargin }),
		intPlain(Param{Name: "slot", Unit: "heartbeats", Default: "100", Source: srcSFD, Doc: "slot length between adjustments", Field: "SlotHeartbeats", Sample: "50", Min: 1},
			func(c *sfd.Config) *int { return &c.SlotHeartbeats }),
		dur(Param{Name: "td-max", Unit: "duration", Default: "none", Source: srcSFD, Doc: "target TD_U", Field: "Targets.MaxTD", Sample: "1s"},
			func(c *sfd.Config) *time.Duration { return &c.Targets.MaxTD }),
		floatPlain(Param{Name: "mr-max", Unit: "1/s", Default: "none", Source: srcSFD, Doc: "target MR_U (mistakes per second)", Field: "Targets.MaxMistakesPerSecond", Sample: "0.01"},
			func(c *sfd.Config) *float64 { return &c.Targets.MaxMistakesPerSecond }),
		floatPlain(Param{Name: "qap-min", Default: "none", Source: srcSFD, Doc: "target QAP_L", Field: "Targets.MinQAP", Sample: "0.999"},
			func(c *sfd.Config) *float64 { return &c.Targets.MinQAP }),
		boolPlain(Param{Name: "send-time", Default: "false", Source: srcFdkit, Doc: "measure TD from send times (synchronized clocks)", Field: "UseSendTime", Sample: "true"},
			func(c *sfd.Config) *bool { return &c.UseSendTime }),
		dur(Param{Name: "one-way-delay", Unit: "duration", Default: "0", Source: srcFdkit, Doc: "d̄ added to the arrival-based TD", Field: "OneWayDelay", Sample: "20ms"},
			func(c *sfd.Config) *time.Duration { return &c.OneWayDelay })),
}

// twoWFDRow is the row of 2W-FD.
var twoWFDRow = Row[twowfd.Config]{
	Algorithm: Algorithm{Name: "2w-fd", Aliases: []string{"2wfd", "twowfd"}, Swept: "alpha", Doc: "2W-FD: the later of two NFD-E expected arrivals plus α (" + src2W + ")"},
	New:       build(twowfd.New),
	Range:     SweepRange{Lo: 0.01, Hi: 20, PerInterval: true, Log: true},
	ForStream: func(st Stream) twowfd.Config {
		return twowfd.Config{Interval: st.Interval, LongWindowSize: st.Window}
	},
	Brief: []string{"alpha", "short-window", "window"},
	Sweep: func(c twowfd.Config, v []float64) qos.Family { return qos.TwoWFDFamily(c, durations(v)) },
	Point: func(c twowfd.Config) float64 {
		return ms(detector.OrDefault(c.Margin, cmp.Or(c.Interval, chen.DefaultInterval)))
	},
	Params: []param{
		dur(Param{Name: "interval", Unit: "duration", Default: "100ms", Source: src2W, Doc: "nominal heartbeat interval Δ", Field: "Interval", Sample: "250ms", MinOpen: true},
			func(c *twowfd.Config) *time.Duration { return &c.Interval }),
		intPlain(Param{Name: "short-window", Symbol: "n1", Unit: "heartbeats", Default: "1", Source: src2W, Doc: "short window n1", Field: "ShortWindowSize", Sample: "2", Min: 1},
			func(c *twowfd.Config) *int { return &c.ShortWindowSize }),
		intPlain(Param{Name: "window", Symbol: "n2", Unit: "heartbeats", Default: "1000", Source: src2W, Doc: "long window n2", Field: "LongWindowSize", Sample: "64", Min: 1},
			func(c *twowfd.Config) *int { return &c.LongWindowSize }),
		durPtr(Param{Name: "alpha", Symbol: "α", Unit: "duration", Default: "Δ", Source: src2W, Doc: "safety margin α", Field: "Margin", Sample: "0s"},
			func(c *twowfd.Config) **time.Duration { return &c.Margin }),
		intPtr(Param{Name: "min-samples", Unit: "samples", Default: "the long window", Source: srcChen + " (full windows)", Doc: "warm-up: samples needed before QoS is measured (0: none)", Field: "MinSamples", Sample: "0"},
			func(c *twowfd.Config) **int { return &c.MinSamples }),
		uintPtr(Param{Name: RestartJump, Unit: "sequence numbers", Default: "100", Source: srcFdkit, Doc: "a backwards jump larger than this is a sender restart", Field: "RestartJump", Sample: "0"},
			func(c *twowfd.Config) **uint64 { return &c.RestartJump }),
	},
}

// satzgerRow is the row of Satzger's detector.
var satzgerRow = Row[satzger.Config]{
	Algorithm: Algorithm{Name: "satzger", Swept: "threshold", Doc: "Satzger et al.'s accrual detector on the empirical distribution (" + srcSatzger + ")"},
	New:       build(satzger.New),
	Range:     SweepRange{Lo: 0.5, Hi: 1},
	// The package's 1 s bootstrap interval is for 1 s heartbeats: Δ.
	ForStream: func(st Stream) satzger.Config {
		return satzger.Config{WindowSize: st.Window, BootstrapInterval: new(st.Interval)}
	},
	Brief: []string{"threshold", "scale", "window"},
	Sweep: func(c satzger.Config, v []float64) qos.Family { return qos.SatzgerFamily(c, v) },
	Point: func(c satzger.Config) float64 { return cmp.Or(c.Threshold, satzger.DefaultThreshold) },
	Params: []param{
		floatPlain(Param{Name: "threshold", Symbol: "θ", Default: "0.99", Source: srcSatzger + "; default 0.99: fdkit (the ports use 0.5)", Doc: "threshold θ on the level, in (0, 1]", Field: "Threshold", Sample: "0.9", MinOpen: true, Max: 1},
			func(c *satzger.Config) *float64 { return &c.Threshold }),
		intPlain(Param{Name: "window", Symbol: "n", Unit: "intervals", Default: "1000", Source: srcSatzger, Doc: "window size N", Field: "WindowSize", Sample: "200", Min: 1},
			func(c *satzger.Config) *int { return &c.WindowSize }),
		floatPlain(Param{Name: "scale", Symbol: "c", Default: "0.9", Source: "the Akka port's scaling factor (the paper's formula has c = 1)", Doc: "scale c on the elapsed time", Field: "Scale", Sample: "1", MinOpen: true},
			func(c *satzger.Config) *float64 { return &c.Scale }),
		durPtr(Param{Name: "bootstrap-interval", Aliases: []string{"first-estimate"}, Unit: "duration", Default: "1s", Source: srcFdkit, Doc: "sample assumed while the window is empty", Field: "BootstrapInterval", Sample: "100ms", MinOpen: true},
			func(c *satzger.Config) **time.Duration { return &c.BootstrapInterval }),
		intPtr(Param{Name: "min-samples", Unit: "intervals", Default: "the window size", Source: srcSatzger, Doc: "warm-up: intervals needed before QoS is measured (0: none)", Field: "MinSamples", Sample: "0"},
			func(c *satzger.Config) **int { return &c.MinSamples }),
		uintPtr(Param{Name: RestartJump, Unit: "sequence numbers", Default: "100", Source: srcFdkit, Doc: "a backwards jump larger than this is a sender restart", Field: "RestartJump", Sample: "0"},
			func(c *satzger.Config) **uint64 { return &c.RestartJump }),
	},
}

// kappaRow is the row of κ-FD.
var kappaRow = Row[kappa.Config]{
	Algorithm: Algorithm{Name: "kappa", Aliases: []string{"κ", "κ-fd", "kappa-fd"}, Swept: "threshold", Doc: "κ-FD: accrual over the expected arrivals of missed heartbeats (" + srcKappa + ")"},
	New:       build(kappa.New),
	Range:     SweepRange{Lo: 0.5, Hi: 16, Log: true},
	ForStream: func(st Stream) kappa.Config { return kappa.Config{Estimator: st.estimator()} },
	Brief:     []string{"threshold", "window"},
	Sweep:     func(c kappa.Config, v []float64) qos.Family { return qos.KappaFamily(c, v) },
	Point:     func(c kappa.Config) float64 { return cmp.Or(c.Threshold, kappa.DefaultThreshold) },
	Params: append(chenEstimator(func(c *kappa.Config) *chen.EstimatorConfig { return &c.Estimator }),
		floatPlain(Param{Name: "threshold", Symbol: "K", Default: "2.5", Source: srcKappa + "; default 2.5: fdkit", Doc: "threshold K on κ", Field: "Threshold", Sample: "4", MinOpen: true},
			func(c *kappa.Config) *float64 { return &c.Threshold }),
		enum(Param{Name: "contribution", Default: "normal", Source: "fdkit (the paper leaves the function open; step is NFD-E)", Doc: "contribution of a missed heartbeat: normal or step", Field: "Contribution", Sample: "step", Choices: []string{"normal", "step"}},
			func(c *kappa.Config) *kappa.Contribution { return &c.Contribution }),
		durPtr(Param{Name: "min-std", Unit: "duration", Default: "Δ/100", Source: srcFdkit, Doc: "σ floor of the normal contribution; 0: 1 ns", Field: "MinStdDev", Sample: "0s"},
			func(c *kappa.Config) **time.Duration { return &c.MinStdDev }),
		minSamples(func(c *kappa.Config) **int { return &c.MinSamples })),
}

// durations converts qos values in milliseconds to durations, rounded to
// the nanosecond and saturating (detector.RoundNanos) rather than wrapping
// for a huge value.
func durations(v []float64) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = detector.RoundNanos(x * float64(time.Millisecond))
	}
	return out
}

// estimator is the NFD-E estimator for the stream: Δ and n.
func (st Stream) estimator() chen.EstimatorConfig {
	return chen.EstimatorConfig{Interval: st.Interval, WindowSize: st.Window}
}

// sfdForStream is SFD for a stream: SM_1 = Δ, β = Δ/10, the stream's
// targets, and TD measured as the replay measures it. SFD reads an MR
// target of 0 as none: MR = 0 (Targets.NoMistakes) becomes the smallest
// positive rate, which any observed mistake exceeds.
func sfdForStream(st Stream) sfd.Config {
	maxMR := st.Targets.MaxMRPerSecond
	if st.Targets.NoMistakes {
		maxMR = math.SmallestNonzeroFloat64
	}
	return sfd.Config{
		Estimator:     st.estimator(),
		InitialMargin: new(st.Interval),
		Step:          max(st.Interval/10, 1),
		Targets: sfd.Targets{
			MaxTD:                st.Targets.MaxTD,
			MaxMistakesPerSecond: maxMR,
			MinQAP:               st.Targets.MinQAP,
		},
		UseSendTime: st.SendTime,
		OneWayDelay: st.OneWayDelay,
	}
}
