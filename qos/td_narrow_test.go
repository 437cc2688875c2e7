package qos

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A narrow point keeps its τ − A_k in 4 bytes up to 2^32 − 1 and moves to
// 8 bytes at the first row of 2^32 or more, in the middle of a block, with
// every value kept; a point beside it whose values fit stays narrow.
// Each keeps the bitwise or of its values.
func TestFlushNarrowWidens(t *testing.T) {
	p := newThresholdPass(nil, 2, nil, Config{}, 8, nil, true)
	rows := func(vs ...[2]int64) {
		for r, v := range vs {
			p.tdBuf[r], p.tdBuf[tdStride+r] = v[0], v[1] // putTD's columns
		}
		p.tdRows = len(vs)
		p.flushTD()
	}
	rows([2]int64{0, 7}, [2]int64{math.MaxUint32, math.MaxUint32}, [2]int64{5, 0})
	require.NotNil(t, p.pts[0].narrow)
	assert.Equal(t, []uint32{0, math.MaxUint32, 5}, p.pts[0].narrow)
	assert.Nil(t, p.pts[0].td)
	rows([2]int64{1, 1}, [2]int64{1 << 32, 2}, [2]int64{math.MaxInt64, 3}, [2]int64{9, 4})
	assert.Nil(t, p.pts[0].narrow)
	assert.Equal(t, []int64{0, math.MaxUint32, 5, 1, 1 << 32, math.MaxInt64, 9}, p.pts[0].td)
	assert.Equal(t, []uint32{7, math.MaxUint32, 0, 1, 2, 3, 4}, p.pts[1].narrow)
	assert.Nil(t, p.pts[1].td)
	rows([2]int64{3, 5})
	assert.Equal(t, []int64{0, math.MaxUint32, 5, 1, 1 << 32, math.MaxInt64, 9, 3}, p.pts[0].td)
	assert.Equal(t, []uint32{7, math.MaxUint32, 0, 1, 2, 3, 4, 5}, p.pts[1].narrow)
	// vOr bounds each point's greatest value (tdScan's vMax).
	assert.Equal(t, uint64(math.MaxInt64), p.pts[0].vOr)
	assert.Equal(t, uint64(math.MaxUint32), p.pts[1].vOr)
}

// Narrow points share one block of hint values each (narrowPool): a point
// that outgrows its share moves out and leaves its neighbours' values
// alone, and a pass that takes the block back from the pool keeps its
// own values.
func TestNarrowPointsKeepToTheirShare(t *testing.T) {
	fill := func(p *thresholdPass, base int64) {
		for r := range 4 {
			for i := range 3 {
				p.tdBuf[i*tdStride+r] = base + int64(10*i+r)
			}
		}
		p.tdRows = 4
		p.flushTD()
	}
	want := func(base int64, i int) []uint32 {
		var v []uint32
		for r := range 4 {
			v = append(v, uint32(base+int64(10*i+r)))
		}
		return v
	}
	p := newThresholdPass(nil, 3, nil, Config{}, 3, nil, true) // shares of 3, 4 values each
	fill(p, 100)
	for i := range 3 {
		assert.Equal(t, want(100, i), p.pts[i].narrow, "point %d", i)
	}
	p.close()
	assert.Nil(t, p.pts[0].narrow)
	q := newThresholdPass(nil, 3, nil, Config{}, 2, nil, true) // p's block, most likely, in shares of 2
	fill(q, 200)
	for i := range 3 {
		assert.Equal(t, want(200, i), q.pts[i].narrow, "point %d", i)
	}
	q.close()
}

// A pass keeps, as it flushes its rows, each point's τ − A_k at the
// stratified sample's indices (one in each run of tdStratum rows), for
// narrow and widened points alike.
func TestFlushKeepsStratifiedSample(t *testing.T) {
	p := newThresholdPass(nil, 2, nil, Config{}, 200, nil, true)
	val := func(i, k int) int64 {
		if i == 1 && k >= 100 {
			return 1<<32 + int64(k) // point 1 widens at row 100
		}
		return int64(1000*i + k)
	}
	const rows = 150
	for k := 0; k < rows; {
		n := min(tdBlock, rows-k, 50) // blocks of 50: strata across two flushes
		for r := range n {
			for i := range 2 {
				p.tdBuf[i*tdStride+r] = val(i, k+r)
			}
		}
		p.tdRows = n
		p.flushTD()
		k += n
	}
	require.Nil(t, p.pts[1].narrow)
	var want []int
	for j := 0; stratSample(j) < rows; j++ {
		k := stratSample(j)
		require.GreaterOrEqual(t, k, j*tdStratum)
		require.Less(t, k, (j+1)*tdStratum)
		want = append(want, k)
	}
	require.Equal(t, want, p.strata)
	for i := range 2 {
		require.Len(t, p.pts[i].samp, len(want))
		for j, k := range want {
			assert.Equal(t, val(i, k), p.pts[i].samp[j], "point %d, stratum %d", i, j)
		}
	}
}

