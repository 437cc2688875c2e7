package docs

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/internal/worked"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/sfd"
	"github.com/fdkit/fdkit/spec"
	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checks recompute the worked examples of docs/algorithms.md (the tables
// marked <!-- check: NAME -->) with fdkit's public API.
var checks = map[string]func(*ex){
	"common-trace":         checkCommonTrace,
	"common-stats":         checkCommonStats,
	"fixed":                checkFixed,
	"jacobson":             checkJacobson,
	"chen":                 checkChen,
	"bertier":              checkBertier,
	"bertier-loss":         checkBertierLoss,
	"phi-z":                checkPhiZ,
	"phi-normal":           checkPhiNormal,
	"phi-floor":            checkPhiFloor,
	"phi-akka":             checkPhiAkka,
	"phi-akka-inverse":     checkPhiAkkaInverse,
	"phi-cassandra":        checkPhiCassandra,
	"phi-cassandra-seed":   checkPhiCassandraSeed,
	"phi-stable":           checkPhiStable,
	"phi-relearn":          checkPhiRelearn,
	"sfd-control":          checkSFDControl,
	"sfd-tau":              checkSFDTau,
	"replay-chen":          checkReplayChen,
	"replay-chen-summary":  checkReplayChenSummary,
	"replay-pause":         checkReplayPause,
	"replay-pause-summary": checkReplayPauseSummary,
	"sweep-fixed":          checkSweepFixed,
	"tune-fixed":           checkTuneFixed,
	"swim-detection":       checkSWIMDetection,
	"twowfd":               checkTwoWFD,
	"satzger":              checkSatzger,
	"satzger-inverse":      checkSatzgerInverse,
	"kappa":                checkKappa,
	"kappa-inverse":        checkKappaInverse,
	"spec-zero":            checkSpecZero,
}

// checkedElsewhere are worked examples computed by unexported code, checked
// by the test of the package named.
var checkedElsewhere = map[string]string{
	"swim-precedence":       "swim (worked_test.go)",
	"swim-retransmit":       "swim (worked_test.go)",
	"lifeguard-lhm":         "swim (worked_test.go)",
	"lifeguard-suspicion":   "swim (worked_test.go)",
	"swim-probe":            "swim (worked_test.go)",
	"swim-stream":           "swim (stream_test.go)",
	"swim-incarnation-jump": "swim (worked_test.go)",
	"swim-replay":           "swim/wire (worked_test.go)",
	"swim-wire":             "swim/wire (worked_test.go)",
	"swim-broadcast-window": "swim (usermsg_test.go)",
}

// TestWorkedExamples checks every worked example of docs/algorithms.md
// against the code, and that every check has its table.
func TestWorkedExamples(t *testing.T) {
	tabs, err := worked.Read("algorithms.md")
	require.NoError(t, err)
	for name, tab := range tabs {
		if _, ok := checkedElsewhere[name]; ok {
			continue
		}
		check, ok := checks[name]
		if !assert.True(t, ok, "docs/algorithms.md line %d: worked example %q has no check in docs/worked_test.go", tab.Line, name) {
			continue
		}
		t.Run(name, func(t *testing.T) { check(&ex{T: t, tab: tab, tabs: tabs}) })
	}
	for name := range checks {
		assert.Contains(t, tabs, name, "check %q has no table in docs/algorithms.md", name)
	}
	for name, where := range checkedElsewhere {
		assert.Contains(t, tabs, name, "check %q (in %s) has no table in docs/algorithms.md", name, where)
	}
}

// ex is one worked example under test.
type ex struct {
	*testing.T
	tab  *worked.Table
	tabs map[string]*worked.Table
}

// cell returns row i's cell in column col.
func (e *ex) cell(i int, col string) string {
	e.Helper()
	c, err := e.tab.Cell(i, col)
	require.NoError(e, err)
	return c
}

// num parses row i's cell in column col.
func (e *ex) num(i int, col string) float64 {
	e.Helper()
	v, _, err := worked.Number(e.cell(i, col))
	require.NoError(e, err, "%s row %d column %q", e.tab.Name, i+1, col)
	return v
}

// eq asserts that row i's printed number in column col is got.
func (e *ex) eq(i int, col string, got float64) {
	e.Helper()
	assert.NoError(e, worked.Compare(e.cell(i, col), got), "%s row %d column %q", e.tab.Name, i+1, col)
}

// eqMS asserts that row i's printed milliseconds in column col are got.
// Durations have nanosecond resolution, and the document prints what the
// code computes: a value printed to the nanosecond must be exact.
func (e *ex) eqMS(i int, col string, got time.Duration) {
	e.Helper()
	e.eq(i, col, toMS(got))
}

func ms(x float64) time.Duration   { return time.Duration(math.Round(x * 1e6)) }
func toMS(d time.Duration) float64 { return float64(d) / 1e6 }

// commonTrace reads the common trace from its table (the document is the
// single source of these numbers), checked by checkCommonTrace.
func commonTrace(e *ex) []detector.Heartbeat {
	e.Helper()
	tab := e.tabs["common-trace"]
	require.NotNil(e, tab)
	sub := &ex{T: e.T, tab: tab, tabs: e.tabs}
	var hbs []detector.Heartbeat
	for i := range tab.Rows {
		hbs = append(hbs, detector.Heartbeat{
			Seq: uint64(sub.num(i, "s_k")), HasSeq: true,
			Sent: ms(sub.num(i, "σ_k")), HasSent: true,
			Arrival: ms(sub.num(i, "A_k")),
		})
	}
	return hbs
}

// without returns hbs without the heartbeat numbered seq.
func without(hbs []detector.Heartbeat, seq uint64) []detector.Heartbeat {
	return slices.DeleteFunc(slices.Clone(hbs), func(h detector.Heartbeat) bool { return h.Seq == seq })
}

func observe(d detector.Detector, hbs []detector.Heartbeat) {
	for _, h := range hbs {
		d.Observe(h)
	}
}

func tau(e *ex, d detector.Detector) time.Duration {
	e.Helper()
	t, ok := d.FreshnessPoint()
	require.True(e, ok)
	return t
}

func checkCommonTrace(e *ex) {
	hbs := commonTrace(e)
	require.Len(e, hbs, 6)
	for i, h := range hbs {
		assert.Equal(e, time.Duration(h.Seq)*100*time.Millisecond, h.Sent, "σ_k = Δ·s_k")
		if i == 0 {
			assert.Equal(e, "–", e.cell(i, "I_k"))
			continue
		}
		e.eqMS(i, "I_k", h.Arrival-hbs[i-1].Arrival)
	}
}

func checkCommonStats(e *ex) {
	hbs := commonTrace(e)
	w, err := detector.NewWindow(len(hbs) - 1)
	require.NoError(e, err)
	for i := 1; i < len(hbs); i++ {
		w.Add(hbs[i].Arrival - hbs[i-1].Arrival)
	}
	for i, row := range e.tab.Rows {
		switch row[0] {
		case "mean μ":
			e.eq(i, "value (ms)", w.Mean()/1e6)
		case "population standard deviation σ":
			e.eq(i, "value (ms)", w.StdDev()/1e6)
		case "sample standard deviation":
			e.eq(i, "value (ms)", math.Sqrt(w.SampleVariance())/1e6)
		default:
			e.Errorf("unknown statistic %q", row[0])
		}
	}
}

func checkFixed(e *ex) {
	yes := map[string]bool{"yes": true, "no": false}
	for i := range e.tab.Rows {
		d, err := detector.NewFixed(detector.FixedConfig{Timeout: new(ms(e.num(i, "T (ms)")))})
		require.NoError(e, err)
		observe(d, commonTrace(e))
		e.eqMS(i, "τ (ms)", tau(e, d))
		for _, at := range []float64{930, 931} {
			col := fmt.Sprintf("suspected at %g ms", at)
			want, ok := yes[e.cell(i, col)]
			require.True(e, ok, col)
			assert.Equal(e, want, d.Suspected(ms(at)), col)
		}
	}
}

func checkJacobson(e *ex) {
	hbs := commonTrace(e)
	for i := range e.tab.Rows {
		k := int(e.num(i, "k"))
		d, err := jacobson.New(jacobson.Config{})
		require.NoError(e, err)
		observe(d, hbs[:k])
		e.eqMS(i, "I_k (ms)", hbs[k-1].Arrival-hbs[k-2].Arrival)
		e.eq(i, "SRTT (ms)", d.Estimator().SRTTNanos()/1e6)
		e.eq(i, "RTTVAR (ms)", d.Estimator().RTTVARNanos()/1e6)
		e.eqMS(i, "TO (ms)", d.Timeout())
		e.eqMS(i, "τ (ms)", tau(e, d))
	}
}

func checkChen(e *ex) {
	for i, row := range e.tab.Rows {
		hbs := commonTrace(e)
		switch row[0] {
		case "all six":
		case "4 lost":
			hbs = without(hbs, 4)
		case "4 lost, no sequence numbers":
			hbs = without(hbs, 4)
			for j := range hbs {
				hbs[j].HasSeq = false
			}
		default:
			e.Fatalf("unknown case %q", row[0])
		}
		d, err := chen.New(chen.Config{
			Estimator:  chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 6},
			Margin:     new(50 * time.Millisecond),
			MinSamples: new(1),
		})
		require.NoError(e, err)
		observe(d, hbs)
		e.eqMS(i, "EA (ms)", d.Estimator().Next())
		e.eqMS(i, "τ (ms)", tau(e, d))
	}
}

