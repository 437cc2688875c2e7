package phi_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rateChange feeds d 1,001 heartbeats Δ = 100 ms apart (a full window of
// 1,000 intervals of exactly 100 ms), then slow heartbeats `slow` apart, and
// returns, for each slow heartbeat i = 1..n, whether d suspects the sender at
// 500 ms after it (quiet500[i−1] is the opposite) and whether the next slow
// heartbeat arrives within τ (trusted[i−1]: no suspicion over the whole
// interval that follows heartbeat i).
func rateChange(t *testing.T, d detector.Detector, slow time.Duration, n int) (quiet500, trusted []bool) {
	t.Helper()
	at, seq := time.Duration(0), uint64(0)
	for range 1001 {
		at += 100 * time.Millisecond
		seq++
		d.Observe(detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at})
	}
	for range n {
		at += slow
		seq++
		d.Observe(detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at})
		tau, ok := d.FreshnessPoint()
		require.True(t, ok)
		quiet500 = append(quiet500, !d.Suspected(at+500*time.Millisecond))
		trusted = append(trusted, tau >= at+slow)
	}
	return quiet500, trusted
}

// firstFrom returns the 1-based index of the first true in v after which
// every value is true, or 0 when the last value is false.
func firstFrom(v []bool) int {
	i := len(v)
	for i > 0 && v[i-1] {
		i--
	}
	if i == len(v) {
		return 0
	}
	return i + 1
}

// A sender whose rate changes for good is learnt after a bounded number of
// heartbeats (the relearn rule, phi.DefaultRelearnAfter = K = 10), with each
// model's defaults. Worked by hand (docs/algorithms.md, “φ accrual: normal
// model”, “Not locking out a sender whose rate changed”):
//
//   - Normal (n = 1000, Θ = 8, z = 5.612), 100 ms → 1 s: the first nine slow
//     intervals end after τ = T_last + 105.612 ms and wait; the tenth records
//     all ten (p = 10/1000: μ = 109 ms, σ = 0.9 s·√(p(1−p)) = 89.55 ms, t* =
//     611.5 ms, so no suspicion 500 ms after heartbeat 10 on). The run goes on
//     being recorded while late; a step to any slower rate is trusted once p
//     ≥ 1/(1 + z²) = 0.03078, that is after c* = 31 slow heartbeats (p = 0.031:
//     0.9·(1 − p) = 0.8721 s ≤ z·0.9·√(p(1 − p)) = 0.8754 s; p = 0.030: 0.873 s
//     > 0.8616 s). Without the rule: suspected 500 ms after each of the 1,200.
//   - Cassandra (cap 2 s), 100 ms → 3 s: every slow interval is above the cap;
//     the tenth records ten, the run goes on; t* = 8·ln 10·μ with μ = 0.1 s +
//     2.9 s·c/1000 reaches 3 s at c = 22 (t* = 3.0173 s; c = 21: 2.9639 s).
//   - Akka (pause 3 s, σ_min 100 ms, y(8) = 5.225987), 100 ms → 5 s: t* =
//     3.6226 s; the tenth slow heartbeat records ten: μ = 149 ms, σ = 4.9
//     s·√(0.0099) = 487.5 ms, t* = 0.149 + 3 + 0.4875·5.225987 = 5.697 s ≥ 5 s.
func TestDefaultsLearnALastingRateChange(t *testing.T) {
	t.Run("phi-normal", func(t *testing.T) {
		d, err := phi.NewNormal(phi.NormalConfig{})
		require.NoError(t, err)
		quiet, trusted := rateChange(t, d, time.Second, 1200)
		assert.Equal(t, 10, firstFrom(quiet), "first slow heartbeat from which the sender is trusted 500 ms later, for good")
		assert.Equal(t, 31, firstFrom(trusted), "first slow heartbeat from which the next one arrives within τ, for good")
	})
	t.Run("phi-cassandra", func(t *testing.T) {
		d, err := phi.NewCassandra(phi.CassandraConfig{})
		require.NoError(t, err)
		_, trusted := rateChange(t, d, 3*time.Second, 300)
		assert.Equal(t, 22, firstFrom(trusted))
	})
	t.Run("phi-akka", func(t *testing.T) {
		d, err := phi.NewAkka(phi.AkkaConfig{})
		require.NoError(t, err)
		_, trusted := rateChange(t, d, 5*time.Second, 300)
		assert.Equal(t, 10, firstFrom(trusted))
	})
}

