package trace

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// accOf returns an Accumulator of records of sender "p" with the given
// sequence numbers.
func accOf(seqs ...uint64) *Accumulator {
	var a Accumulator
	for _, q := range seqs {
		a.Add(Record{Sender: "p", Seq: q, HasSeq: true})
	}
	return &a
}

// Records left out by the input check were received: with AlsoReceived
// they are not lost. Numbers outside [FirstSeq, LastSeq] of the stream, or
// that the stream has too, change nothing.
func TestAccumulatorAlsoReceived(t *testing.T) {
	a := accOf(0, 1, 2, 5, 6, 8, 9) // 3, 4 and 7 missing
	st := a.Stats()
	assert.Equal(t, [4]uint64{3, 2, 2, 10}, [4]uint64{st.Lost, uint64(st.LossBursts), st.LongestBurst, st.Expected})

	a.AlsoReceived(accOf(3, 7, 7, 8, 12, 4_000_000))
	st = a.Stats()
	assert.Equal(t, [4]uint64{1, 1, 1, 10}, [4]uint64{st.Lost, uint64(st.LossBursts), st.LongestBurst, st.Expected})
	assert.InDelta(t, 0.1, st.LossRate, 1e-12)
	assert.Equal(t, uint64(0), st.FirstSeq)
	assert.Equal(t, uint64(9), st.LastSeq)
	assert.Equal(t, 7, st.Records)

	a.AlsoReceived(nil)
	assert.Equal(t, uint64(3), a.Stats().Lost)

	// Across pages of 2^16 numbers: the stream has pages 0 and 3 only,
	// the other records one number in page 1 and one in page 3.
	a = accOf(0, 200_000)
	a.AlsoReceived(accOf(70_000, 199_999))
	st = a.Stats()
	assert.Equal(t, uint64(200_001-2-2), st.Lost)
	assert.Equal(t, 2, st.LossBursts) // 1..69999 and 70001..199998
	assert.Equal(t, uint64(199_998-70_001+1), st.LongestBurst)

	// The other records' numbers near 2^64 within the range count too.
	a = accOf(1<<64-10, 1<<64-1)
	a.AlsoReceived(accOf(1<<64-5, 1<<64-64-1))
	st = a.Stats()
	assert.Equal(t, uint64(10-2-1), st.Lost)
	assert.Equal(t, 2, st.LossBursts)
}