func newBertier(e *ex, rule bertier.LossRule) *bertier.Detector {
	d, err := bertier.New(bertier.Config{
		Estimator:  chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 6},
		MinSamples: new(1),
		LossRule:   rule,
	})
	require.NoError(e, err)
	return d
}

func checkBertier(e *ex) {
	hbs := commonTrace(e)
	d := newBertier(e, bertier.ErrorVsReceived)
	d.Observe(hbs[0])
	for i := range e.tab.Rows {
		k := int(e.num(i, "k"))
		require.Equal(e, i+2, k, "rows are heartbeats 2, 3, …")
		d.Observe(hbs[k-1])
		e.eqMS(i, "A_k", hbs[k-1].Arrival)
		e.eqMS(i, "error", d.LastError())
		e.eqMS(i, "delay", d.ErrorFilter().SRTT())
		e.eqMS(i, "var", d.ErrorFilter().RTTVAR())
		e.eqMS(i, "α", d.Margin())
		e.eqMS(i, "EA_{k+1}", d.Estimator().Next())
		e.eqMS(i, "τ_{k+1}", tau(e, d))
	}
}

func checkBertierLoss(e *ex) {
	rules := map[string]bertier.LossRule{"ErrorVsReceived": bertier.ErrorVsReceived, "ErrorVsNext": bertier.ErrorVsNext}
	for i, row := range e.tab.Rows {
		rule, ok := rules[row[0]]
		require.True(e, ok, row[0])
		d := newBertier(e, rule)
		observe(d, without(commonTrace(e), 4)[:4]) // 1, 2, 3, 5
		e.eqMS(i, "error at heartbeat 5 (ms)", d.LastError())
		e.eqMS(i, "var after it (ms)", d.ErrorFilter().RTTVAR())
		e.eqMS(i, "τ_6 (ms)", tau(e, d))
	}
}