// With the relearn rule off (new(0)), each model keeps the rule of its source
// and locks the sender out: the window never learns the new rate.
func TestRelearnOffLocksOut(t *testing.T) {
	d, err := phi.NewNormal(phi.NormalConfig{RelearnAfter: new(0)})
	require.NoError(t, err)
	quiet, trusted := rateChange(t, d, time.Second, 1200)
	assert.NotContains(t, quiet, true, "suspected 500 ms after every slow heartbeat")
	assert.NotContains(t, trusted, true)
	c, err := phi.NewCassandra(phi.CassandraConfig{RelearnAfter: new(0)})
	require.NoError(t, err)
	_, trusted = rateChange(t, c, 3*time.Second, 300)
	assert.NotContains(t, trusted, true)
	a, err := phi.NewAkka(phi.AkkaConfig{RelearnAfter: new(0)})
	require.NoError(t, err)
	_, trusted = rateChange(t, a, 5*time.Second, 300)
	assert.NotContains(t, trusted, true)
}

// beater returns a function that gives d its next heartbeat, numbered from
// 1, iv after the previous one (the first iv after time zero).
func beater(d interface{ Observe(detector.Heartbeat) }) func(iv time.Duration) {
	at, seq := time.Duration(0), uint64(0)
	return func(iv time.Duration) {
		at += iv
		seq++
		d.Observe(detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at})
	}
}

// The run ends only after K intervals recorded in a row: K − 1 late
// intervals followed by K on time record only the ones on time, however
// often the pattern repeats; K late intervals with K − 1 on time between any
// two record all K at the K-th late one (a rhythm of bursts is a rhythm).
func TestRelearnRunEndsAfterKRecorded(t *testing.T) {
	for _, k := range []int{1, 2, 10} {
		d, err := phi.NewNormal(phi.NormalConfig{WindowSize: 50, RelearnAfter: &k})
		require.NoError(t, err)
		beat := beater(d)
		for range 51 {
			beat(100 * time.Millisecond)
		}
		w := d.Window()
		require.Equal(t, 50, w.Len())
		for range 5 {
			for range k - 1 {
				beat(time.Second) // late: τ is 105.612 ms after T_last
			}
			for range k {
				beat(100 * time.Millisecond)
			}
		}
		assert.Equal(t, 100*time.Millisecond, w.MeanDuration(), "K=%d: no late interval recorded", k)
		for i := range k {
			if i > 0 {
				for range k - 1 {
					beat(100 * time.Millisecond)
				}
			}
			if i < k-1 {
				assert.Equal(t, 100*time.Millisecond, w.MeanDuration(), "K=%d: %d late kept aside", k, i)
			}
			beat(2 * time.Second)
		}
		// The K late intervals are the window's last K; the 100 ms ones
		// recorded between them came first.
		assert.Equal(t, (time.Duration(50-k)*100*time.Millisecond+time.Duration(k)*2*time.Second)/50, w.MeanDuration(), "K=%d: the run of K recorded", k)
	}
}

// RelearnAfter outside [0, window] is refused with an error naming it.
func TestRelearnAfterRange(t *testing.T) {
	_, err := phi.NewNormal(phi.NormalConfig{WindowSize: 5, RelearnAfter: new(6)})
	assert.ErrorContains(t, err, "RelearnAfter 6")
	_, err = phi.NewAkka(phi.AkkaConfig{RelearnAfter: new(-1)})
	assert.ErrorContains(t, err, "RelearnAfter -1")
	_, err = phi.NewCassandra(phi.CassandraConfig{WindowSize: 3, RelearnAfter: new(4)})
	assert.ErrorContains(t, err, "RelearnAfter 4")
	d, err := phi.NewNormal(phi.NormalConfig{WindowSize: 4})
	require.NoError(t, err, "the default is min(K, window)")
	_ = d
}

// Fork copies the run of the relearn rule: a fork taken K − 1 late intervals
// into a run records the run at its next late interval, as the original
// does, and neither sees the other's.
func TestAkkaForkCopiesRelearnRun(t *testing.T) {
	k := 3
	d, err := phi.NewAkka(phi.AkkaConfig{AcceptablePause: new(time.Duration(0)), MinStdDev: new(time.Millisecond), BootstrapInterval: new(100 * time.Millisecond), WindowSize: 20, RelearnAfter: &k})
	require.NoError(t, err)
	at := time.Duration(0)
	beat := func(d *phi.Akka, iv time.Duration) {
		at += iv
		d.Observe(detector.Heartbeat{Arrival: at})
	}
	for range 21 {
		beat(d, 100*time.Millisecond)
	}
	for range k - 1 {
		beat(d, time.Second)
	}
	require.Equal(t, 100*time.Millisecond, d.Window().MeanDuration())
	f, err := d.Fork(4)
	require.NoError(t, err)
	start := at
	beat(d, time.Second)
	want := (17*100*time.Millisecond + 3*time.Second) / 20
	assert.Equal(t, want, d.Window().MeanDuration(), "the original records its run of 3")
	assert.Equal(t, 100*time.Millisecond, f.Window().MeanDuration(), "the fork is untouched")
	at = start
	beat(f, time.Second)
	assert.Equal(t, want, f.Window().MeanDuration(), "the fork records the run it copied")
}
