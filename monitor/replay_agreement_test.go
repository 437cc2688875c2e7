package monitor_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace/tracetest"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/sfd"
	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/traces"
	"github.com/fdkit/fdkit/twowfd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fed the arrivals of a recorded trace, the monitor (default High and Low)
// reports exactly the mistakes that qos replay finds (docs/algorithms.md,
// “Replaying a trace”), for each of fdkit's detectors: same count, same start
// and end instants to the nanosecond. No sweep runs, so every suspicion is
// found by the next heartbeat and reported with the instant it took effect.
func TestMonitorAgreesWithReplay(t *testing.T) {
	recs, _, err := traces.ReadAll(traces.Default)
	require.NoError(t, err)
	for name, n := range agreeWithReplay(t, recs) {
		assert.Positive(t, n, "%s makes no mistake on the trace, so agreement would hold vacuously", name)
	}
}

// The same on the real LIP6 excerpt (../shared/traces), sender by sender.
func TestMonitorAgreesWithReplayLIP6(t *testing.T) {
	path := tracetest.Shared(t, "planetlab-lip6/recv_node1_excerpt.txt")
	recs, err := trace.ReadFile(path, trace.ReaderConfig{})
	require.NoError(t, err)
	for _, s := range trace.Split(recs) {
		t.Run("sender-"+s.Sender, func(t *testing.T) { agreeWithReplay(t, s.Records) })
	}
}

// agreeWithReplay runs the comparison for each detector and returns the
// number of mistakes each made. The φ detectors run at thresholds low enough
// (and Akka without its 3 s acceptable pause) to make mistakes on these
// traces: at their defaults they make none, and the comparison would be
// empty.
func agreeWithReplay(t *testing.T, recs []trace.Record) map[string]int {
	hbs := make([]detector.Heartbeat, len(recs))
	for i, r := range recs {
		hbs[i] = r.Heartbeat()
	}
	factories := map[string]monitor.Factory{
		"fixed-300ms": func() (detector.Detector, error) {
			return detector.NewFixed(detector.FixedConfig{Timeout: new(300 * time.Millisecond)})
		},
		"jacobson": func() (detector.Detector, error) { return jacobson.New(jacobson.Config{}) },
		"chen":     func() (detector.Detector, error) { return chen.New(chen.Config{Margin: new(30 * time.Millisecond)}) },
		"bertier":  func() (detector.Detector, error) { return bertier.New(bertier.Config{}) },
		"sfd":      func() (detector.Detector, error) { return sfd.New(sfd.Config{}) },
		"2w-fd":    func() (detector.Detector, error) { return twowfd.New(twowfd.Config{}) },
		"satzger":  func() (detector.Detector, error) { return satzger.New(satzger.Config{}) },
		"kappa":    func() (detector.Detector, error) { return kappa.New(kappa.Config{}) },
		"phi": func() (detector.Detector, error) {
			return phi.NewNormal(phi.NormalConfig{WindowSize: 100, Threshold: 2})
		},
		"akka": func() (detector.Detector, error) {
			return phi.NewAkka(phi.AkkaConfig{Threshold: 2, AcceptablePause: new(time.Duration(0)), MinStdDev: new(time.Millisecond)})
		},
		"cassandra": func() (detector.Detector, error) {
			return phi.NewCassandra(phi.CassandraConfig{Threshold: 1, WindowSize: 100, BootstrapInterval: new(2 * 50 * time.Millisecond), MaxInterval: new(2 * 50 * time.Millisecond)})
		},
	}
	mistakes := make(map[string]int)
	for name, f := range factories {
		t.Run(name, func(t *testing.T) {
			det, err := f()
			require.NoError(t, err)
			res, err := qos.ReplaySlice(det, hbs, qos.Config{RecordMistakes: true})
			require.NoError(t, err)

			clk := &monitor.ManualClock{}
			rec := &recorder{}
			m, err := monitor.New(monitor.Config{Factory: f, Clock: clk, OnTransition: rec.add})
			require.NoError(t, err)
			for _, r := range recs {
				clk.Set(r.Arrival)
				require.NoError(t, m.HeartbeatAt("p", monitor.Beat{Seq: r.Seq, HasSeq: r.HasSeq, Sent: r.Sent, HasSent: r.HasSent}, r.Arrival))
			}
			var got []qos.Interval
			ts := rec.all()
			for i, tr := range ts {
				if tr.New != monitor.Suspected || tr.At < res.Start || tr.At > res.End {
					continue
				}
				iv := qos.Interval{Start: tr.At, End: res.End}
				if i+1 < len(ts) {
					iv.End = ts[i+1].At
				}
				got = append(got, iv)
			}
			assert.Equal(t, res.Mistakes, len(got))
			assert.Equal(t, res.MistakeIntervals, got)
			t.Logf("%d heartbeats, %d mistakes", len(recs), res.Mistakes)
			mistakes[name] = res.Mistakes
		})
	}
	return mistakes
}