func checkPhiZ(e *ex) {
	for i := range e.tab.Rows {
		e.eq(i, "z(Θ)", phi.ZOfLevel(e.num(i, "Θ")))
	}
}

// levels checks the "elapsed (ms)" / "φ" rows of an accrual detector that
// observed the common trace.
func levels(e *ex, d detector.Accrual) {
	hbs := commonTrace(e)
	observe(d, hbs)
	last := hbs[len(hbs)-1].Arrival
	for i := range e.tab.Rows {
		e.eq(i, "φ", d.Level(last+ms(e.num(i, "elapsed (ms)"))))
	}
}

func checkPhiNormal(e *ex) {
	d, err := phi.NewNormal(phi.NormalConfig{WindowSize: 5})
	require.NoError(e, err)
	levels(e, d)
}

func checkPhiFloor(e *ex) {
	for i := range e.tab.Rows {
		d, err := phi.NewNormal(phi.NormalConfig{WindowSize: 1000})
		require.NoError(e, err)
		at := time.Duration(0)
		d.Observe(detector.Heartbeat{Arrival: at})
		for _, f := range strings.Split(e.cell(i, "intervals"), ",") {
			iv, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			require.NoError(e, err)
			at += ms(iv)
			d.Observe(detector.Heartbeat{Arrival: at})
		}
		tstar, ok := d.ElapsedFor(8)
		require.True(e, ok)
		e.eqMS(i, "t*(8) (ms)", tstar)
		e.eq(i, "σ_eff (ms)", (toMS(tstar)-toMS(d.Mean()))/phi.ZOfLevel(8))
	}
}

