package trace

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atk26's N6: an outage near the end without send times. steadyStream's
// 0 to 199 (Δ = 100 ms), 100 heartbeats lost in a 10 s outage, then 300
// to 305 arriving on time; and 0 to 199, 5000 lost, then 5200 to 5202.
// The records after the outage, no more than k = 8, were left out as "+100
// away from what its neighbours predict": the Hampel rule's lasting
// shift needs more than k records, and the send-time rule that puts a
// record ahead of the front by what the send times say in order had no
// send times. The outage vanished from the replay (fixed: 0 mistakes,
// loss 0 %). Their arrivals jumped with their numbers: ahead of the front
// by no more than the arrival gap over the median arrival step, give or
// take R, they are in order now, as with send times. A number wrong in
// place (190 in 150's place, 41 ahead of the front with its arrival one
// step after it) is still left out, with and without send times.
func TestSanityOutageNearEndWithoutSendTimes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		gap, after int
	}{{"gap100", 100, 6}, {"gap5000", 5000, 3}} {
		for _, sent := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/sent=%v", tc.name, sent), func(t *testing.T) {
				all := steadyStream("p", 200+tc.gap+tc.after)
				recs := append(slices.Clone(all[:200]), all[200+tc.gap:]...)
				require.Len(t, recs, 200+tc.after)
				if !sent {
					recs = noSent(recs)
				}
				got := checkRecords(recs)
				require.Len(t, got, 200+tc.after)
				assert.Empty(t, findings(got))
				for _, c := range got {
					assert.Equal(t, 1, c.Epoch)
				}
			})
		}
	}
	for _, sent := range []bool{true, false} {
		recs := steadyStream("p", 300)
		recs[150].Seq = 190
		if !sent {
			recs = noSent(recs)
		}
		fs := findings(checkRecords(recs))
		require.Len(t, fs, 1, "sent=%v: %v", sent, fs)
		assert.Equal(t, 151, fs[0].Line)
		assert.Equal(t, FindingSeq, fs[0].Kind)
		assert.True(t, fs[0].Excluded)
	}
}