// narrowWideStream is 1,000 heartbeats 100 ms apart, then 400 that are
// 3.2 s apart (learnt by the relearn rule), with 3 % of them delivered
// twice and, with gap, an hour's silence before heartbeat 1,200: the
// normal φ's τ − A_k passes 2^32 ns (4.29 s) for high thresholds once
// the window holds the slow intervals (μ + σ·z(16) ≈ 3.2 + 8.3 × 0.2 s),
// not for Θ = log10 2 (z = 0: τ − A_k ≈ μ) unless the hour is learnt.
func narrowWideStream(gap bool) []detector.Heartbeat {
	rng := rand.New(rand.NewPCG(112000003, 1))
	var hbs []detector.Heartbeat
	var sent time.Duration
	for i := range 1400 {
		iv, spread := ms(100), float64(ms(5))
		if i >= 1000 {
			iv, spread = ms(3200), float64(ms(150))
		}
		if i == 1200 && gap {
			iv += time.Hour
		}
		sent += iv
		d := max(ms(40)+time.Duration(rng.NormFloat64()*spread), 0)
		hb := detector.Heartbeat{Seq: uint64(i), HasSeq: true, Sent: sent, HasSent: true, Arrival: sent + d}
		hbs = append(hbs, hb)
		if rng.Float64() < 0.03 {
			hbs = append(hbs, hb)
		}
	}
	return hbs
}

// The normal φ's sweep, whose passes keep TD_k narrow, equals a replay
// per point on a stream where some thresholds' τ − A_k pass 2^32 ns in
// the middle of it and others never do, with window 50, with the σ floor
// on and off, and with every threshold in one pass or several (the
// widened points then hold twice their share of leanBudget).
func TestNormalSweepNarrowWidensEqualsReplays(t *testing.T) {
	vals := []float64{16, 8, 3, 1, 0.5, math.Log10(2)}
	budget := leanBudget
	t.Cleanup(func() { leanBudget = budget })
	for _, gap := range []bool{false, true} {
		hbs := narrowWideStream(gap)
		streams := []Stream{{Name: "s", Heartbeats: hbs}}
		for name, ncfg := range map[string]phi.NormalConfig{
			"floor":    {WindowSize: 50},
			"no floor": {WindowSize: 50, MinStdDev: new(time.Duration(0))},
		} {
			f := PhiNormalFamily(ncfg, vals)
			for _, perPass := range []int{len(vals), 2} {
				leanBudget = tdNarrowBytes * len(hbs) * perPass
				for _, cfg := range []Config{{}, {WarmUp: 37, RecordMistakes: true, Intervals: true}} {
					c := requireSameAsPerPoint(t, f, streams, cfg, SharedState, name+": Θ = %g")
					wide := 0
					for _, p := range c.Points {
						assert.Less(t, p.Result.TD.P50, time.Duration(1<<32), "%s, gap %t: Θ = %g narrow at first", name, gap, p.Value)
						if p.Result.TD.Max >= 1<<32 {
							wide++
						}
					}
					switch {
					case gap:
						assert.Equal(t, len(vals), wide, "%s: every threshold widens after the hour", name)
					default:
						// Θ = 16 to 1 reach 14.9, 10.8, 6.9 and 4.4 s; 0.5
						// and log10 2 stay below 3.7 s.
						assert.Equal(t, 4, wide, "%s: Θ = 16, 8, 3, 1 widen", name)
						assert.Less(t, c.Points[len(vals)-1].Result.TD.Max, time.Duration(1<<32), "%s: Θ = log10 2 stays narrow", name)
					}
				}
			}
		}
	}
}

// A warm-up that covers the whole stream leaves nothing evaluated: the
// sweep reports the replays' error, as a replay per point does.
func TestNormalSweepNarrowWarmUpCoversStream(t *testing.T) {
	hbs := narrowWideStream(true)
	f := PhiNormalFamily(phi.NormalConfig{WindowSize: 50}, []float64{16, 1})
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	cfg := Config{WarmUp: len(hbs) + 1}
	fast, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg})
	require.NoError(t, err)
	slow, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg, PerPointOnly: true})
	require.NoError(t, err)
	require.ErrorIs(t, slow[0].Err, ErrNoEvaluation)
	assert.Equal(t, slow[0].Err, fast[0].Err)
}