func newAkkaCommon(e *ex) *phi.Akka {
	d, err := phi.NewAkka(phi.AkkaConfig{
		WindowSize:      5,
		MinStdDev:       new(time.Millisecond),
		AcceptablePause: new(time.Duration(0)),
	})
	require.NoError(e, err)
	return d
}

func checkPhiAkka(e *ex) { levels(e, newAkkaCommon(e)) }

func checkPhiAkkaInverse(e *ex) {
	for i, row := range e.tab.Rows {
		e.eq(i, "y(8)", phi.AkkaYOfLevel(8))
		var d *phi.Akka
		switch row[0] {
		case "common trace, pause 0":
			d = newAkkaCommon(e)
			observe(d, commonTrace(e))
		case "Akka defaults, after the first heartbeat":
			var err error
			d, err = phi.NewAkka(phi.AkkaConfig{})
			require.NoError(e, err)
			d.Observe(detector.Heartbeat{Arrival: time.Second})
		default:
			e.Fatalf("unknown setting %q", row[0])
		}
		tstar, ok := d.ElapsedFor(8)
		require.True(e, ok)
		e.eqMS(i, "t* (ms)", tstar)
	}
}

func checkPhiCassandra(e *ex) {
	d, err := phi.NewCassandra(phi.CassandraConfig{WindowSize: 5})
	require.NoError(e, err)
	levels(e, d)
}

func checkPhiCassandraSeed(e *ex) {
	hbs := commonTrace(e)
	for i := range e.tab.Rows {
		ivs := strings.Split(e.cell(i, "intervals in the window"), ",")
		cfg := phi.CassandraConfig{}
		n := len(ivs) // the seed interval plus n − 1 real ones
		if strings.TrimSpace(ivs[0]) != "2000" {
			cfg.WindowSize = len(ivs) // the seed has been pushed out
			n = len(ivs) + 1
		}
		d, err := phi.NewCassandra(cfg)
		require.NoError(e, err)
		observe(d, hbs[:n])
		e.eqMS(i, "μ (ms)", d.Mean())
		tstar, ok := d.ElapsedFor(8)
		require.True(e, ok)
		e.eqMS(i, "t*(8) (ms)", tstar)
	}
}

