package monitor_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/twowfd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 2W-FD, Satzger's detector and κ-FD as the monitor's suspicion source: the
// monitor trusts a peer whose heartbeats keep coming, suspects it just
// after the detector's own freshness point once they stop (at High = the
// threshold for the accrual ones, 1 for 2W-FD), and trusts it again when
// heartbeats resume.
func TestTwoWSatzgerKappaAsSuspicionSource(t *testing.T) {
	for name, f := range map[string]monitor.Factory{
		"2w-fd": func() (detector.Detector, error) {
			return twowfd.New(twowfd.Config{Interval: 100 * time.Millisecond, LongWindowSize: 20})
		},
		"satzger": func() (detector.Detector, error) {
			return satzger.New(satzger.Config{WindowSize: 20})
		},
		"kappa": func() (detector.Detector, error) {
			return kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 20}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			clk := &monitor.ManualClock{}
			var got []monitor.Transition
			m, err := monitor.New(monitor.Config{Factory: f, Clock: clk, OnTransition: func(tr monitor.Transition) { got = append(got, tr) }})
			require.NoError(t, err)
			ref, err := f()
			require.NoError(t, err)
			var last time.Duration
			for i := range 60 {
				last = time.Duration(i)*100*time.Millisecond + time.Duration(i%3)*time.Millisecond
				clk.Set(last)
				require.NoError(t, m.Heartbeat("p", monitor.Beat{Seq: uint64(i), HasSeq: true}))
				ref.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: last})
				m.Sweep()
			}
			tau, ok := ref.FreshnessPoint()
			require.True(t, ok)
			st, _ := m.State("p")
			assert.Equal(t, monitor.Trusted, st.Status)
			assert.Equal(t, tau, st.FreshnessPoint)
			assert.Empty(t, got, "no suspicion while heartbeats keep coming")

			clk.Set(tau)
			m.Sweep()
			st, _ = m.State("p")
			assert.Equal(t, monitor.Trusted, st.Status, "trusted up to τ")
			clk.Set(tau + time.Millisecond)
			m.Sweep()
			st, _ = m.State("p")
			assert.Equal(t, monitor.Suspected, st.Status, "suspected after τ")
			require.Len(t, got, 1)
			assert.Equal(t, tau, got[0].At)

			// The sender resumes on its schedule (heartbeats 60 to 69 lost):
			// NFD-E's expected arrivals, which 2W-FD and κ-FD use, stay
			// right across the gap.
			clk.Set(7 * time.Second)
			require.NoError(t, m.Heartbeat("p", monitor.Beat{Seq: 70, HasSeq: true}))
			st, _ = m.State("p")
			assert.Equal(t, monitor.Trusted, st.Status)
		})
	}
}