// checkPhiRelearn replays each row's step with the model's defaults: 1,001
// heartbeats 100 ms apart, then slow ones for good.
func checkPhiRelearn(e *ex) {
	for i := range e.tab.Rows {
		var (
			d   detector.Accrual
			err error
		)
		switch e.cell(i, "model") {
		case "normal":
			d, err = phi.NewNormal(phi.NormalConfig{})
		case "cassandra":
			d, err = phi.NewCassandra(phi.CassandraConfig{})
		case "akka":
			d, err = phi.NewAkka(phi.AkkaConfig{})
		default:
			e.Fatalf("unknown model %q", e.cell(i, "model"))
		}
		require.NoError(e, err)
		slow, err := time.ParseDuration(strings.ReplaceAll(e.cell(i, "slow interval"), " ", ""))
		require.NoError(e, err)
		at := time.Duration(0)
		for range 1001 {
			at += 100 * time.Millisecond
			d.Observe(detector.Heartbeat{Arrival: at})
		}
		tstar := func() time.Duration {
			t, ok := d.ElapsedFor(d.Threshold())
			require.True(e, ok)
			return t
		}
		e.eqMS(i, "t* before (ms)", tstar())
		from := 0
		for k := 1; k <= 300; k++ {
			at += slow
			d.Observe(detector.Heartbeat{Arrival: at})
			if k == phi.DefaultRelearnAfter {
				e.eqMS(i, "K-th slow recorded: t* (ms)", tstar())
			}
			switch {
			case tstar() < slow:
				from = 0
			case from == 0:
				from = k
			}
		}
		e.eq(i, "trusted from slow heartbeat", float64(from))
	}
}

func checkPhiStable(e *ex) {
	for i := range e.tab.Rows {
		e.eq(i, "φ = −log10 Q(z)", phi.LevelOfZ(e.num(i, "z")))
	}
}

func checkSFDControl(e *ex) {
	targets := sfd.Targets{MaxTD: 200 * time.Millisecond, MaxMistakesPerSecond: 1.0 / 60, MinQAP: 0.999}
	sm := 20 * time.Millisecond
	for i := range e.tab.Rows {
		q := sfd.QoS{TD: ms(e.num(i, "TD (ms)")), MistakesPerSecond: e.num(i, "MR (per minute)") / 60, QAP: e.num(i, "QAP")}
		r := sfd.Control(q, targets)
		e.eq(i, "rule", float64(r))
		sm = sfd.Adjust(sm, r, 10*time.Millisecond, 0)
		e.eqMS(i, "SM after (ms)", sm)
	}
}

func checkSFDTau(e *ex) {
	for i := range e.tab.Rows {
		d, err := sfd.New(sfd.Config{
			Estimator:     chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 6},
			MinSamples:    new(1),
			InitialMargin: new(ms(e.num(i, "SM (ms)"))),
		})
		require.NoError(e, err)
		observe(d, commonTrace(e))
		e.eqMS(i, "τ_7 (ms)", tau(e, d))
	}
}

func checkSWIMDetection(e *ex) {
	var spread []float64
	for i := range e.tab.Rows {
		n := int(e.num(i, "n"))
		q := math.Pow(1-1/float64(n-1), float64(n-1))
		e.eq(i, "(1 − 1/(n−1))^(n−1)", q)
		e.eq(i, "p", 1-q)
		e.eq(i, "T'/p (periods)", 1/(1-q))
		res, err := sim.Detection(n, 40, 7, swim.Config{Mode: swim.ModeSWIM, ShuffledProbes: true})
		require.NoError(e, err)
		require.Zero(e, res.Undetected)
		assert.InDelta(e, 1/(1-q), res.FirstDetection, 0.35, "n = %d: simulated first detection", n)
		spread = append(spread, res.Dissemination)
	}
	assert.True(e, slices.IsSorted(spread), "dissemination grows with n: %v", spread)
}

// checkSpecZero builds each row's detector from its textual form
// (docs/algorithms.md, “Detector specifications and the zero rule”).
func checkSpecZero(e *ex) {
	for i := range e.tab.Rows {
		sp, err := spec.Parse(e.cell(i, "spec"))
		require.NoError(e, err)
		d, err := sp.New()
		require.NoError(e, err)
		for _, f := range strings.Split(e.cell(i, "heartbeats at (ms)"), ",") {
			v, _, err := worked.Number(strings.TrimSpace(f))
			require.NoError(e, err)
			d.Observe(detector.Heartbeat{Arrival: ms(v)})
		}
		e.eqMS(i, "τ (ms)", tau(e, d))
	}
}
